// Sub-agent transcripts of a session file: found in both of Claude Code's layouts, linked to the
// Task tool call each answers.
#include <sluice/core/file_read.hpp>
#include <sluice/hub/claude_projects.hpp>
#include <sluice/hub/subagents.hpp>

#include <boost/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
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

// Bytes of a file's head kept to tell it was rewritten in place (a replacement at the same
// inode, not shorter). Basis: Claude Code's first row carries the session's uuids in its first
// 200 bytes, so a rewrite that keeps them is one that keeps the session's start.
constexpr std::size_t HEAD_KEPT = 256;
constexpr std::size_t READ_BLOCK = 1U << 20;

// A file read on from where the last read stopped, whole lines only (a last row with no newline
// is still being written: left for the next read); read again from its start when the path now
// names another file (device, inode), the file is shorter than what was read, or its head
// changed.
class GrowingFile {
public:
    using OnLine = std::function<void(std::string_view, std::uint64_t)>;

    // Calls `restart` when what was read before no longer holds, then `on_line(line, offset)`
    // for each whole line not read before. @return false when the file cannot be read.
    bool
    read_on(const fs::path& p, const OnLine& on_line, const std::function<void()>& restart = {}) {
        const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return false;
        }
        const bool ok = read_fd(fd, on_line, restart);
        ::close(fd);
        return ok;
    }

    // Bytes read from the file so far, restarts included.
    [[nodiscard]] std::uint64_t bytes_read() const noexcept { return bytes_read_; }

private:
    bool read_fd(int fd, const OnLine& on_line, const std::function<void()>& restart) {
        struct stat st {};

        if (::fstat(fd, &st) != 0) {
            return false;
        }
        const auto size = static_cast<std::uint64_t>(st.st_size);
        std::string head(std::min<std::uint64_t>(offset_, HEAD_KEPT), '\0');
        const bool same = static_cast<std::uint64_t>(st.st_dev) == dev_
                          && static_cast<std::uint64_t>(st.st_ino) == ino_ && size >= offset_
                          && pread_all(fd, head.data(), head.size(), 0) && head == head_;
        if (!same) {
            if (offset_ > 0 && restart) {
                restart();
            }
            dev_ = static_cast<std::uint64_t>(st.st_dev);
            ino_ = static_cast<std::uint64_t>(st.st_ino);
            offset_ = 0;
            head_.clear();
        }
        std::string buf;
        std::uint64_t at = offset_; // file offset of buf[0]
        while (at + buf.size() < size) {
            const auto n = static_cast<std::size_t>(
                std::min<std::uint64_t>(READ_BLOCK, size - at - buf.size()));
            const auto had = buf.size();
            buf.resize(had + n);
            if (!pread_all(fd, buf.data() + had, n, at + had)) {
                return false;
            }
            bytes_read_ += n;
            if (head_.size() < HEAD_KEPT && at == 0) {
                head_ = buf.substr(0, std::min(buf.size(), HEAD_KEPT));
            }
            std::size_t from = 0;
            while (const void* nl = std::memchr(buf.data() + from, '\n', buf.size() - from)) {
                const auto end =
                    static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data());
                on_line(std::string_view(buf.data() + from, end - from), at + from);
                from = end + 1;
            }
            at += from;
            buf.erase(0, from);
        }
        offset_ = at;
        if (head_.size() > offset_) {
            head_.resize(static_cast<std::size_t>(offset_)); // only what whole lines cover
        }
        return true;
    }

    std::uint64_t dev_{}, ino_{}, offset_{}, bytes_read_{};
    std::string head_; // the first min(offset_, HEAD_KEPT) bytes as read
};

// What a sub-agent file says of itself: its rows, the session it belongs to, its first prompt.
struct AgentFile {
    std::uint64_t rows{};
    std::string session_id;
    std::string prompt;
    int head{}; // rows looked at for the two above

    // One whole line of the file.
    void see(std::string_view line) {
        if (line.empty() || line.front() != '{') {
            return;
        }
        ++rows;
        if (head++ < HEAD_ROWS && (session_id.empty() || prompt.empty())) {
            if (auto row = parse_object(line)) {
                if (session_id.empty()) {
                    session_id = str_of(*row, "sessionId");
                }
                if (prompt.empty() && str_of(*row, "type") == "user") {
                    prompt = prompt_of(*row);
                }
            }
        }
    }
};

