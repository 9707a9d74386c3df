// Codex rollout lines as frame rows (conversation/codex_rollout.hpp): one line, at most one row.
#include <sluice/conversation/codex_rollout.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>

namespace sluice {

namespace json = boost::json;

namespace {

std::string_view str_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view{};
}

const json::object* obj_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

const json::array* arr_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
}

// A frame row of `type` with a message of `role` holding `content`, stamped as its rollout row.
json::object message_row(const json::object& rollout, std::string_view type, json::array content) {
    json::object row;
    row["type"] = type;
    if (const auto ts = str_of(rollout, "timestamp"); !ts.empty()) {
        row["timestamp"] = ts;
    }
    row["message"] = json::object{{"role", type}, {"content", std::move(content)}};
    return row;
}

// The text blocks of an item's `content` (UserMessage: `text`, AgentMessage: `Text`); images as
// image blocks (the page shows "[image]"; their bytes are not carried).
json::array text_blocks(const json::object& item) {
    json::array out;
    const auto* content = arr_of(item, "content");
    if (content == nullptr) {
        return out;
    }
    for (const auto& c : *content) {
        if (!c.is_object()) {
            continue;
        }
        const auto& block = c.get_object();
        const auto type = str_of(block, "type");
        if (type == "text" || type == "Text") {
            out.push_back(json::object{{"type", "text"}, {"text", str_of(block, "text")}});
        } else if (
            type == "image" || type == "Image" || type == "local_image" || type == "LocalImage") {
            out.push_back(json::object{{"type", "image"}});
        }
    }
    return out;
}

// The reasoning an item kept: its summaries, else its raw text, blank-line separated.
std::string reasoning_text(const json::object& item) {
    std::string out;
    for (const auto* key : {"summary_text", "raw_content"}) {
        if (const auto* parts = arr_of(item, key)) {
            for (const auto& p : *parts) {
                // A summary is a string (item) or {type: summary_text, text} (response_item).
                const auto text = p.is_string()   ? std::string_view(p.get_string())
                                  : p.is_object() ? str_of(p.get_object(), "text")
                                                  : std::string_view{};
                if (!text.empty()) {
                    out += out.empty() ? "" : "\n\n";
                    out += text;
                }
            }
        }
        if (!out.empty()) {
            return out;
        }
    }
    return out;
}

std::optional<json::object> item_row(const json::object& rollout, const json::object& payload) {
    const auto* item = obj_of(payload, "item");
    if (item == nullptr) {
        return std::nullopt;
    }
    const auto type = str_of(*item, "type");
    if (type == "UserMessage") {
        auto blocks = text_blocks(*item);
        if (blocks.empty()) {
            return std::nullopt;
        }
        return message_row(rollout, "user", std::move(blocks));
    }
    if (type == "AgentMessage") {
        auto blocks = text_blocks(*item);
        if (blocks.empty()) {
            return std::nullopt;
        }
        return message_row(rollout, "assistant", std::move(blocks));
    }
    if (type == "Reasoning") {
        auto text = reasoning_text(*item);
        if (text.empty()) {
            return std::nullopt; // encrypted reasoning with nothing readable: nothing to show
        }
        return message_row(
            rollout,
            "assistant",
            json::array{json::object{{"type", "thinking"}, {"thinking", std::move(text)}}});
    }
    return std::nullopt; // CommandExecution, FileChange, …: their function call rows carry them
}

