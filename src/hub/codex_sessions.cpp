// Codex sessions folders as seats: a rollout's listing and the one inotify follower of the tree.
#include "ids.hpp"
#include "inotify_events.hpp"
#include "listing_rows.hpp"

#include <sluice/conversation/codex_rollout.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/codex_sessions.hpp>
#include <sluice/hub/hub.hpp>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>

#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace sluice::hub {

namespace {

constexpr std::string_view ROLLOUT_PREFIX = "rollout-";
constexpr std::string_view ROLLOUT_EXT = ".jsonl";
constexpr std::size_t UUID_CHARS = 36;

// Whether `s` is a UUID's text (8-4-4-4-12 hex digits).
bool is_uuid(std::string_view s) {
    if (s.size() != UUID_CHARS) {
        return false;
    }
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        if (dash ? c != '-' : !hex) {
            return false;
        }
    }
    return true;
}

} // namespace

bool is_rollout_file_name(std::string_view name) {
    return !rollout_session_id(name).empty();
}

std::string rollout_session_id(std::string_view name) {
    if (!name.starts_with(ROLLOUT_PREFIX) || !name.ends_with(ROLLOUT_EXT)
        || name.size() < ROLLOUT_PREFIX.size() + UUID_CHARS + 1 + ROLLOUT_EXT.size()) {
        return {};
    }
    const auto stem = name.substr(0, name.size() - ROLLOUT_EXT.size());
    const auto id = stem.substr(stem.size() - UUID_CHARS);
    // `-` before the id: the date and time come first.
    return stem[stem.size() - UUID_CHARS - 1] == '-' && is_uuid(id) ? std::string(id)
                                                                    : std::string();
}

std::string codex_seat_id(std::string_view thread_id) {
    return "codex-" + std::string(thread_id);
}

ForeignListing parse_rollout_listing(std::string_view head, bool whole) {
    ForeignListing l;
    l.format = RowFormat::codex_rollout;
    std::uint64_t turns = 0;
    std::size_t at = 0;
    // Whole lines only: a last piece without its newline is still being written (or cut by the
    // head's end); a whole file's is counted once its newline comes (count_appended).
    for (auto nl = head.find('\n'); nl != std::string_view::npos; nl = head.find('\n', at)) {
        const auto line = head.substr(at, nl - at);
        at = nl + 1;
        if (l.project.empty()) {
            if (auto meta = codex_session_meta(line)) {
                l.project = std::move(meta->cwd);
                continue;
            }
        }
        if (l.title.empty()) {
            if (auto prompt = codex_prompt_text(line)) {
                l.title = trim_title(*prompt);
            }
        }
        if (!whole) {
            if (!l.project.empty() && !l.title.empty()) {
                break; // turns are not counted from a head cut short
            }
            continue;
        }
        if (auto row = codex_frame_row(line); row && feed_turn_scan(std::move(*row), l.scan)) {
            ++turns;
        }
    }
    if (whole) {
        l.turns = turns;
        l.counted = at;
    }
    return l;
}

// ---- the follower ----------------------------------------------------------------------------

struct CodexSessions::Impl : std::enable_shared_from_this<Impl> {
    Impl(net::io_context& io, Hub& h, std::vector<std::filesystem::path> d)
        : hub(h)
        , dirs(std::move(d))
        , strand(net::make_strand(io))
        , notify(strand) {}

    Hub& hub;
    std::vector<std::filesystem::path> dirs;
    net::strand<net::io_context::executor_type> strand;
    net::posix::stream_descriptor notify;
    std::array<char, 64 * 1024> buf{};

    // A watched folder: where it is and how deep below its sessions folder (0: the folder).
    struct Watched {
        std::filesystem::path dir;
        int depth{};
    };

    // Guarded by mu (start runs before the io_context, events on the strand after).
    std::mutex mu;
    std::unordered_map<int, Watched> watched;             // wd → folder
    std::unordered_map<std::string, std::string> by_path; // rollout file → its seat id

    // A day folder's events (its rollouts are written and appear); a folder above it only
    // gains folders.
    static constexpr std::uint32_t DAY_EVENTS =
        IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR;
    static constexpr std::uint32_t TREE_EVENTS = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR;

