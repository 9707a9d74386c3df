// Sub-agent transcripts of a session file: found in both of Claude Code's layouts, linked to the
// Task tool call each answers.
#include <sluice/hub/claude_projects.hpp>
#include <sluice/hub/subagents.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <unordered_map>

namespace sluice::hub {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view AGENT_PREFIX = "agent-";
constexpr std::string_view JSONL = ".jsonl";
constexpr std::string_view INLINE_PREFIX = "inline-";
// Rows of a sub-agent file looked at for its session id and first prompt (both in its first
// rows in every fixture).
constexpr int HEAD_ROWS = 8;

std::string_view str_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view{};
}

const json::object* obj_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

std::optional<json::object> parse_object(std::string_view line) {
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec || !v.is_object()) {
        return std::nullopt;
    }
    return std::move(v.get_object());
}

std::optional<std::string> agent_id_of(const fs::path& p) {
    const auto name = p.filename().string();
    if (!name.starts_with(AGENT_PREFIX) || !name.ends_with(JSONL)) {
        return std::nullopt;
    }
    auto id = name.substr(AGENT_PREFIX.size(), name.size() - AGENT_PREFIX.size() - JSONL.size());
    return valid_agent_id(id) ? std::optional<std::string>(std::move(id)) : std::nullopt;
}

// The text of a user row's prompt: its string content, or its first text block.
std::string prompt_of(const json::object& row) {
    const auto* m = obj_of(row, "message");
    const auto* c = m != nullptr ? m->if_contains("content") : nullptr;
    if (c == nullptr) {
        return {};
    }
    if (c->is_string()) {
        return std::string(c->get_string());
    }
    if (c->is_array()) {
        for (const auto& b : c->get_array()) {
            if (b.is_object() && str_of(b.get_object(), "type") == "text") {
                return std::string(str_of(b.get_object(), "text"));
            }
        }
    }
    return {};
}

// What a sub-agent file says of itself: its rows, the session it belongs to, its first prompt.
struct AgentFile {
    std::uint64_t rows{};
    std::string session_id;
    std::string prompt;
};

std::optional<AgentFile> read_agent_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    AgentFile a;
    std::string line;
    int head = 0;
    // std::getline takes a last line with no newline too: a row still being written is left
    // out (it would not parse), as the transcript reader waits for it.
    while (std::getline(in, line)) {
        if (line.empty() || line.front() != '{' || in.eof()) {
            continue;
        }
        ++a.rows;
        if (head++ < HEAD_ROWS && (a.session_id.empty() || a.prompt.empty())) {
            if (auto row = parse_object(line)) {
                if (a.session_id.empty()) {
                    a.session_id = str_of(*row, "sessionId");
                }
                if (a.prompt.empty() && str_of(*row, "type") == "user") {
                    a.prompt = prompt_of(*row);
                }
            }
        }
    }
    return a;
}

// What the session file says of its Task calls: agent id → tool_use id (from the tool results),
// and each Task tool_use's description and prompt.
struct TaskCalls {
    std::unordered_map<std::string, std::string> by_agent;

    struct Call {
        std::string id, description, prompt;
    };

    std::vector<Call> calls;

    void see(const json::object& row) {
        const auto type = str_of(row, "type");
        const auto* m = obj_of(row, "message");
        const auto* c = m != nullptr ? m->if_contains("content") : nullptr;
        if (c == nullptr || !c->is_array()) {
            return;
        }
        if (type == "user") {
            const auto* r = obj_of(row, "toolUseResult");
            const auto agent = r != nullptr ? str_of(*r, "agentId") : std::string_view{};
            for (const auto& b : c->get_array()) {
                if (!agent.empty() && b.is_object()
                    && str_of(b.get_object(), "type") == "tool_result") {
                    by_agent[std::string(agent)] = str_of(b.get_object(), "tool_use_id");
                    return;
                }
            }
        } else if (type == "assistant") {
            for (const auto& b : c->get_array()) {
                if (!b.is_object()) {
                    continue;
                }
                const auto& block = b.get_object();
                const auto name = str_of(block, "name");
                if (str_of(block, "type") != "tool_use" || (name != "Task" && name != "Agent")) {
                    continue;
                }
                const auto* input = obj_of(block, "input");
                calls.push_back(Call{
                    std::string(str_of(block, "id")),
                    input != nullptr ? std::string(str_of(*input, "description")) : std::string{},
                    input != nullptr ? std::string(str_of(*input, "prompt")) : std::string{}});
            }
        }
    }

