// UsageScanner: Claude Code sessions counted into the usage ledger in the background
// (hub/usage_scanner.hpp).
#include <sluice/core/file_read.hpp>
#include <sluice/hub/claude_projects.hpp>
#include <sluice/hub/usage_scanner.hpp>

#include <boost/json.hpp>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace sluice::hub {

namespace json = boost::json;

namespace {

// The scanner's thread yields to seats' work: it runs at this nice value (Linux: per thread).
constexpr int SCANNER_NICE = 10;

// A session's sub-agent files, sorted (after the session's own file, as ccusage reads them).
std::vector<std::filesystem::path> subagent_files(const std::filesystem::path& session_file) {
    std::vector<std::filesystem::path> out;
    const auto dir = session_file.parent_path() / session_file.stem() / "subagents";
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        std::error_code fec;
        if (e.is_regular_file(fec) && e.path().extension() == ".jsonl") {
            out.push_back(e.path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

struct UsageScanner::Session {
    Session(std::shared_ptr<const PriceTable> prices, std::string session_id)
        : counter(std::move(prices), session_id)
        , id(std::move(session_id)) {}

    ClaudeUsageCounter counter;
    std::string id;
    bool project_known{false};
    std::map<std::string, FileAt> files; // path → how far it was read
    // What this session added to the ledger: (day, model) → tokens, cost, unpriced.
    std::map<std::tuple<std::string, std::string>, UsageDelta> added;
};

UsageScanner::UsageScanner(std::shared_ptr<UsageLedger> ledger)
    : ledger_(std::move(ledger))
    , backlog_("usage", USAGE_SCAN_QUEUE_MAX, SCANNER_NICE) {
}

UsageScanner::~UsageScanner() {
    stop();
}

void UsageScanner::changed(const std::filesystem::path& file) {
    {
        std::lock_guard lock(mu_);
        if (!queued_.insert(file.string()).second) {
            return; // its task reads the file as it is when it runs
        }
    }
    const auto added = backlog_.add([this, file] { scan_queued(file); });
    if (added != Backlog::Added::queued) {
        {
            std::lock_guard lock(mu_);
            queued_.erase(file.string());
        }
        if (added == Backlog::Added::full) {
            spdlog::warn(
                "usage: {} waits for its next change: the scan queue is full", file.string());
        }
    }
}

void UsageScanner::wait_idle() {
    backlog_.wait_idle();
}

void UsageScanner::stop() {
    backlog_.stop();
}

void UsageScanner::scan_queued(const std::filesystem::path& file) {
    {
        std::lock_guard lock(mu_);
        queued_.erase(file.string()); // a change from now on queues it again
    }
    try {
        scan(file);
    } catch (const std::exception& e) {
        spdlog::error("usage: scanning {}: {}", file.string(), e.what());
    }
}

void UsageScanner::scan(const std::filesystem::path& file) {
    auto& slot = sessions_[file.string()];
    if (!slot) {
        slot = std::make_unique<Session>(ledger_->prices(), file.stem().string());
    }
    auto& s = *slot;
    // Twice at most: a file found truncated or replaced takes the session back and reads it all.
    for (int pass = 0; pass < 2; ++pass) {
        bool whole = true;
        auto files = subagent_files(file);
        files.insert(files.begin(), file);
        for (const auto& f : files) {
            if (!read_file(s, f)) {
                whole = false;
                break;
            }
        }
        if (whole) {
            break;
        }
        spdlog::info("usage: {} was truncated or replaced: counted again", file.string());
        take_back(s);
    }
    s.counter.trim(USAGE_DEDUP_IDLE);
}

void UsageScanner::take_back(Session& s) {
    const auto seat = foreign_seat_id(s.id);
    for (auto& [key, d] : s.added) {
        UsageDelta back;
        back.day = d.day;
        back.model = d.model;
        back.tokens -= d.tokens;
        back.cost_usd = -d.cost_usd;
        back.unpriced_tokens = -d.unpriced_tokens;
        ledger_->add(seat, back);
    }
    s.added.clear();
    s.files.clear();
    s.counter = ClaudeUsageCounter(ledger_->prices(), s.id);
}

bool UsageScanner::read_file(Session& s, const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return true; // gone: what it added stays (a removed session's cost was spent)
    }

    struct stat st {};

    if (::fstat(fd, &st) != 0) {
        ::close(fd);
        return true;
    }
    auto& at = s.files[path.string()];
    const auto size = static_cast<std::uint64_t>(st.st_size);
    const auto dev = static_cast<std::uint64_t>(st.st_dev);
    const auto ino = static_cast<std::uint64_t>(st.st_ino);
    if ((at.ino != 0 && (at.ino != ino || at.dev != dev)) || size < at.offset) {
        ::close(fd);
        return false;
    }
    at.dev = dev;
    at.ino = ino;
    const auto seat = foreign_seat_id(s.id);
    std::vector<UsageDelta> deltas;
    const auto apply = [&] {
        for (auto& d : deltas) {
            ledger_->add(seat, d);
            auto& mine = s.added[{d.day, d.model}];
            mine.day = d.day;
            mine.model = d.model;
            mine.tokens += d.tokens;
            mine.cost_usd += d.cost_usd;
            mine.unpriced_tokens += d.unpriced_tokens;
        }
        deltas.clear();
    };
    const auto note_project = [&](std::string_view line) {
        if (s.project_known || line.find(R"("cwd":")") == std::string_view::npos) {
            return;
        }
        boost::system::error_code ec;
        auto v = json::parse(line, ec);
        if (!ec && v.is_object()) {
            if (const auto* cwd = v.get_object().if_contains("cwd"); cwd && cwd->is_string()) {
                ledger_->set_project(seat, std::string(cwd->get_string()));
                s.project_known = true;
            }
        }
    };
    std::string buf;
    std::uint64_t pos = at.offset;
    bool skipping = false; // inside a line longer than USAGE_SCAN_LINE_MAX_BYTES
    while (pos < size) {
        if (backlog_.stopping()) {
            break;
        }
        const auto n =
            static_cast<std::size_t>(std::min<std::uint64_t>(USAGE_SCAN_CHUNK_BYTES, size - pos));
        const auto old = buf.size();
        buf.resize(old + n);
        if (!pread_all(fd, buf.data() + old, n, pos)) {
            spdlog::warn("usage: cannot read {}", path.string());
            buf.resize(old);
            break;
        }
        pos += n;
        std::size_t start = 0;
        for (auto nl = buf.find('\n'); nl != std::string::npos; nl = buf.find('\n', start)) {
            const std::string_view line(buf.data() + start, nl - start);
            if (!skipping) {
                note_project(line);
                s.counter.line(line, deltas);
            }
            skipping = false;
            start = nl + 1;
        }
        buf.erase(0, start);
        if (buf.size() > USAGE_SCAN_LINE_MAX_BYTES) {
            skipping = true;
            buf.clear();
        }
        at.offset = pos - buf.size();
        apply();
    }
    // A last line without its newline: counted once it is whole JSON (ccusage reads it too).
    if (!buf.empty() && !skipping && pos == size) {
        boost::system::error_code ec;
        json::parse(buf, ec);
        if (!ec) {
            note_project(buf);
            s.counter.line(buf, deltas);
            at.offset = size;
            apply();
        }
    }
    ::close(fd);
    return true;
}

} // namespace sluice::hub