std::optional<AgentFile> read_agent_file(const fs::path& p) {
    AgentFile a;
    // Whole lines only: a row still being written is left out, as the transcript reader waits
    // for it.
    if (!GrowingFile{}.read_on(p, [&a](std::string_view line, std::uint64_t) { a.see(line); })) {
        return std::nullopt;
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
        std::vector<std::pair<std::uint64_t, std::uint64_t>> spans; // (offset, length) per row
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
            chains.push_back(Chain{std::string(INLINE_PREFIX) + uuid, prompt_of(row), 0, {}});
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

// One whole line of the session file at `offset`: its Task calls and results, and its inline
// sub-agents' chains (each keeping where its rows are).
void see_session_line(TaskCalls& t, std::string_view line, std::uint64_t offset) {
    // Only lines that can be a Task call, its result or a sub-agent's row are parsed.
    const bool result = line.find("\"agentId\":\"") != std::string_view::npos;
    const bool call = line.find("\"name\":\"Task\"") != std::string_view::npos
                      || line.find("\"name\":\"Agent\"") != std::string_view::npos;
    const bool side = line.find("\"isSidechain\":true") != std::string_view::npos;
    if (!result && !call && !side) {
        return;
    }
    auto row = parse_object(line);
    if (!row) {
        return;
    }
    const auto* flag = row->if_contains("isSidechain");
    if (flag != nullptr && flag->is_bool() && flag->get_bool()) {
        if (const auto at = t.chain(*row)) {
            t.chains[*at].spans.emplace_back(offset, line.size());
        }
        return; // a sub-agent's own calls are not its session's
    }
    t.see(*row);
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

// What SubagentIndex keeps (guarded by mu).
struct SubagentIndex::State {
    explicit State(fs::path f)
        : session_file(std::move(f)) {}

    std::mutex mu;
    fs::path session_file;
    GrowingFile session;
    TaskCalls calls;
    std::map<fs::path, std::pair<GrowingFile, AgentFile>> agents; // sub-agent files seen

    void catch_up() {
        session.read_on(
            session_file,
            [this](std::string_view line, std::uint64_t offset) {
                see_session_line(calls, line, offset);
            },
            [this] { calls = TaskCalls{}; });
    }

    // The sub-agent file `p`, read on (a file seen before is read only where it grew).
    std::optional<AgentFile>
    agent(const fs::path& p, std::map<fs::path, std::pair<GrowingFile, AgentFile>>& kept) {
        auto it = agents.find(p);
        auto entry =
            it != agents.end() ? std::move(it->second) : std::pair<GrowingFile, AgentFile>{};
        auto& a = entry.second;
        const bool ok = entry.first.read_on(
            p, [&a](std::string_view line, std::uint64_t) { a.see(line); }, [&a] { a = {}; });
        if (!ok) {
            return std::nullopt;
        }
        auto copy = a;
        kept[p] = std::move(entry);
        return copy;
    }
};

SubagentIndex::SubagentIndex(fs::path session_file)
    : file_(session_file)
    , state_(std::make_unique<State>(std::move(session_file))) {
}

SubagentIndex::~SubagentIndex() = default;

std::uint64_t SubagentIndex::session_bytes_read() const {
    std::lock_guard lock(state_->mu);
    return state_->session.bytes_read();
}

std::optional<std::vector<std::string>> SubagentIndex::inline_rows(std::string_view agent_id) {
    if (!agent_id.starts_with(INLINE_PREFIX) || !valid_agent_id(agent_id)) {
        return std::nullopt;
    }
    std::lock_guard lock(state_->mu);
    state_->catch_up();
    const auto& chains = state_->calls.chains;
    const auto it =
        std::find_if(chains.begin(), chains.end(), [&](const auto& c) { return c.id == agent_id; });
    if (it == chains.end()) {
        return std::nullopt;
    }
    std::vector<std::string> rows;
    std::ifstream in(state_->session_file, std::ios::binary);
    for (const auto& [offset, length] : it->spans) {
        std::string line(static_cast<std::size_t>(length), '\0');
        in.seekg(static_cast<std::streamoff>(offset));
        if (!in.read(line.data(), static_cast<std::streamsize>(length))) {
            return std::nullopt; // changed under us: the next request reads it again
        }
        rows.push_back(std::move(line));
    }
    return rows;
}

std::optional<std::vector<std::string>>
read_inline_subagent(const fs::path& session_file, std::string_view agent_id) {
    return SubagentIndex(session_file).inline_rows(agent_id);
}

std::vector<Subagent> list_subagents(const fs::path& session_file) {
    return SubagentIndex(session_file).list();
}

std::vector<Subagent> SubagentIndex::list() {
    std::lock_guard lock(state_->mu);
    auto& st = *state_;
    const auto& session_file = st.session_file;
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
    std::map<fs::path, std::pair<GrowingFile, AgentFile>> kept; // the files still there
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
        if (auto a = st.agent(p, kept)) {
            prompts.push_back(add(id, p, std::move(*a)));
        }
    }
    for (const auto& [id, p] : old) {
        auto a = st.agent(p, kept);
        const bool known = std::any_of(
            out.begin(), out.end(), [&id = id](const Subagent& s) { return s.agent_id == id; });
        if (a && a->session_id == session && !known) {
            prompts.push_back(add(id, p, std::move(*a)));
        }
    }
    st.agents = std::move(kept);
    st.catch_up();
    const auto& calls = st.calls;
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