// The tool_use block of a function or custom tool call, in the names the page draws: codex's
// exec tools as Bash, its plan as a todo list; any other tool as it is.
json::object tool_use_block(const json::object& payload) {
    const auto name = str_of(payload, "name");
    json::object input;
    if (const auto* custom = payload.if_contains("input"); custom != nullptr) {
        input["input"] = *custom; // a custom tool (apply_patch): its free-form input
    } else {
        boost::system::error_code ec;
        auto args = json::parse(str_of(payload, "arguments"), ec);
        if (!ec && args.is_object()) {
            input = std::move(args.get_object());
        } else {
            input["arguments"] = str_of(payload, "arguments");
        }
    }
    std::string shown(name);
    if (name == "exec_command" || name == "shell" || name == "container.exec"
        || name == "local_shell") {
        json::object bash;
        const auto* cmd = input.if_contains("cmd");
        cmd = cmd != nullptr ? cmd : input.if_contains("command");
        if (cmd != nullptr && cmd->is_string()) {
            bash["command"] = cmd->get_string();
        } else if (cmd != nullptr && cmd->is_array()) {
            // ["bash", "-lc", "<script>"] is the script; any other argv is its words joined.
            const auto& argv = cmd->get_array();
            std::string joined;
            for (const auto& a : argv) {
                if (a.is_string()) {
                    joined += joined.empty() ? "" : " ";
                    joined += a.get_string();
                }
            }
            const bool script = argv.size() == 3 && argv[1].is_string()
                                && (argv[1].get_string() == "-lc" || argv[1].get_string() == "-c")
                                && argv[2].is_string();
            bash["command"] = script ? json::value(argv[2].get_string()) : json::value(joined);
        }
        if (const auto why = str_of(input, "justification"); !why.empty()) {
            bash["description"] = why;
        }
        for (const auto* key : {"workdir", "sandbox_permissions"}) {
            if (const auto* v = input.if_contains(key)) {
                bash[key] = *v;
            }
        }
        input = std::move(bash);
        shown = "Bash";
    } else if (name == "update_plan") {
        json::array todos;
        if (const auto* plan = arr_of(input, "plan")) {
            for (const auto& step : *plan) {
                if (step.is_object()) {
                    todos.push_back(json::object{
                        {"content", str_of(step.get_object(), "step")},
                        {"status", str_of(step.get_object(), "status")}});
                }
            }
        }
        json::object todo{{"todos", std::move(todos)}};
        if (const auto* why = input.if_contains("explanation")) {
            todo["explanation"] = *why;
        }
        input = std::move(todo);
        shown = "TodoWrite";
    }
    return json::object{
        {"type", "tool_use"},
        {"id", str_of(payload, "call_id")},
        {"name", shown},
        {"input", std::move(input)}};
}

// Unified exec's output starts with a header for the model ("Chunk ID: …", "Wall time: …",
// "Process exited with code N", "Original token count: …", "Output:"): the output a person reads
// is what follows it, and a non-zero exit makes it an error. Any other output is kept whole.
std::pair<std::string_view, bool> exec_output(std::string_view out) {
    constexpr std::string_view OUTPUT = "\nOutput:\n";
    if (!out.starts_with("Chunk ID: ") && !out.starts_with("Wall time: ")) {
        return {out, out.starts_with("exec_command failed")};
    }
    const auto body = out.find(OUTPUT);
    if (body == std::string_view::npos) {
        return {out, false};
    }
    const auto header = out.substr(0, body);
    bool failed = false;
    constexpr std::string_view EXITED = "Process exited with code ";
    if (const auto at = header.find(EXITED); at != std::string_view::npos) {
        int code = 0;
        const auto* from = header.data() + at + EXITED.size();
        const auto [end, ec] = std::from_chars(from, header.data() + header.size(), code);
        failed = ec == std::errc{} && end != from && code != 0;
    }
    return {out.substr(body + OUTPUT.size()), failed};
}

json::object tool_result_block(const json::object& payload) {
    const auto* output = payload.if_contains("output");
    json::value content;
    bool failed = false;
    if (output != nullptr && output->is_string()) {
        const auto [text, bad] = exec_output(output->get_string());
        content = json::string(text);
        failed = bad;
    } else if (output != nullptr && output->is_array()) {
        // Content items ({type: input_text|output_text, text}): their texts, one per line.
        std::string text;
        for (const auto& c : output->get_array()) {
            if (c.is_object()) {
                const auto t = str_of(c.get_object(), "text");
                text += text.empty() ? "" : "\n";
                text += t;
            }
        }
        content = json::string(text);
    } else if (output != nullptr && output->is_object()) {
        // An older shape: {content, success}.
        const auto& o = output->get_object();
        content = json::string(str_of(o, "content"));
        if (const auto* ok = o.if_contains("success"); ok != nullptr && ok->is_bool()) {
            failed = !ok->get_bool();
        }
    } else {
        content = json::string();
    }
    return json::object{
        {"type", "tool_result"},
        {"tool_use_id", str_of(payload, "call_id")},
        {"content", std::move(content)},
        {"is_error", failed}};
}

