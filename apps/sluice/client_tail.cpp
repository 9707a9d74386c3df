// `sluice tail`: a seat's frames as they land, following across hub restarts — readable on a
// terminal (as `send` prints a turn; with --previews the answer as it streams), JSON lines
// otherwise or with --json.
#include "client.hpp"
#include "turn_printer.hpp"

#include <boost/json.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>

namespace sluice::app::client {

namespace {

// A user row's typed prompt ("" for tool results, envelopes and notes).
std::string prompt_of(const json::object& row) {
    const auto* msg = row.if_contains("message");
    const auto* c =
        msg != nullptr && msg->is_object() ? msg->as_object().if_contains("content") : nullptr;
    std::string text;
    if (c != nullptr && c->is_string()) {
        text = std::string(c->as_string());
    } else if (c != nullptr && c->is_array()) {
        for (const auto& b : c->as_array()) {
            if (b.is_object() && b.as_object().contains("type") && b.at("type") == "tool_result") {
                return {};
            }
            if (b.is_object() && b.as_object().contains("text") && b.at("text").is_string()) {
                text += std::string(b.at("text").as_string());
            }
        }
    }
    return text.empty() || text[0] == '<' || text[0] == '[' ? std::string() : text;
}

// What `tail` shows a person: each row ("> prompt", the answer, tool calls and results, the
// turn's end, permission prompts with the command that answers them) and, with --previews, the
// answer as it streams (its text previews, a lost stretch marked), the frame then adding only
// what the previews missed, as `send` does.
class ReadableTail {
public:
    explicit ReadableTail(const std::string& seat)
        : seat_(seat) {}

    void row(const json::value& row) {
        const auto& ro = row.as_object();
        const auto* type = ro.if_contains("type");
        if (type == nullptr || !type->is_string()) {
            return;
        }
        const auto* msg = ro.if_contains("message");
        const auto* content =
            msg != nullptr && msg->is_object() ? msg->as_object().if_contains("content") : nullptr;
        if (*type == "user") {
            if (const auto prompt = prompt_of(ro); !prompt.empty()) {
                p_.line("\n> " + prompt);
            } else if (content != nullptr && content->is_array()) {
                p_.tool_results(content->as_array());
            }
        } else if (*type == "assistant" && content != nullptr && content->is_array()) {
            for (const auto& b : content->as_array()) {
                if (b.is_object() && b.as_object().contains("type") && b.at("type") == "text"
                    && b.at("text").is_string()) {
                    answer(std::string(b.at("text").as_string()));
                }
            }
            p_.assistant_blocks(content->as_array());
        } else if (*type == "result") {
            const auto* sub = ro.if_contains("subtype");
            const bool ok = sub != nullptr && *sub == "success";
            const auto* why = ro.if_contains("result");
            p_.line(
                ok ? std::string("— turn ended")
                   : "— turn ended: "
                         + (why != nullptr && why->is_string() ? std::string(why->as_string())
                                                               : std::string("not a success")));
        } else if (*type == "system") {
            system_row(ro);
        }
        streamed_.clear(); // the next message's previews start afresh
    }

    // --previews: a `preview`, `gap` or `turn` event.
    void event(const std::string& type, const json::value& v) {
        const auto& o = v.as_object();
        if (type == "preview") {
            const auto* kind = o.if_contains("kind");
            const auto* delta = o.if_contains("delta");
            if (kind != nullptr && *kind == "text" && delta != nullptr && delta->is_string()) {
                const std::string d(delta->get_string());
                p_.text(d);
                streamed_ += d;
            }
        } else if (type == "gap") {
            p_.line(
                "[… " + std::to_string(o.at("dropped_bytes").to_number<std::uint64_t>())
                + " bytes of preview lost; the frame follows]");
            lost_ = true;
        } else if (type == "turn") {
            const auto* state = o.if_contains("state");
            if (state != nullptr && *state == "started") {
                p_.line(
                    "— turn " + std::to_string(o.at("turn").to_number<std::uint64_t>())
                    + " started");
            }
        }
    }

private:
    // An assistant text block: whole, or what the previews did not show of it.
    void answer(const std::string& text) {
        if (!streamed_.empty() && !lost_ && text.starts_with(streamed_)) {
            p_.text(text.substr(streamed_.size()));
            p_.text(p_.at_line_start ? "" : "\n");
        } else {
            p_.line(text);
        }
        streamed_.clear();
        lost_ = false;
    }

    void system_row(const json::object& ro) {
        const auto* sub = ro.if_contains("subtype");
        if (sub != nullptr && *sub == "permission_request") {
            const auto* id = ro.if_contains("request_id");
            const std::string rid =
                id != nullptr && id->is_string() ? std::string(id->as_string()) : "";
            const auto* tool = ro.if_contains("tool_name");
            p_.line(
                "permission asked"
                + (tool != nullptr && tool->is_string()
                       ? " (" + std::string(tool->as_string()) + ")"
                       : std::string())
                + ": sluice approve " + seat_ + " " + rid + " (or sluice deny " + seat_ + " " + rid
                + ")");
        } else if (sub != nullptr && *sub == "permission_resolved") {
            const auto* b = ro.if_contains("behavior");
            const auto* by = ro.if_contains("by");
            p_.line(
                "permission "
                + (b != nullptr && b->is_string() ? std::string(b->as_string()) : "answered")
                + (by != nullptr && by->is_string() ? " by " + std::string(by->as_string())
                                                    : std::string()));
        } else if (sub != nullptr && *sub == "conversation_reset") {
            p_.line("— conversation reset: a new conversation starts here");
        }
    }

    const std::string& seat_;
    TurnPrinter p_;
    std::string streamed_; // preview text of the assistant message being written
    bool lost_{false};     // a gap since: the frame's text is shown whole
};

} // namespace

int cmd_tail(const ClientOptions& o, const std::string& seat, bool previews, bool full, bool rows) {
    // A person at a terminal reads turns; a pipe or --json gets the rows.
    const bool readable = !rows && ::isatty(STDOUT_FILENO) == 1;
    ReadableTail view(seat);
    const auto show = [&](const json::value& row) {
        if (readable) {
            view.row(row);
        } else {
            std::printf("%s\n", json::serialize(row).c_str());
        }
    };
    std::atomic<bool> stop{false};
    bool failed = false;
    const bool followed = follow(
        o,
        seat,
        [&](const sse::Event& e) {
            if (e.type == "frame") {
                auto v = json::parse(e.data);
                const auto seq = v.at("seq").to_number<std::uint64_t>();
                show(shown_row(o, seat, epoch_of(e.id), seq, v.at("row"), full, failed));
            } else if (e.type == "connected") {
                auto v = json::parse(e.data);
                auto seq = v.at("window").at("first").to_number<std::uint64_t>();
                const std::string epoch(v.at("epoch").as_string());
                for (const auto& f : v.at("window").at("frames").as_array()) {
                    show(shown_row(o, seat, epoch, seq++, f, full, failed));
                }
            } else if (previews && (e.type == "preview" || e.type == "gap" || e.type == "turn")) {
                if (readable) {
                    view.event(e.type, json::parse(e.data));
                } else {
                    std::printf("{\"event\":\"%s\",\"data\":%s}\n", e.type.c_str(), e.data.c_str());
                }
            }
            std::fflush(stdout);
            return true;
        },
        stop);
    return followed && !failed ? 0 : 1;
}

} // namespace sluice::app::client
