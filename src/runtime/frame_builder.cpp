// FrameBuilder: a turn's semantic events → Claude Code stream-json rows; rows → provider history.
#include <sluice/runtime/agents/stream_json.hpp>
#include <sluice/runtime/frame_builder.hpp>
#include <sluice/runtime/runtime.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <random>

namespace sluice::runtime {

namespace json = boost::json;

namespace {

enum PreviewKind : int { kind_text = 0, kind_thinking = 1, kind_tool = 2 };

} // namespace

std::string make_uuid() {
    thread_local std::mt19937_64 rng{[] {
        std::random_device rd;
        return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    }()};
    const std::uint64_t hi = (rng() & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;
    const std::uint64_t lo = (rng() & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;
    std::array<char, 37> buf{};
    std::snprintf(
        buf.data(),
        buf.size(),
        "%08x-%04x-%04x-%04x-%012llx",
        static_cast<unsigned>(hi >> 32),
        static_cast<unsigned>((hi >> 16) & 0xFFFF),
        static_cast<unsigned>(hi & 0xFFFF),
        static_cast<unsigned>(lo >> 48),
        static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
    return {buf.data(), 36};
}

FrameBuilder::FrameBuilder(std::string session_id, std::size_t history_base, std::string model)
    : session_id_(std::move(session_id))
    , seen_(history_base)
    , model_(std::move(model))
    , started_(std::chrono::steady_clock::now()) {
}

json::object FrameBuilder::envelope(std::string_view type) {
    json::object row;
    row["type"] = type;
    return row;
}

std::vector<json::object> FrameBuilder::on_event(const StreamEvent& ev) {
    std::vector<json::object> out;
    if (finished_) {
        return out;
    }
    if (const auto* h = std::get_if<session::MessageHistory>(&ev)) {
        rows_from_history(*h, out);
        preview_any_ = false;
    } else if (const auto* r = std::get_if<llm::ToolResult>(&ev)) {
        if (std::find(emitted_results_.begin(), emitted_results_.end(), r->tool_id)
            == emitted_results_.end()) {
            emitted_results_.push_back(r->tool_id);
            out.push_back(tool_result_row(r->tool_id, json::string(r->result), r->is_error));
        }
    } else if (const auto* n = std::get_if<session::Notice>(&ev)) {
        auto row = envelope("system");
        row["subtype"] = "notice";
        row["text"] = n->text;
        row["session_id"] = session_id_;
        row["uuid"] = make_uuid();
        out.push_back(std::move(row));
    } else if (const auto* u = std::get_if<session::Usage>(&ev)) {
        usage_ = *u;
    } else if (const auto* e = std::get_if<session::Error>(&ev)) {
        error_ = *e;
    } else if (std::holds_alternative<session::Done>(ev)) {
        out.push_back(result_row());
        finished_ = true;
    }
    return out;
}

void FrameBuilder::rows_from_history(
    const session::MessageHistory& h, std::vector<json::object>& out) {
    if (!h.messages) {
        return;
    }
    const auto& msgs = *h.messages;
    for (std::size_t i = seen_; i < msgs.size(); ++i) {
        const auto* o = msgs[i] ? msgs[i]->if_object() : nullptr;
        if (o == nullptr) {
            continue;
        }
        const auto role = str_field(*o, "role");
        const auto* content = o->if_contains("content");
        if (role == "assistant") {
            ++responses_;
            if (content != nullptr && content->is_array()) {
                std::string text;
                for (const auto& b : content->get_array()) {
                    const auto* bo = b.if_object();
                    if (bo != nullptr && str_field(*bo, "type") == "text") {
                        text.append(str_field(*bo, "text"));
                    }
                }
                if (!text.empty()) {
                    last_text_ = std::move(text);
                }
            }
            out.push_back(assistant_row(*msgs[i]));
        } else if (role == "user" && content != nullptr && content->is_array()) {
            for (const auto& b : content->get_array()) {
                const auto* bo = b.if_object();
                if (bo == nullptr || str_field(*bo, "type") != "tool_result") {
                    continue;
                }
                std::string id(str_field(*bo, "tool_use_id"));
                if (std::find(emitted_results_.begin(), emitted_results_.end(), id)
                    != emitted_results_.end()) {
                    continue;
                }
                emitted_results_.push_back(id);
                const auto* c = bo->if_contains("content");
                const auto* err = bo->if_contains("is_error");
                out.push_back(tool_result_row(
                    std::move(id),
                    c != nullptr ? *c : json::value(""),
                    err != nullptr && err->is_bool() && err->get_bool()));
            }
        }
    }
    seen_ = std::max(seen_, msgs.size());
}

json::object FrameBuilder::assistant_row(const json::value& message) {
    const auto& m = message.as_object();
    json::object msg;
    auto id = str_field(m, "id");
    msg["id"] =
        id.empty() ? "msg_sluice_" + std::to_string(++message_seq_) + "_" + make_uuid().substr(0, 8)
                   : std::string(id);
    msg["type"] = "message";
    msg["role"] = "assistant";
    auto model = str_field(m, "model");
    msg["model"] = model.empty() ? model_ : std::string(model);
    const auto* content = m.if_contains("content");
    msg["content"] = content != nullptr ? *content : json::array{};
    const auto* stop = m.if_contains("stop_reason");
    msg["stop_reason"] = stop != nullptr ? *stop : nullptr;
    msg["stop_sequence"] = nullptr;
    const auto* usage = m.if_contains("usage");
    msg["usage"] = usage != nullptr ? *usage : json::object{};
    auto row = envelope("assistant");
    row["message"] = std::move(msg);
    row["parent_tool_use_id"] = nullptr;
    row["session_id"] = session_id_;
    row["uuid"] = make_uuid();
    if (const auto* cut = m.if_contains("interrupted");
        cut != nullptr && cut->is_bool() && cut->get_bool()) {
        row["interrupted"] = true; // stopped mid-answer: the text as far as it streamed
    }
    return row;
}

json::object
FrameBuilder::tool_result_row(std::string tool_use_id, json::value content, bool is_error) {
    auto row = envelope("user");
    row["message"] = json::object{
        {"role", "user"},
        {"content",
         json::array{json::object{
             {"type", "tool_result"},
             {"tool_use_id", std::move(tool_use_id)},
             {"content", std::move(content)},
             {"is_error", is_error}}}}};
    row["parent_tool_use_id"] = nullptr;
    row["session_id"] = session_id_;
    row["uuid"] = make_uuid();
    return row;
}

json::object FrameBuilder::result_row() {
    auto row = envelope("result");
    const bool is_error = error_.has_value();
    const bool over_budget = is_error && error_->outcome == session::Outcome::over_budget;
    // Claude Code's subtype for a turn its budget ended (and its terminal_reason, below).
    row["subtype"] = over_budget ? "error_max_budget_usd"
                     : is_error  ? "error_during_execution"
                                 : "success";
    row["is_error"] = is_error;
    row["duration_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - started_)
                             .count();
    row["num_turns"] = responses_;
    row["result"] = is_error ? error_->message : last_text_;
    if (is_error) {
        const char* outcome = error_->outcome == session::Outcome::cancelled   ? "cancelled"
                              : error_->outcome == session::Outcome::timed_out ? "timed_out"
                              : over_budget                                    ? "over_budget"
                                                                               : "failed";
        row["errors"] = json::array{json::string(error_->message)};
        row["outcome"] = outcome;
        if (over_budget) {
            row["terminal_reason"] = "budget_exhausted";
        }
    }
    row["session_id"] = session_id_;
    const session::Usage u = usage_.value_or(session::Usage{});
    row["usage"] = json::object{
        {"input_tokens", u.input},
        {"output_tokens", u.output},
        {"cache_read_input_tokens", u.cache_read},
        {"cache_creation_input_tokens", u.cache_creation}};
    if (!u.model.empty()) {
        row["model"] = u.model;
    }
    row["uuid"] = make_uuid();
    return row;
}

std::size_t FrameBuilder::block_index_for(int kind, const std::string& tool_id) {
    if (!preview_any_) {
        preview_any_ = true;
        preview_index_ = 0;
    } else if (kind != preview_kind_ || tool_id != preview_tool_) {
        ++preview_index_;
    }
    preview_kind_ = kind;
    preview_tool_ = tool_id;
    return preview_index_;
}

std::optional<json::object> FrameBuilder::preview_row(const StreamEvent& ev) {
    json::object event;
    if (const auto* t = std::get_if<llm::Text>(&ev)) {
        event = {
            {"type", "content_block_delta"},
            {"index", block_index_for(kind_text, {})},
            {"delta", json::object{{"type", "text_delta"}, {"text", t->text}}}};
    } else if (const auto* th = std::get_if<llm::Thinking>(&ev)) {
        event = {
            {"type", "content_block_delta"},
            {"index", block_index_for(kind_thinking, {})},
            {"delta", json::object{{"type", "thinking_delta"}, {"thinking", th->text}}}};
    } else if (const auto* s = std::get_if<llm::ToolUseStart>(&ev)) {
        // A new tool block even if the previous block was the same kind.
        if (preview_any_ && preview_kind_ == kind_tool && preview_tool_ == s->tool_id) {
            preview_tool_.clear();
        }
        event = {
            {"type", "content_block_start"},
            {"index", block_index_for(kind_tool, s->tool_id)},
            {"content_block",
             json::object{
                 {"type", "tool_use"},
                 {"id", s->tool_id},
                 {"name", s->tool_name},
                 {"input", json::object{}}}}};
    } else if (const auto* d = std::get_if<llm::ToolUseDelta>(&ev)) {
        event = {
            {"type", "content_block_delta"},
            {"index", block_index_for(kind_tool, d->tool_id)},
            {"delta", json::object{{"type", "input_json_delta"}, {"partial_json", d->delta}}}};
    } else if (const auto* r = std::get_if<llm::ToolResultDelta>(&ev)) {
        event = {
            {"type", "tool_result_delta"},
            {"tool_use_id", r->tool_id},
            {"delta", json::object{{"type", "text_delta"}, {"text", r->delta}}}};
    } else {
        return std::nullopt;
    }
    auto row = envelope("stream_event");
    row["event"] = std::move(event);
    row["parent_tool_use_id"] = nullptr;
    row["session_id"] = session_id_;
    row["uuid"] = make_uuid();
    return row;
}

std::vector<json::value> messages_from_rows(const std::vector<json::object>& rows) {
    std::vector<json::value> messages;
    for (const auto& row : rows) {
        const auto type = str_field(row, "type");
        if (type != "user" && type != "assistant") {
            continue;
        }
        if (const auto* p = row.if_contains("parent_tool_use_id"); p != nullptr && !p->is_null()) {
            continue;
        }
        if (const auto* sc = row.if_contains("isSidechain");
            sc != nullptr && sc->is_bool() && sc->get_bool()) {
            continue;
        }
        const auto* mv = row.if_contains("message");
        const auto* m = mv == nullptr ? nullptr : mv->if_object();
        if (m == nullptr) {
            continue;
        }
        const auto* content = m->if_contains("content");
        if (content == nullptr) {
            continue;
        }
        // Adjacent rows of one role (Claude Code writes one row per content block) are merged
        // by repair_history.
        messages.push_back(json::object{
            {"role", type == "assistant" ? "assistant" : "user"}, {"content", *content}});
    }
    return repair_history(std::move(messages));
}

} // namespace sluice::runtime
