// Codex's app-server messages as sluice's frames.
#include "agents/codex_items.hpp"

#include "agents/rpc_rows.hpp"

#include <sluice/runtime/agents/codex_agent.hpp>
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <utility>

namespace sluice::runtime::codex {

namespace json = boost::json;
using detail::int_field;
using detail::object_field;

namespace {

// A reasoning item's text: its summary parts, else its raw content, joined by blank lines.
std::string reasoning_text(const json::object& item) {
    std::string text;
    for (const char* key : {"summary", "content"}) {
        const auto* parts = item.if_contains(key);
        if (parts == nullptr || !parts->is_array()) {
            continue;
        }
        for (const auto& p : parts->get_array()) {
            if (!p.is_string() || p.get_string().empty()) {
                continue;
            }
            if (!text.empty()) {
                text += "\n\n";
            }
            text += p.get_string();
        }
        if (!text.empty()) {
            break;
        }
    }
    return text;
}

// Codex's plan step status as Claude Code's TodoWrite names it.
std::string_view todo_status(std::string_view s) {
    if (s == "inProgress") {
        return "in_progress";
    }
    if (s == "completed") {
        return "completed";
    }
    return "pending";
}

std::string line_of(const json::object& o) {
    auto s = json::serialize(o);
    s.push_back('\n');
    return s;
}

} // namespace

TurnTranslator::TurnTranslator(std::string thread_id, std::string model)
    : thread_id_(std::move(thread_id))
    , model_(std::move(model)) {
}

json::object TurnTranslator::assistant(std::string id, json::object block) const {
    json::object message{
        {"id", std::move(id)}, {"role", "assistant"}, {"content", json::array{std::move(block)}}};
    if (!model_.empty()) {
        message["model"] = model_;
    }
    return json::object{{"type", "assistant"}, {"message", std::move(message)}};
}

TurnOutput TurnTranslator::on_notification(std::string_view method, const json::object& params) {
    TurnOutput out;
    if (method == "item/agentMessage/delta") {
        out.preview = llm::Text{std::string(str_field(params, "delta"))};
    } else if (
        method == "item/reasoning/summaryTextDelta" || method == "item/reasoning/textDelta") {
        out.preview = llm::Thinking{std::string(str_field(params, "delta"))};
    } else if (
        method == "item/commandExecution/outputDelta" || method == "item/fileChange/outputDelta") {
        out.preview = llm::ToolResultDelta{
            std::string(str_field(params, "itemId")), std::string(str_field(params, "delta"))};
    } else if (method == "item/started") {
        if (const auto* item = object_field(params, "item")) {
            item_started(*item, out);
        }
    } else if (method == "item/completed") {
        if (const auto* item = object_field(params, "item")) {
            item_completed(*item, out);
        }
    } else if (method == "turn/plan/updated") {
        json::array todos;
        if (const auto* plan = params.if_contains("plan"); plan != nullptr && plan->is_array()) {
            for (const auto& step : plan->get_array()) {
                if (!step.is_object()) {
                    continue;
                }
                todos.push_back(json::object{
                    {"content", str_field(step.get_object(), "step")},
                    {"status", todo_status(str_field(step.get_object(), "status"))}});
            }
        }
        json::object input{{"todos", std::move(todos)}};
        if (const auto* why = find_str(params, "explanation"); why != nullptr) {
            input["explanation"] = *why;
        }
        out.rows.push_back(assistant(
            "plan-" + std::string(str_field(params, "turnId")),
            json::object{
                {"type", "tool_use"},
                {"id", "plan-" + std::string(str_field(params, "turnId"))},
                {"name", "TodoWrite"},
                {"input", std::move(input)}}));
    } else if (method == "thread/tokenUsage/updated") {
        // `last` is one model request's usage; a turn makes one request per step.
        const auto* tu = object_field(params, "tokenUsage");
        const auto* last = tu != nullptr ? object_field(*tu, "last") : nullptr;
        if (last != nullptr) {
            const auto cached = int_field(*last, "cachedInputTokens");
            usage_.input +=
                int_field(*last, "inputTokens") - cached; // OpenAI counts cached in input
            usage_.cached += cached;
            usage_.output += int_field(*last, "outputTokens");
            usage_.reasoning += int_field(*last, "reasoningOutputTokens");
            usage_.context_window = int_field(*tu, "modelContextWindow");
        }
    } else if (method == "error") {
        if (const auto* e = object_field(params, "error")) {
            error_ = std::string(str_field(*e, "message"));
        }
    }
    return out;
}

void TurnTranslator::item_started(const json::object& item, TurnOutput& out) {
    const auto type = str_field(item, "type");
    std::string id(str_field(item, "id"));
    if (type == "commandExecution") {
        json::object input{{"command", str_field(item, "command")}};
        if (const auto* cwd = find_str(item, "cwd")) {
            input["cwd"] = *cwd;
        }
        out.rows.push_back(assistant(
            id,
            json::object{
                {"type", "tool_use"}, {"id", id}, {"name", "Bash"}, {"input", std::move(input)}}));
    } else if (type == "fileChange") {
        json::value changes = json::array{};
        if (const auto* c = item.if_contains("changes"); c != nullptr && c->is_array()) {
            changes = *c;
        }
        changes_[id] = changes;
        out.rows.push_back(assistant(
            id,
            json::object{
                {"type", "tool_use"},
                {"id", id},
                {"name", "apply_patch"},
                {"input", json::object{{"changes", std::move(changes)}}}}));
    }
}

void TurnTranslator::item_completed(const json::object& item, TurnOutput& out) {
    const auto type = str_field(item, "type");
    std::string id(str_field(item, "id"));
    if (type == "agentMessage") {
        last_text_ = std::string(str_field(item, "text"));
        out.rows.push_back(
            assistant(std::move(id), json::object{{"type", "text"}, {"text", last_text_}}));
    } else if (type == "reasoning") {
        auto text = reasoning_text(item);
        if (!text.empty()) {
            out.rows.push_back(assistant(
                std::move(id), json::object{{"type", "thinking"}, {"thinking", std::move(text)}}));
        }
    } else if (type == "commandExecution") {
        const auto status = str_field(item, "status");
        std::string output(str_field(item, "aggregatedOutput"));
        const auto* code = item.if_contains("exitCode");
        const bool failed = status != "completed"
                            || (code != nullptr && code->is_int64() && code->get_int64() != 0);
        if (status == "declined") {
            output = "declined: the command did not run";
        } else if (code != nullptr && code->is_int64() && code->get_int64() != 0) {
            output += (output.empty() || output.back() == '\n' ? "" : "\n");
            output += "exit code " + std::to_string(code->get_int64());
        }
        out.rows.push_back(detail::tool_result_row(std::move(id), std::move(output), failed));
    } else if (type == "fileChange") {
        const auto status = str_field(item, "status");
        changes_.erase(id);
        std::string text = status == "completed"  ? "applied"
                           : status == "declined" ? "declined: the change was not applied"
                                                  : "the change failed";
        out.rows.push_back(
            detail::tool_result_row(std::move(id), std::move(text), status != "completed"));
    }
}

const json::value* TurnTranslator::changes_of(const std::string& item_id) const {
    const auto it = changes_.find(item_id);
    return it == changes_.end() ? nullptr : &it->second;
}

json::object TurnTranslator::result_row(const json::object& turn) const {
    const auto status = str_field(turn, "status");
    std::string error = error_;
    if (const auto* e = object_field(turn, "error")) {
        error = std::string(str_field(*e, "message"));
    }
    const bool ok = status == "completed";
    json::object row{
        {"type", "result"},
        {"subtype",
         ok                        ? "success"
         : status == "interrupted" ? "interrupted"
                                   : "error_during_execution"},
        {"is_error", !ok},
        {"result", ok ? last_text_ : (error.empty() ? std::string(status) : error)},
        {"session_id", thread_id_},
        {"duration_ms", int_field(turn, "durationMs")},
        {"usage",
         json::object{
             {"input_tokens", usage_.input},
             {"cache_read_input_tokens", usage_.cached},
             {"cache_creation_input_tokens", 0},
             {"output_tokens", usage_.output}}}};
    if (!model_.empty()) {
        row["model"] = model_;
    }
    return row;
}

std::optional<PermissionRequest> permission_of(
    std::string_view method,
    const json::object& params,
    std::string request_id,
    const json::value* changes) {
    PermissionRequest p;
    p.request_id = std::move(request_id);
    if (const auto* item = find_str(params, "itemId")) {
        p.tool_use_id = std::string(*item);
    }
    if (const auto* why = find_str(params, "reason")) {
        p.decision_reason = *why;
    }
    if (method == "item/commandExecution/requestApproval") {
        p.tool_name = "Bash";
        json::object input{{"command", str_field(params, "command")}};
        if (const auto* cwd = find_str(params, "cwd")) {
            input["cwd"] = *cwd;
            p.cwd = std::string(*cwd);
        }
        p.title = "Run " + std::string(str_field(params, "command")) + "?";
        p.input = std::move(input);
        return p;
    }
    if (method == "item/fileChange/requestApproval") {
        p.tool_name = "apply_patch";
        json::object input{{"changes", changes != nullptr ? *changes : json::value(json::array{})}};
        if (const auto* root = find_str(params, "grantRoot")) {
            input["grant_root"] = *root;
        }
        p.title = "Apply this change?";
        p.input = std::move(input);
        return p;
    }
    return std::nullopt;
}

std::string approval_reply(const json::value& id, bool allow) {
    return line_of(json::object{
        {"id", id}, {"result", json::object{{"decision", allow ? "accept" : "decline"}}}});
}

std::string request_line(std::int64_t id, std::string_view method, json::object params) {
    return line_of(json::object{{"id", id}, {"method", method}, {"params", std::move(params)}});
}

std::string notification_line(std::string_view method) {
    return line_of(json::object{{"method", method}});
}

std::string refusal_line(const json::value& id, std::string_view method) {
    return line_of(json::object{
        {"id", id},
        {"error",
         json::object{
             {"code", -32601}, {"message", "sluice does not serve " + std::string(method)}}}});
}

bool is_approval_policy(std::string_view policy) noexcept {
    static constexpr std::array<std::string_view, 3> POLICIES{"untrusted", "on-request", "never"};
    return std::ranges::any_of(POLICIES, [policy](std::string_view p) { return p == policy; });
}

} // namespace sluice::runtime::codex
