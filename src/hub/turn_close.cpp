// TurnClose: what a turn still lacks to be whole, and the rows that close it.
#include "ids.hpp"

#include <sluice/core/clock.hpp>
#include <sluice/hub/turn_close.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cstdint>

namespace sluice::hub {

namespace json = boost::json;

void TurnClose::start() noexcept {
    unanswered_.clear();
    opened_ = std::chrono::system_clock::now();
    newest_.reset();
    live_ = true;
    seen_ = true;
    result_ = false;
}

void TurnClose::observe(const Frame& f) {
    if (f.facts().subagent) {
        return;
    }
    seen_ = true;
    // The row is read only where it is needed: a turn read back from a transcript takes its
    // times from the frames' timestamps (a started one runs until now, so not there), and a
    // tool call its ids. A compact frame (a window's) is read from its JSON into a value that
    // goes with this call: `f.row()` would keep the object beside the JSON for the frame's life,
    // two to three times the frame's wire bytes in every window (bench/window_rss.py).
    json::value parsed;
    const auto row = [&f, &parsed]() -> const json::object* {
        if (f.keeps_row()) {
            return &f.row();
        }
        if (!parsed.is_object()) {
            boost::system::error_code ec;
            parsed = json::parse(f.json(), ec);
        }
        return parsed.if_object(); // always one: the JSON was serialized from an object
    };
    if (!live_) {
        const auto* r = row();
        const auto* ts = r != nullptr ? r->if_contains("timestamp") : nullptr;
        if (ts != nullptr && ts->is_string()) {
            if (const auto at = parse_iso8601_utc(ts->get_string())) {
                if (!opened_) {
                    opened_ = at;
                }
                newest_ = at;
            }
        }
    }
    if (f.type() == "result") {
        result_ = true;
        return;
    }
    for (const auto& id : f.facts().results_for) {
        std::erase(unanswered_, id);
    }
    if (!f.facts().tool_call) {
        return;
    }
    const auto* r = row();
    if (r == nullptr) {
        return;
    }
    const auto* msg = r->if_contains("message");
    const auto* content =
        msg != nullptr && msg->is_object() ? msg->get_object().if_contains("content") : nullptr;
    if (content == nullptr || !content->is_array()) {
        return;
    }
    for (const auto& b : content->get_array()) {
        const auto* o = b.if_object();
        if (o == nullptr) {
            continue;
        }
        const auto* type = o->if_contains("type");
        const auto* id = o->if_contains("id");
        if (type != nullptr && type->is_string() && type->get_string() == "tool_use"
            && id != nullptr && id->is_string()) {
            unanswered_.emplace_back(id->get_string());
        }
    }
}

std::vector<json::object> TurnClose::closing_rows(
    std::string_view tool_text, std::string_view result_text, std::string_view session_id) const {
    std::vector<json::object> rows;
    if (!open()) {
        return rows;
    }
    for (const auto& id : unanswered_) {
        json::object block{
            {"type", "tool_result"},
            {"tool_use_id", id},
            {"content", tool_text},
            {"is_error", true}};
        json::object row;
        row["type"] = "user";
        row["message"] = json::object{{"role", "user"}, {"content", json::array{std::move(block)}}};
        row["parent_tool_use_id"] = nullptr;
        row["session_id"] = session_id;
        row["uuid"] = new_id("u");
        row["timestamp"] = iso_now();
        rows.push_back(std::move(row));
    }
    json::object result;
    result["type"] = "result";
    result["subtype"] = "error_during_execution";
    result["is_error"] = true;
    if (opened_) {
        // A turn run here ended now; one read back from a transcript (the hub died) ended at
        // its newest frame, as far as anyone can tell.
        const auto end = live_ ? std::chrono::system_clock::now() : newest_.value_or(*opened_);
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(end - *opened_);
        result["duration_ms"] = std::max<std::int64_t>(0, ms.count());
    }
    result["result"] = result_text;
    result["errors"] = json::array{json::string(result_text)};
    result["session_id"] = session_id;
    result["uuid"] = new_id("u");
    rows.push_back(std::move(result));
    return rows;
}

} // namespace sluice::hub
