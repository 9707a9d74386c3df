// Claude Code's projects folders as seats: bounded listing reads and the one inotify follower.
#include "ids.hpp"
#include "inotify_events.hpp"
#include "listing_rows.hpp"

#include <sluice/conversation/frame.hpp>
#include <sluice/conversation/turns.hpp>
#include <sluice/core/file_read.hpp>
#include <sluice/core/utf8.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/claude_projects.hpp>
#include <sluice/hub/codex_sessions.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/hub/search_indexer.hpp>
#include <sluice/hub/usage_scanner.hpp>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace sluice::hub {

namespace json = boost::json;

namespace {

std::string_view str_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view{};
}

// The texts of a user row: its string content, or each of its text blocks, until `fn` returns
// true. @return the text `fn` took (empty: none).
template <class Fn>
std::string_view find_user_text(const json::object& row, Fn&& fn) {
    const auto* m = row.if_contains("message");
    if (m == nullptr || !m->is_object()) {
        return {};
    }
    const auto* c = m->get_object().if_contains("content");
    if (c == nullptr) {
        return {};
    }
    if (c->is_string()) {
        return fn(std::string_view(c->get_string())) ? std::string_view(c->get_string())
                                                     : std::string_view{};
    }
    if (c->is_array()) {
        for (const auto& b : c->get_array()) {
            if (b.is_object() && str_of(b.get_object(), "type") == "text") {
                const auto text = str_of(b.get_object(), "text");
                if (fn(text)) {
                    return text;
                }
            }
        }
    }
    return {};
}

// The text a person typed in a user row: its string content, or its first text block.
std::string_view prompt_text(const json::object& row) {
    return find_user_text(row, [](std::string_view) { return true; });
}

// What `<tag>…</tag>` holds in `text` (empty: no such tag, or not closed).
std::string_view tag_text(std::string_view text, std::string_view tag) {
    const std::string open = "<" + std::string(tag) + ">";
    const std::string close = "</" + std::string(tag) + ">";
    const auto at = text.find(open);
    if (at == std::string_view::npos) {
        return {};
    }
    const auto from = at + open.size();
    const auto to = text.find(close, from);
    return to == std::string_view::npos ? std::string_view{} : text.substr(from, to - from);
}

// The title of a user row the turn scan reads as a command (FrameRole::command): a slash
// command as typed (`/init`, then its `<command-args>`), `!` and a bash input, else the command's
// message. A session that starts with a command (`/init`, then its expanded prompt, `isMeta`)
// has no typed prompt to be titled from.
std::string command_title(const json::object& row) {
    const auto text = find_user_text(row, [](std::string_view t) {
        return !tag_text(t, "command-name").empty() || !tag_text(t, "bash-input").empty()
               || !tag_text(t, "command-message").empty();
    });
    if (const auto name = tag_text(text, "command-name"); !name.empty()) {
        const auto args = tag_text(text, "command-args");
        return trim_title(std::string(name) + " " + std::string(args));
    }
    if (const auto input = tag_text(text, "bash-input"); !input.empty()) {
        return trim_title("!" + std::string(input));
    }
    return trim_title(tag_text(text, "command-message"));
}

// Splits `s` into its lines; a piece with no newline at the end is left out unless `last_too`.
template <class Fn>
void for_each_line(std::string_view s, bool last_too, Fn&& fn) {
    std::size_t at = 0;
    while (at < s.size()) {
        const auto nl = s.find('\n', at);
        if (nl == std::string_view::npos) {
            if (last_too) {
                fn(s.substr(at));
            }
            return;
        }
        fn(s.substr(at, nl - at));
        at = nl + 1;
    }
}

// Title rows: Claude Code's own titles (custom, then generated), then its summary rows.
struct Titles {
    std::string custom, ai, summary;

    void see(const json::object& o) {
        const auto type = str_of(o, "type");
        if (type == "custom-title" && !str_of(o, "customTitle").empty()) {
            custom = str_of(o, "customTitle");
        } else if (type == "ai-title" && !str_of(o, "aiTitle").empty()) {
            ai = str_of(o, "aiTitle");
        } else if (type == "summary" && !str_of(o, "summary").empty()) {
            summary = str_of(o, "summary");
        }
    }

    [[nodiscard]] std::string best() const {
        return !custom.empty() ? custom : (!ai.empty() ? ai : summary);
    }
};

bool read_at(int fd, std::string& out, std::uint64_t offset, std::size_t n) {
    out.assign(n, '\0');
    return pread_all(fd, out.data(), n, offset);
}

} // namespace