    // Sub-agents written inline (older Claude Code: `isSidechain` rows in the session file),
    // one chain per sub-agent: its first row has no parent, each next row names one of it.
    struct Chain {
        std::string id, prompt;
        std::uint64_t rows{};
    };

    std::vector<Chain> chains;
    std::unordered_map<std::string, std::size_t> chain_of; // row uuid → chain

    // The chain `row` (an isSidechain row) belongs to, a new one at a parentless prompt.
    std::optional<std::size_t> chain(const json::object& row) {
        const auto uuid = std::string(str_of(row, "uuid"));
        const auto* parent = row.if_contains("parentUuid");
        std::optional<std::size_t> at;
        if (parent == nullptr || parent->is_null()) {
            if (str_of(row, "type") != "user" || uuid.empty()) {
                return std::nullopt;
            }
            chains.push_back(Chain{std::string(INLINE_PREFIX) + uuid, prompt_of(row), 0});
            at = chains.size() - 1;
        } else if (parent->is_string()) {
            if (auto it = chain_of.find(std::string(parent->get_string())); it != chain_of.end()) {
                at = it->second;
            }
        }
        if (at) {
            ++chains[*at].rows;
            if (!uuid.empty()) {
                chain_of[uuid] = *at;
            }
        }
        return at;
    }

    [[nodiscard]] const Call* call(std::string_view id) const {
        for (const auto& c : calls) {
            if (c.id == id) {
                return &c;
            }
        }
        return nullptr;
    }
};

// Reads the session file: its Task calls and results, and its inline sub-agents' chains;
// `keep` (an inline agent id), when set, collects that chain's rows (whole lines) in `kept`.
TaskCalls read_task_calls(
    const fs::path& session_file,
    std::string_view keep = {},
    std::vector<std::string>* kept = nullptr) {
    TaskCalls t;
    std::ifstream in(session_file, std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
        if (in.eof()) {
            break; // a last row still being written
        }
        // Only lines that can be a Task call, its result or a sub-agent's row are parsed.
        const bool result = line.find("\"agentId\":\"") != std::string::npos;
        const bool call = line.find("\"name\":\"Task\"") != std::string::npos
                          || line.find("\"name\":\"Agent\"") != std::string::npos;
        const bool side = line.find("\"isSidechain\":true") != std::string::npos;
        if (!result && !call && !side) {
            continue;
        }
        auto row = parse_object(line);
        if (!row) {
            continue;
        }
        const auto* flag = row->if_contains("isSidechain");
        if (flag != nullptr && flag->is_bool() && flag->get_bool()) {
            const auto at = t.chain(*row);
            if (at && kept != nullptr && t.chains[*at].id == keep) {
                kept->push_back(line);
            }
            continue; // a sub-agent's own calls are not its session's
        }
        t.see(*row);
    }
    return t;
}

bool written_lately(const fs::path& p) {
    std::error_code ec;
    const auto t = fs::last_write_time(p, ec);
    return !ec && fs::file_time_type::clock::now() - t < FOREIGN_LIVE_FOR;
}

} // namespace

bool valid_agent_id(std::string_view agent_id) {
    constexpr std::size_t MAX = 64;
    return !agent_id.empty() && agent_id.size() <= MAX
           && std::all_of(agent_id.begin(), agent_id.end(), [](char c) {
                  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                         || c == '-' || c == '_';
              });
}

