// The Agent Client Protocol's messages as sluice's frames, and its client methods.
#include "agents/acp_updates.hpp"

#include "agents/rpc_rows.hpp"

#include <sluice/core/safe_write.hpp>
#include <sluice/runtime/agents/acp_agent.hpp>
#include <sluice/runtime/agents/stream_json.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

namespace sluice::runtime::acp {

namespace json = boost::json;
namespace fs = std::filesystem;
using detail::array_field;
using detail::int_field;
using detail::object_field;

namespace {

// The text of a content block ({type:"text", text}); "" for another kind.
std::string_view block_text(const json::object& block) {
    return str_field(block, "type") == "text" ? str_field(block, "text") : std::string_view{};
}

// A tool call's content entries as text for a person: text content as it is, a diff as the
// file it changed, a terminal as its id.
std::string content_text(const json::object& call) {
    std::string text;
    const auto* content = array_field(call, "content");
    if (content == nullptr) {
        return text;
    }
    for (const auto& c : *content) {
        if (!c.is_object()) {
            continue;
        }
        const auto& entry = c.get_object();
        std::string part;
        const auto type = str_field(entry, "type");
        if (type == "content") {
            if (const auto* block = object_field(entry, "content")) {
                part = std::string(block_text(*block));
            }
        } else if (type == "diff") {
            part = "edited " + std::string(str_field(entry, "path"));
        } else if (type == "terminal") {
            part = "terminal " + std::string(str_field(entry, "terminalId"));
        }
        if (part.empty()) {
            continue;
        }
        if (!text.empty()) {
            text += '\n';
        }
        text += part;
    }
    return text;
}

std::string line_of(json::object o) {
    o["jsonrpc"] = "2.0";
    auto s = json::serialize(o);
    s.push_back('\n');
    return s;
}

} // namespace

ToolShape tool_shape(const json::object& call) {
    const auto kind = str_field(call, "kind");
    const auto title = str_field(call, "title");
    const auto* raw = object_field(call, "rawInput");
    std::vector<const json::object*> diffs;
    if (const auto* content = array_field(call, "content")) {
        for (const auto& c : *content) {
            if (c.is_object() && str_field(c.get_object(), "type") == "diff") {
                diffs.push_back(&c.get_object());
            }
        }
    }
    if (kind == "execute") {
        const auto* cmd = raw != nullptr ? find_str(*raw, "command") : nullptr;
        json::object input{{"command", cmd != nullptr ? std::string_view(*cmd) : title}};
        if (const auto* d = raw != nullptr ? find_str(*raw, "description") : nullptr) {
            input["description"] = *d;
        }
        return {"Bash", std::move(input)};
    }
    if (diffs.size() == 1) {
        const auto& d = *diffs.front();
        const auto* old_text = d.if_contains("oldText");
        if (old_text == nullptr || !old_text->is_string()) { // a new file
            return {
                "Write",
                json::object{
                    {"file_path", str_field(d, "path")}, {"content", str_field(d, "newText")}}};
        }
        return {
            "Edit",
            json::object{
                {"file_path", str_field(d, "path")},
                {"old_string", *old_text},
                {"new_string", str_field(d, "newText")}}};
    }
    if (diffs.size() > 1) {
        json::array edits;
        std::string paths;
        for (const auto* d : diffs) {
            const auto path = str_field(*d, "path");
            if (paths.find(path) == std::string::npos) {
                paths += (paths.empty() ? "" : ", ") + std::string(path);
            }
            edits.push_back(json::object{
                {"file_path", path},
                {"old_string", str_field(*d, "oldText")},
                {"new_string", str_field(*d, "newText")}});
        }
        return {"MultiEdit", json::object{{"file_path", paths}, {"edits", std::move(edits)}}};
    }
    if (kind == "read") {
        if (const auto* locs = array_field(call, "locations");
            locs != nullptr && !locs->empty() && locs->front().is_object()) {
            const auto& loc = locs->front().get_object();
            json::object input{{"file_path", str_field(loc, "path")}};
            if (const auto* line = loc.if_contains("line"); line != nullptr && line->is_number()) {
                input["offset"] = *line;
            }
            return {"Read", std::move(input)};
        }
    }
    std::string name;
    if (const auto* meta = object_field(call, "_meta")) {
        name = std::string(str_field(*meta, "toolName"));
    }
    if (name.empty()) {
        name = kind.empty() ? std::string("tool") : std::string(kind);
    }
    if (raw != nullptr) {
        return {std::move(name), *raw};
    }
    return {std::move(name), json::object{{"title", title}}};
}

TurnTranslator::TurnTranslator(std::string session_id, std::string turn_tag)
    : session_id_(std::move(session_id))
    , turn_tag_(std::move(turn_tag)) {
}

json::object TurnTranslator::assistant(json::object block) {
    json::object message{
        {"id", "acp-" + turn_tag_ + "-" + std::to_string(++next_row_)},
        {"role", "assistant"},
        {"content", json::array{std::move(block)}}};
    return json::object{{"type", "assistant"}, {"message", std::move(message)}};
}

void TurnTranslator::flush_text(TurnOutput& out) {
    if (text_.empty()) {
        return;
    }
    last_text_ = text_;
    out.rows.push_back(assistant(json::object{{"type", "text"}, {"text", std::move(text_)}}));
    text_.clear();
}

void TurnTranslator::flush_thinking(TurnOutput& out) {
    if (thinking_.empty()) {
        return;
    }
    out.rows.push_back(
        assistant(json::object{{"type", "thinking"}, {"thinking", std::move(thinking_)}}));
    thinking_.clear();
}

void TurnTranslator::show_call(const json::object& call, TurnOutput& out) {
    std::string id(str_field(call, "toolCallId"));
    if (id.empty() || !shown_.insert(id).second) {
        return;
    }
    auto shape = tool_shape(call);
    out.rows.push_back(assistant(json::object{
        {"type", "tool_use"},
        {"id", std::move(id)},
        {"name", std::move(shape.name)},
        {"input", std::move(shape.input)}}));
}

void TurnTranslator::add_usage(const json::object& usage) {
    const auto cached = int_field(usage, "cachedReadTokens");
    // OpenAI-style counts (Qwen Code's) include the cached tokens in the input.
    input_ += std::max<std::int64_t>(0, int_field(usage, "inputTokens") - cached);
    cached_ += cached;
    output_ += int_field(usage, "outputTokens");
}

TurnOutput TurnTranslator::on_update(const json::object& update) {
    TurnOutput out;
    const auto kind = str_field(update, "sessionUpdate");
    if (const auto* meta = object_field(update, "_meta")) {
        if (const auto* usage = object_field(*meta, "usage")) {
            add_usage(*usage);
        }
    }
    if (kind == "agent_message_chunk") {
        flush_thinking(out);
        if (const auto* content = object_field(update, "content")) {
            const auto text = block_text(*content);
            if (!text.empty()) {
                text_ += text;
                out.preview = llm::Text{std::string(text)};
            }
        }
        return out;
    }
    if (kind == "agent_thought_chunk") {
        flush_text(out);
        if (const auto* content = object_field(update, "content")) {
            const auto text = block_text(*content);
            if (!text.empty()) {
                thinking_ += text;
                out.preview = llm::Thinking{std::string(text)};
            }
        }
        return out;
    }
    if (kind != "tool_call" && kind != "tool_call_update" && kind != "plan") {
        return out; // the user's own chunks, commands, modes, session info: no frame
    }
    flush_thinking(out);
    flush_text(out);
    if (kind == "plan") {
        json::array todos;
        if (const auto* entries = array_field(update, "entries")) {
            for (const auto& e : *entries) {
                if (!e.is_object()) {
                    continue;
                }
                const auto status = str_field(e.get_object(), "status");
                todos.push_back(json::object{
                    {"content", str_field(e.get_object(), "content")},
                    {"status",
                     status == "in_progress" || status == "completed" ? status : "pending"}});
            }
        }
        const auto id = "plan-" + turn_tag_ + "-" + std::to_string(next_row_ + 1);
        out.rows.push_back(assistant(json::object{
            {"type", "tool_use"},
            {"id", id},
            {"name", "TodoWrite"},
            {"input", json::object{{"todos", std::move(todos)}}}}));
        return out;
    }
    show_call(update, out);
    const auto status = str_field(update, "status");
    std::string id(str_field(update, "toolCallId"));
    if ((status == "completed" || status == "failed") && !id.empty() && ended_.insert(id).second) {
        auto text = content_text(update);
        if (text.empty()) {
            text = status == "completed" ? "done" : "failed";
        }
        out.rows.push_back(
            detail::tool_result_row(std::move(id), std::move(text), status == "failed"));
    }
    return out;
}

TurnOutput TurnTranslator::on_requested_call(const json::object& call) {
    TurnOutput out;
    flush_thinking(out);
    flush_text(out);
    show_call(call, out);
    return out;
}

TurnOutput TurnTranslator::finish(
    std::string_view stop_reason, std::string_view error, const json::object* usage) {
    TurnOutput out;
    flush_thinking(out);
    flush_text(out);
    if (usage != nullptr) {
        input_ = cached_ = output_ = 0;
        add_usage(*usage);
    }
    const bool ok = stop_reason == "end_turn";
    std::string subtype = ok                           ? "success"
                          : stop_reason == "cancelled" ? "interrupted"
                          : stop_reason.empty()        ? "error_during_execution"
                                                       : "error_" + std::string(stop_reason);
    std::string result = ok               ? last_text_
                         : !error.empty() ? std::string(error)
                                          : "the agent stopped: " + std::string(stop_reason);
    json::object row{
        {"type", "result"},
        {"subtype", std::move(subtype)},
        {"is_error", !ok},
        {"result", std::move(result)},
        {"session_id", session_id_},
        {"usage",
         json::object{
             {"input_tokens", input_},
             {"cache_read_input_tokens", cached_},
             {"cache_creation_input_tokens", 0},
             {"output_tokens", output_}}}};
    if (!stop_reason.empty()) {
        row["stop_reason"] = stop_reason;
    }
    out.rows.push_back(std::move(row));
    return out;
}

PermissionRequest permission_of(const json::object& params, std::string request_id) {
    PermissionRequest p;
    p.request_id = std::move(request_id);
    static const json::object none_object;
    const auto* call = object_field(params, "toolCall");
    const auto& c = call != nullptr ? *call : none_object;
    if (const auto* id = find_str(c, "toolCallId")) {
        p.tool_use_id = std::string(*id);
    }
    auto shape = tool_shape(c);
    p.tool_name = std::move(shape.name);
    if (p.tool_name == "Bash" && shape.input.is_object()) {
        p.title = "Run " + std::string(str_field(shape.input.get_object(), "command")) + "?";
    } else {
        const auto title = str_field(c, "title");
        p.title = title.empty() ? "Allow " + p.tool_name + "?" : std::string(title) + "?";
    }
    p.input = std::move(shape.input);
    if (auto why = content_text(c); !why.empty() && p.tool_name == "Bash") {
        p.decision_reason = why; // the agent's words on why it asks (a diff is in the input)
    }
    return p;
}

json::object permission_result(const json::value& options, bool allow, bool cancelled) {
    json::object none{{"outcome", json::object{{"outcome", "cancelled"}}}};
    if (cancelled || !options.is_array()) {
        return none;
    }
    const std::array<std::string_view, 2> kinds =
        allow ? std::array<std::string_view, 2>{"allow_once", "allow_always"}
              : std::array<std::string_view, 2>{"reject_once", "reject_always"};
    for (const auto kind : kinds) {
        for (const auto& o : options.get_array()) {
            if (o.is_object() && str_field(o.get_object(), "kind") == kind) {
                return json::object{
                    {"outcome",
                     json::object{
                         {"outcome", "selected"}, {"optionId", o.get_object().at("optionId")}}}};
            }
        }
    }
    return none;
}

std::string request_line(std::int64_t id, std::string_view method, json::object params) {
    return line_of(json::object{{"id", id}, {"method", method}, {"params", std::move(params)}});
}

std::string notification_line(std::string_view method, json::object params) {
    return line_of(json::object{{"method", method}, {"params", std::move(params)}});
}

std::string result_line(const json::value& id, json::value result) {
    return line_of(json::object{{"id", id}, {"result", std::move(result)}});
}

std::string error_line(const json::value& id, std::int64_t code, std::string_view message) {
    return line_of(
        json::object{{"id", id}, {"error", json::object{{"code", code}, {"message", message}}}});
}

namespace {

// `raw` resolved (symbolic links of the part that exists followed) when it lies in `root`;
// else "" and `why` says so.
fs::path inside(const fs::path& root, std::string_view raw, std::string& why) {
    const fs::path path(raw);
    if (raw.empty() || !path.is_absolute()) {
        why = "path must be absolute: '" + std::string(raw) + "'";
        return {};
    }
    std::error_code ec;
    auto real = fs::weakly_canonical(path, ec);
    if (ec) {
        why = std::string(raw) + ": " + ec.message();
        return {};
    }
    const auto rel = real.lexically_relative(root);
    if (rel.empty() || *rel.begin() == "..") {
        why = std::string(raw) + " is outside the seat's working directory " + root.string()
              + " (sluice serves files there only)";
        return {};
    }
    return real;
}

} // namespace

ClientAnswer serve_client(
    std::string_view method,
    const json::object& params,
    const fs::path& root,
    std::size_t max_file_bytes) {
    ClientAnswer a;
    if (method != "fs/read_text_file" && method != "fs/write_text_file") {
        a.code = -32601;
        a.message = method.starts_with("terminal/")
                        ? "sluice offers no terminals (clientCapabilities.terminal is false)"
                        : "sluice does not serve " + std::string(method);
        return a;
    }
    const auto* raw = find_str(params, "path");
    std::string why;
    const auto path = inside(root, raw != nullptr ? std::string_view(*raw) : "", why);
    if (path.empty()) {
        a.code = -32602;
        a.message = std::move(why);
        return a;
    }
    if (method == "fs/write_text_file") {
        const auto* content = params.if_contains("content");
        if (content == nullptr || !content->is_string()) {
            a.code = -32602;
            a.message = "field 'content' must be a string";
            return a;
        }
        std::error_code ec;
        fs::create_directories(path.parent_path(), ec);
        auto written = safe_write(path, std::string_view(content->get_string()));
        if (!written) {
            a.code = -32603;
            a.message = "cannot write " + path.string() + ": " + written.error().message();
            return a;
        }
        a.result = nullptr;
        return a;
    }
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) {
        a.code = -32603;
        a.message = "cannot read " + path.string() + ": " + ec.message();
        return a;
    }
    if (size > max_file_bytes) {
        a.code = -32603;
        a.message = path.string() + " is " + std::to_string(size) + " bytes, over the "
                    + std::to_string(max_file_bytes) + " sluice serves";
        return a;
    }
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) {
        a.code = -32603;
        a.message = "cannot read " + path.string();
        return a;
    }
    // line (1-based) and limit select whole lines.
    const auto first = int_field(params, "line");
    const auto limit = int_field(params, "limit");
    if (first > 1 || limit > 0) {
        std::size_t begin = 0;
        for (std::int64_t n = 1; n < first && begin < text.size(); ++n) {
            const auto nl = text.find('\n', begin);
            begin = nl == std::string::npos ? text.size() : nl + 1;
        }
        std::size_t end = text.size();
        if (limit > 0) {
            end = begin;
            for (std::int64_t n = 0; n < limit && end < text.size(); ++n) {
                const auto nl = text.find('\n', end);
                end = nl == std::string::npos ? text.size() : nl + 1;
            }
        }
        text = text.substr(begin, end - begin);
    }
    a.result = json::object{{"content", std::move(text)}};
    return a;
}

std::optional<std::vector<std::string>> split_command(std::string_view line, std::string& error) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (const char c : line) {
        if (quote != 0) {
            if (c == quote) {
                quote = 0;
            } else {
                word.push_back(c);
            }
        } else if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
        } else if (c == ' ' || c == '\t') {
            if (in_word) {
                words.push_back(std::move(word));
                word.clear();
                in_word = false;
            }
        } else {
            word.push_back(c);
            in_word = true;
        }
    }
    if (quote != 0) {
        error = "the command line has an unclosed quote: " + std::string(line);
        return std::nullopt;
    }
    if (in_word) {
        words.push_back(std::move(word));
    }
    if (words.empty()) {
        error = "the command line is empty";
        return std::nullopt;
    }
    return words;
}

} // namespace sluice::runtime::acp