std::string trim_title(std::string_view text) {
    std::string out;
    bool space = false;
    for (const char c : text) {
        const bool ws = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
        if (ws) {
            space = !out.empty();
            continue;
        }
        if (space) {
            out += ' ';
            space = false;
        }
        out += c;
    }
    if (out.size() > FOREIGN_TITLE_MAX_BYTES) {
        out.resize(utf8::floor_boundary(out, FOREIGN_TITLE_MAX_BYTES));
        out += "…";
    }
    return out;
}

namespace {

// Reads a title row of a piece the listing does not scan whole (the tail, the head past what it
// needs): only lines that can be title rows are parsed.
void see_title_line(std::string_view line, Titles& titles) {
    if (line.find("title\"") == std::string_view::npos
        && line.find("\"summary\"") == std::string_view::npos) {
        return;
    }
    if (auto row = read_listing_row(line)) {
        titles.see(*row);
    }
}

// The listing's scan of a head: project, title rows, the first prompt, the turns. Rows are read
// by read_listing_row (the fields the scan reads, no DOM of the row), then classified by the
// frame's own rules (Frame::from_row), so the count is the turn scan's.
struct HeadScan {
    std::string project;
    Titles titles;
    TurnScan scan;
    std::string first_prompt;
    std::string first_command; // the title when no prompt was typed before the head ends
    std::uint64_t turns = 0;

    void feed(std::string_view line) {
        auto row = read_listing_row(line);
        if (!row) {
            return;
        }
        if (project.empty()) {
            project = str_of(*row, "cwd");
        }
        titles.see(*row);
        if (const auto f = feed_turn_scan(std::move(*row), scan)) {
            ++turns;
            if (first_prompt.empty() && f->facts().role == FrameRole::prompt) {
                first_prompt = trim_title(prompt_text(f->row()));
            } else if (first_command.empty() && f->facts().role == FrameRole::command) {
                first_command = command_title(f->row());
            }
        }
    }

    // Whether a head cut short needs nothing more than title rows.
    [[nodiscard]] bool has_all_but_titles() const {
        return !project.empty() && !first_prompt.empty();
    }
};

// Bytes of a whole file `text` whose turns a listing counted: through its last newline, and a
// last line without one when it is a whole row (a line still being written is counted when its
// end comes, from the offset returned).
std::uint64_t counted_through(std::string_view text) {
    const auto nl = text.rfind('\n');
    const std::size_t lines = nl == std::string_view::npos ? 0 : nl + 1;
    return lines < text.size() && !read_listing_row(text.substr(lines)) ? lines : text.size();
}

} // namespace

std::uint64_t count_turns(std::string_view jsonl) {
    HeadScan h;
    for_each_line(jsonl, true, [&](std::string_view line) { h.feed(line); });
    return h.turns;
}

ForeignListing parse_listing(std::string_view head, std::string_view tail, bool whole) {
    ForeignListing l;
    HeadScan h;
    for_each_line(head, whole, [&](std::string_view line) {
        if (!whole && h.has_all_but_titles()) {
            see_title_line(line, h.titles); // turns are not counted from a head cut short
        } else {
            h.feed(line);
        }
    });
    if (!whole) {
        // The tail's first piece is cut; its newest title rows win over the head's.
        const auto nl = tail.find('\n');
        tail = nl == std::string_view::npos ? std::string_view{} : tail.substr(nl + 1);
        for_each_line(tail, false, [&](std::string_view line) { see_title_line(line, h.titles); });
    } else {
        l.turns = h.turns;
        l.scan = std::move(h.scan);
        l.counted = counted_through(head);
    }
    l.project = std::move(h.project);
    l.title = trim_title(h.titles.best());
    if (l.title.empty()) {
        l.title = std::move(h.first_prompt);
    }
    if (l.title.empty()) {
        l.title = std::move(h.first_command);
    }
    return l;
}

bool is_session_file_name(std::string_view name) {
    constexpr std::string_view EXT = ".jsonl";
    if (name.size() <= EXT.size() || !name.ends_with(EXT) || name.starts_with("agent-")) {
        return false;
    }
    return valid_id(foreign_seat_id(name.substr(0, name.size() - EXT.size())));
}

std::string foreign_seat_id(std::string_view session_id) {
    return "c-" + std::string(session_id);
}

std::string_view foreign_source(const ForeignListing& listing) noexcept {
    return listing.format == RowFormat::codex_rollout ? "codex" : "claude";
}