    std::size_t file_seen(const std::filesystem::path& file) {
        auto key = file.string();
        std::optional<std::string> id;
        {
            std::lock_guard lock(mu);
            if (auto it = by_path.find(key); it != by_path.end()) {
                id = it->second;
            }
        }
        if (id) {
            hub.foreign_changed(*id);
            return 0;
        }
        auto listing = list_session_file(file, RowFormat::codex_rollout);
        if (!listing || listing->session_id.empty()) {
            return 0;
        }
        id = hub.add_foreign(file, std::move(*listing));
        if (!id) {
            return 0; // the same thread under another folder: listed once
        }
        std::lock_guard lock(mu);
        by_path.emplace(std::move(key), std::move(*id));
        return 1;
    }

    // Watches `dir` (at `depth`) and lists what it holds: the rollouts of a day folder, the
    // folders of one above it.
    std::size_t dir_seen(const std::filesystem::path& dir, int depth) {
        const bool day = depth == CODEX_SESSIONS_DEPTH;
        if (notify.is_open()) {
            const int wd = ::inotify_add_watch(
                notify.native_handle(), dir.c_str(), day ? DAY_EVENTS : TREE_EVENTS);
            if (wd < 0) {
                spdlog::warn("cannot watch {}: {}", dir.string(), std::strerror(errno));
            } else {
                std::lock_guard lock(mu);
                watched[wd] = Watched{dir, depth};
            }
        }
        std::vector<std::filesystem::path> entries;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
            std::error_code tec;
            const bool wanted =
                day ? e.is_regular_file(tec) && is_rollout_file_name(e.path().filename().string())
                    : e.is_directory(tec);
            if (wanted) {
                entries.push_back(e.path());
            }
        }
        if (ec) {
            spdlog::warn("cannot list {}: {}", dir.string(), ec.message());
        }
        std::sort(entries.begin(), entries.end());
        std::size_t n = 0;
        for (const auto& p : entries) {
            n += day ? file_seen(p) : dir_seen(p, depth + 1);
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
        Watched at;
        {
            std::lock_guard lock(mu);
            const auto it = watched.find(wd);
            if (it == watched.end()) {
                return;
            }
            at = it->second;
        }
        if (at.depth < CODEX_SESSIONS_DEPTH) {
            if ((mask & IN_ISDIR) != 0) {
                dir_seen(at.dir / name, at.depth + 1); // a new day (or month, or year)
            }
        } else if ((mask & IN_ISDIR) == 0 && is_rollout_file_name(name)) {
            file_seen(at.dir / name);
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
            dir_seen(root, 0); // a folder watched again keeps its descriptor (inotify)
        }
    }

    void read_events() {
        notify.async_read_some(
            net::buffer(buf),
            [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                if (ec) {
                    if (ec != net::error::operation_aborted) {
                        spdlog::error("the codex sessions watch stopped: {}", ec.message());
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
                            spdlog::error("codex sessions watch: {}", e.what());
                        }
                    });
                self->read_events();
            });
    }
};

CodexSessions::CodexSessions(net::io_context& io, Hub& hub, std::vector<std::filesystem::path> dirs)
    : impl_(std::make_shared<Impl>(io, hub, std::move(dirs))) {
}

CodexSessions::~CodexSessions() {
    try {
        stop();
    } catch (const std::exception& e) {
        spdlog::error("codex sessions watch: {}", e.what()); // the descriptor closes with the impl
    }
}

std::size_t CodexSessions::start() {
    const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) {
        spdlog::error("inotify_init1 failed: {}", std::strerror(errno));
    } else {
        impl_->notify.assign(fd);
    }
    std::size_t n = 0;
    for (const auto& root : impl_->dirs) {
        n += impl_->dir_seen(root, 0);
    }
    if (impl_->notify.is_open()) {
        impl_->read_events();
    }
    return n;
}

void CodexSessions::stop() {
    net::post(impl_->strand, [impl = impl_] {
        boost::system::error_code ignored;
        impl->notify.close(ignored);
    });
}

} // namespace sluice::hub