std::optional<fs::path>
find_subagent_file(const fs::path& session_file, std::string_view agent_id) {
    if (!valid_agent_id(agent_id)) {
        return std::nullopt;
    }
    const auto name = std::string(AGENT_PREFIX) + std::string(agent_id) + std::string(JSONL);
    const auto project = session_file.parent_path();
    std::error_code ec;
    auto p = project / session_file.stem() / "subagents" / name;
    if (fs::is_regular_file(p, ec)) {
        return p;
    }
    p = project / name;
    if (!fs::is_regular_file(p, ec)) {
        return std::nullopt;
    }
    auto a = read_agent_file(p);
    return a && a->session_id == session_file.stem().string() ? std::optional<fs::path>(p)
                                                              : std::nullopt;
}

std::optional<std::vector<std::string>>
read_inline_subagent(const fs::path& session_file, std::string_view agent_id) {
    if (!agent_id.starts_with(INLINE_PREFIX) || !valid_agent_id(agent_id)) {
        return std::nullopt;
    }
    std::vector<std::string> rows;
    const auto calls = read_task_calls(session_file, agent_id, &rows);
    const bool known = std::any_of(
        calls.chains.begin(), calls.chains.end(), [&](const auto& c) { return c.id == agent_id; });
    return known ? std::optional<std::vector<std::string>>(std::move(rows)) : std::nullopt;
}

std::vector<Subagent> list_subagents(const fs::path& session_file) {
    const auto session = session_file.stem().string();
    const auto project = session_file.parent_path();
    std::vector<std::pair<std::string, fs::path>> files; // agent id → file
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(project / session / "subagents", ec)) {
        std::error_code fec;
        if (auto id = agent_id_of(e.path()); id && e.is_regular_file(fec)) {
            files.emplace_back(std::move(*id), e.path());
        }
    }
    std::vector<std::pair<std::string, fs::path>> old; // the old layout, beside the sessions
    for (const auto& e : fs::directory_iterator(project, ec)) {
        std::error_code fec;
        if (auto id = agent_id_of(e.path()); id && e.is_regular_file(fec)) {
            old.emplace_back(std::move(*id), e.path());
        }
    }
    std::vector<Subagent> out;
    const auto add = [&out](const std::string& id, const fs::path& p, AgentFile a) {
        Subagent s;
        s.agent_id = id;
        s.rows = a.rows;
        s.live = written_lately(p);
        s.file = p;
        out.push_back(std::move(s));
        return std::move(a.prompt);
    };
    std::vector<std::string> prompts;
    for (const auto& [id, p] : files) {
        if (auto a = read_agent_file(p)) {
            prompts.push_back(add(id, p, std::move(*a)));
        }
    }
    for (const auto& [id, p] : old) {
        auto a = read_agent_file(p);
        const bool known = std::any_of(
            out.begin(), out.end(), [&id = id](const Subagent& s) { return s.agent_id == id; });
        if (a && a->session_id == session && !known) {
            prompts.push_back(add(id, p, std::move(*a)));
        }
    }
    const auto calls = read_task_calls(session_file);
    for (const auto& c : calls.chains) {
        Subagent s;
        s.agent_id = c.id;
        s.rows = c.rows;
        s.live = written_lately(session_file);
        s.file = session_file;
        out.push_back(std::move(s));
        prompts.push_back(c.prompt);
    }
    {
        for (std::size_t i = 0; i < out.size(); ++i) {
            auto& s = out[i];
            if (auto it = calls.by_agent.find(s.agent_id); it != calls.by_agent.end()) {
                s.tool_use_id = it->second;
            } else if (!prompts[i].empty()) {
                // Still running: no result names it yet; its prompt is the call's.
                for (const auto& c : calls.calls) {
                    if (c.prompt == prompts[i]) {
                        s.tool_use_id = c.id;
                        break;
                    }
                }
            }
            if (const auto* c = calls.call(s.tool_use_id)) {
                s.description = c->description;
            }
        }
    }
    std::sort(out.begin(), out.end(), [](const Subagent& a, const Subagent& b) {
        return a.agent_id < b.agent_id;
    });
    return out;
}

} // namespace sluice::hub