std::optional<ForeignListing>
list_session_file(const std::filesystem::path& file, RowFormat format) {
    const bool codex = format == RowFormat::codex_rollout;
    // A rollout has no title rows to find in its tail: its head holds the session meta and the
    // first prompt.
    const std::size_t head_bytes = codex ? CODEX_LIST_HEAD_BYTES : FOREIGN_LIST_HEAD_BYTES;
    const std::size_t tail_bytes = codex ? 0 : FOREIGN_LIST_TAIL_BYTES;
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }

    struct stat st {};

    std::string head;
    std::string tail;
    bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    const auto size = ok ? static_cast<std::uint64_t>(st.st_size) : 0;
    const bool whole = size <= head_bytes + tail_bytes;
    if (ok) {
        ok = read_at(fd, head, 0, static_cast<std::size_t>(whole ? size : head_bytes));
    }
    if (ok && !whole && tail_bytes > 0) {
        ok = read_at(fd, tail, size - tail_bytes, tail_bytes);
    }
    ::close(fd);
    if (!ok) {
        return std::nullopt;
    }
    auto l = codex ? parse_rollout_listing(head, whole) : parse_listing(head, tail, whole);
    l.session_id = codex ? rollout_session_id(file.filename().string()) : file.stem().string();
    l.size = size;
    if (!whole) {
        count_larger_file(file, l); // bounded (listing_count.cpp)
    }
    l.mtime = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::seconds(st.st_mtim.tv_sec)
            + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
    return l;
}

bool relist_if_changed(const std::filesystem::path& file, ForeignListing& listing) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    if (ec || size == listing.size) {
        return false;
    }
    // Listed again (bounded) while it lacks its project or title: a new session's first rows.
    auto again = listing.project.empty() || listing.title.empty()
                     ? list_session_file(file, listing.format)
                     : std::nullopt;
    if (again) {
        listing = std::move(*again);
    } else if (size > listing.size) {
        listing.size = size;
        count_appended(file, listing); // only what was appended, bounded (listing_count.cpp)
    } else {
        listing.size = size; // shrunk: a rewritten file, counted again when opened
        listing.turns.reset();
    }
    return true;
}

// ---- the follower ----------------------------------------------------------------------------

struct ClaudeProjects::Impl : std::enable_shared_from_this<Impl> {
    Impl(net::io_context& io, Hub& h, std::vector<std::filesystem::path> d)
        : hub(h)
        , dirs(std::move(d))
        , strand(net::make_strand(io))
        , notify(strand)
        , usage(h.usage()) {}

    Hub& hub;
    std::vector<std::filesystem::path> dirs;
    net::strand<net::io_context::executor_type> strand;
    net::posix::stream_descriptor notify;
    // Counts every session's usage in the background (its own thread), as files appear and grow.
    UsageScanner usage;
    std::array<char, 64 * 1024> buf{};
    // Guarded by mu (start runs before the io_context, events on the strand after).
    std::mutex mu;
    std::unordered_map<int, std::filesystem::path> roots;    // wd → a projects folder
    std::unordered_map<int, std::filesystem::path> projects; // wd → a project folder in it
    std::unordered_map<std::string, std::string> by_path;    // session file → its seat id

    static constexpr std::uint32_t PROJECT_EVENTS =
        IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR;
    static constexpr std::uint32_t ROOT_EVENTS = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR;

    // The search index reads what the file gained (its own thread; the offset it keeps).
    void
    search_changed(const std::filesystem::path& file, const std::string& id, std::string project) {
        if (const auto& search = hub.search()) {
            search->changed(file, SearchTarget{id, "", "claude", std::move(project), false, false});
        }
    }

    std::size_t file_seen(const std::filesystem::path& file) {
        auto key = file.string();
        std::optional<std::string> id;
        {
            std::lock_guard lock(mu);
            if (auto it = by_path.find(key); it != by_path.end()) {
                id = it->second;
            }
        }
        usage.changed(file);
        if (id) {
            hub.foreign_changed(*id);
            search_changed(file, *id, {});
            return 0;
        }
        auto listing = list_session_file(file);
        if (!listing) {
            return 0;
        }
        auto project = listing->project;
        id = hub.add_foreign(file, std::move(*listing));
        if (!id) {
            return 0; // the same session id under another folder: listed once
        }
        search_changed(file, *id, std::move(project));
        std::lock_guard lock(mu);
        by_path.emplace(std::move(key), std::move(*id));
        return 1;
    }