// How a turn ended: task_complete (its error, if codex recorded one) or turn_aborted.
std::optional<json::object>
end_row(const json::object& rollout, const json::object& payload, bool aborted) {
    json::object row;
    row["type"] = "result";
    if (const auto ts = str_of(rollout, "timestamp"); !ts.empty()) {
        row["timestamp"] = ts;
    }
    std::string error;
    if (aborted) {
        const auto reason = str_of(payload, "reason");
        const bool person = reason == "interrupted" || reason.empty();
        error = person ? "cancelled: interrupted" : "aborted: " + std::string(reason);
        row["outcome"] = person ? "cancelled" : "failed";
    } else if (const auto* e = payload.if_contains("error"); e != nullptr && !e->is_null()) {
        error = e->is_string() ? std::string(e->get_string())
                : e->is_object() && !str_of(e->get_object(), "message").empty()
                    ? std::string(str_of(e->get_object(), "message"))
                    : json::serialize(*e);
        row["outcome"] = "failed";
    }
    row["subtype"] = error.empty() ? "success" : "error_during_execution";
    row["is_error"] = !error.empty();
    if (const auto* ms = payload.if_contains("duration_ms"); ms != nullptr && ms->is_number()) {
        row["duration_ms"] = *ms;
    }
    if (!error.empty()) {
        row["result"] = error;
        row["errors"] = json::array{json::string(error)};
    } else {
        row["result"] = str_of(payload, "last_agent_message");
    }
    return row;
}

} // namespace

std::optional<json::object> codex_frame_row(const json::object& row) {
    const auto* payload = obj_of(row, "payload");
    if (payload == nullptr) {
        return std::nullopt;
    }
    const auto type = str_of(row, "type");
    const auto kind = str_of(*payload, "type");
    if (type == "event_msg") {
        if (kind == "item_completed") {
            return item_row(row, *payload);
        }
        if (kind == "task_complete" || kind == "turn_aborted") {
            return end_row(row, *payload, kind == "turn_aborted");
        }
        return std::nullopt;
    }
    if (type == "response_item") {
        if (kind == "function_call" || kind == "custom_tool_call") {
            return message_row(row, "assistant", json::array{tool_use_block(*payload)});
        }
        if (kind == "function_call_output" || kind == "custom_tool_call_output") {
            return message_row(row, "user", json::array{tool_result_block(*payload)});
        }
    }
    return std::nullopt;
}

bool codex_may_be_frame(std::string_view line) noexcept {
    // Each needle is a JSON string token a frame's row holds as its payload type; inside another
    // string its quotes would be escaped, so a line without any of them maps to nothing.
    static constexpr std::array<std::string_view, 5> NEEDLES{
        "\"item_completed\"",
        "\"task_complete\"",
        "\"turn_aborted\"",
        "\"function_call",
        "\"custom_tool_call"};
    return std::ranges::any_of(
        NEEDLES, [line](std::string_view n) { return line.find(n) != std::string_view::npos; });
}

std::optional<json::object> codex_frame_row(std::string_view line) {
    if (!codex_may_be_frame(line)) {
        return std::nullopt;
    }
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec || !v.is_object()) {
        return std::nullopt;
    }
    return codex_frame_row(v.get_object());
}

std::optional<CodexSessionMeta> codex_session_meta(std::string_view line) {
    if (line.find("\"session_meta\"") == std::string_view::npos) {
        return std::nullopt;
    }
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec || !v.is_object() || str_of(v.get_object(), "type") != "session_meta") {
        return std::nullopt;
    }
    const auto* payload = obj_of(v.get_object(), "payload");
    if (payload == nullptr) {
        return std::nullopt;
    }
    return CodexSessionMeta{
        std::string(str_of(*payload, "id")), std::string(str_of(*payload, "cwd"))};
}

std::optional<std::string> codex_prompt_text(std::string_view line) {
    if (line.find("\"UserMessage\"") == std::string_view::npos) {
        return std::nullopt;
    }
    auto row = codex_frame_row(line);
    if (!row || str_of(*row, "type") != "user") {
        return std::nullopt;
    }
    std::string text;
    for (const auto& b : row->at("message").at("content").get_array()) {
        const auto t = str_of(b.get_object(), "text");
        if (!t.empty()) {
            text += text.empty() ? "" : "\n";
            text += t;
        }
    }
    return text;
}

} // namespace sluice