    std::size_t project_seen(const std::filesystem::path& dir) {
        const int wd =
            notify.is_open()
                ? ::inotify_add_watch(notify.native_handle(), dir.c_str(), PROJECT_EVENTS)
                : -1;
        if (wd < 0 && notify.is_open()) {
            spdlog::warn("cannot watch {}: {}", dir.string(), std::strerror(errno));
        } else {
            std::lock_guard lock(mu);
            projects[wd] = dir;
        }
        std::vector<std::filesystem::path> files;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
            std::error_code fec;
            if (e.is_regular_file(fec) && is_session_file_name(e.path().filename().string())) {
                files.push_back(e.path());
            }
        }
        std::sort(files.begin(), files.end());
        std::size_t n = 0;
        for (const auto& f : files) {
            n += file_seen(f);
        }
        return n;
    }

    std::size_t root_seen(const std::filesystem::path& root) {
        std::vector<std::filesystem::path> subdirs;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
            std::error_code dec;
            if (e.is_directory(dec)) {
                subdirs.push_back(e.path());
            }
        }
        if (ec) {
            spdlog::warn("cannot list {}: {}", root.string(), ec.message());
        }
        std::sort(subdirs.begin(), subdirs.end());
        std::size_t n = 0;
        for (const auto& d : subdirs) {
            n += project_seen(d);
        }
        return n;
    }

    void on_event(int wd, std::uint32_t mask, const std::string& name) {
        if ((mask & IN_Q_OVERFLOW) != 0) {
            rescan(); // events were lost: look at everything again
            return;
        }
        if (name.empty()) {
            return;
        }
        std::filesystem::path dir;
        bool is_root = false;
        {
            std::lock_guard lock(mu);
            if (auto it = roots.find(wd); it != roots.end()) {
                dir = it->second;
                is_root = true;
            } else if (auto jt = projects.find(wd); jt != projects.end()) {
                dir = jt->second;
            } else {
                return;
            }
        }
        if (is_root) {
            if ((mask & IN_ISDIR) != 0) {
                project_seen(dir / name);
            }
            return;
        }
        if ((mask & IN_ISDIR) == 0 && is_session_file_name(name)) {
            file_seen(dir / name);
        }
    }

    void rescan() {
        std::vector<std::string> ids;
        {
            std::lock_guard lock(mu);
            for (const auto& [path, id] : by_path) {
                ids.push_back(id);
            }
        }
        for (const auto& id : ids) {
            hub.foreign_changed(id);
        }
        for (const auto& root : dirs) {
            root_seen(root);
        }
    }

    void read_events() {
        notify.async_read_some(
            net::buffer(buf),
            [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                if (ec) {
                    if (ec != net::error::operation_aborted) {
                        spdlog::error("the projects watch stopped: {}", ec.message());
                    }
                    return;
                }
                for_each_inotify_event(
                    self->buf.data(),
                    n,
                    [&self](int wd, std::uint32_t mask, const std::string& name) {
                        try {
                            self->on_event(wd, mask, name);
                        } catch (const std::exception& e) {
                            spdlog::error("projects watch: {}", e.what());
                        }
                    });
                self->read_events();
            });
    }
};

ClaudeProjects::ClaudeProjects(
    net::io_context& io, Hub& hub, std::vector<std::filesystem::path> dirs)
    : impl_(std::make_shared<Impl>(io, hub, std::move(dirs))) {
}

ClaudeProjects::~ClaudeProjects() {
    try {
        stop();
    } catch (const std::exception& e) {
        spdlog::error("projects watch: {}", e.what()); // the descriptor closes with the impl
    }
}

std::size_t ClaudeProjects::start() {
    const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) {
        spdlog::error("inotify_init1 failed: {}", std::strerror(errno));
    } else {
        impl_->notify.assign(fd);
    }
    std::size_t n = 0;
    for (const auto& root : impl_->dirs) {
        if (impl_->notify.is_open()) {
            const int wd =
                ::inotify_add_watch(impl_->notify.native_handle(), root.c_str(), Impl::ROOT_EVENTS);
            if (wd < 0) {
                spdlog::warn("cannot watch {}: {}", root.string(), std::strerror(errno));
            } else {
                std::lock_guard lock(impl_->mu);
                impl_->roots[wd] = root;
            }
        }
        n += impl_->root_seen(root);
    }
    if (impl_->notify.is_open()) {
        impl_->read_events();
    }
    return n;
}

void ClaudeProjects::stop() {
    impl_->usage.stop();
    net::post(impl_->strand, [impl = impl_] {
        boost::system::error_code ignored;
        impl->notify.close(ignored);
    });
}

} // namespace sluice::hub
