// Hub: the seat registry — create (validated, nothing half-made), find, list, remove, restore.
#include "hub_writer.hpp"
#include "ids.hpp"
#include "seed.hpp"

#include <sluice/core/safe_write.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/hub/agent_kinds.hpp>
#include <sluice/hub/claude_projects.hpp>
#include <sluice/hub/file_source.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/hub/search_indexer.hpp>
#include <sluice/hub/seat_meta.hpp>

#include <boost/asio/post.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <map>
#include <set>

namespace sluice::hub {

Hub::Hub(net::io_context& io, HubConfig config)
    : io_(io)
    , config_(std::move(config))
    , writer_(std::make_shared<Writer>(std::max(WRITER_QUEUE_CAPACITY, 2 * config_.max_seats + 64)))
    , usage_(std::make_shared<UsageLedger>(config_.prices))
    , limits_(config_.limits ? config_.limits : std::make_shared<SpendLimits>()) {
    // What removed seats spent today stays in the day's budget, also across a restart.
    limits_->note_removed(read_removed_spend(removed_spend_file()));
    if (!config_.search_index.empty()) {
        try {
            search_ = std::make_shared<SearchIndexer>(
                config_.search_index, SearchTextOptions{config_.search_thinking});
        } catch (const std::exception& e) {
            // A cache: the hub serves without it (a read-only data dir still serves history).
            search_off_ = e.what();
            spdlog::warn("search is off: {}", search_off_);
        }
    }
}

Hub::~Hub() {
    writer_->drain(); // a create still on the writer refers to this hub
    if (search_) {
        search_->stop();
    }
}

SeatOptions Hub::seat_options(std::filesystem::path dir) const {
    return SeatOptions{
        std::move(dir),
        config_.make_agent,
        writer_,
        config_.max_queued_prompts,
        config_.sync_interval,
        config_.budget,
        config_.broker,
        turn_durations_,
        usage_,
        search_,
        config_.notifier,
        config_.notify_long_turn,
        limits_};
}

std::shared_ptr<Seat> Hub::add_mirror(SeatSpec spec, std::unique_ptr<Source> source) {
    std::lock_guard lock(mu_);
    if (auto it = seats_.find(spec.id); it != seats_.end()) {
        return it->second;
    }
    auto seat = Seat::open_fed(io_, std::move(spec), seat_options({}), std::move(source));
    seats_[seat->id()] = seat;
    order_.push_back(seat);
    return seat;
}

void Hub::remove_mirror(std::string_view id) {
    std::shared_ptr<Seat> seat;
    {
        std::lock_guard lock(mu_);
        auto it = seats_.find(std::string(id));
        if (it == seats_.end() || !it->second->mirror()) {
            return;
        }
        seat = it->second;
        seats_.erase(it);
        std::erase(order_, seat);
    }
    net::post(seat->strand(), [seat] { seat->close(); });
}

void Hub::add(std::shared_ptr<Seat> seat) {
    std::lock_guard lock(mu_);
    seats_[seat->id()] = seat;
    order_.push_back(std::move(seat));
}

std::filesystem::path Hub::seats_root() const {
    return config_.seats_dir.empty() ? config_.data_dir / "seats" : config_.seats_dir;
}

// A seat's folder opened as `restore` opens it: a damaged meta.json or transcript, or an agent
// kind this hub lacks, makes it an unavailable seat with its reason (never a throw).
std::shared_ptr<Seat> Hub::open_folder(const std::filesystem::path& dir) {
    auto spec = read_meta(dir);
    std::shared_ptr<Seat> seat;
    if (!spec) {
        SeatSpec placeholder;
        placeholder.id = dir.filename().string(); // a seat's folder is named by its id
        placeholder.name = placeholder.id;
        placeholder.agent.clear();
        placeholder.epoch = new_id("e");
        seat = Seat::open_unavailable(
            io_, std::move(placeholder), seat_options(dir), spec.error().message);
    } else if (auto opened = Seat::open(io_, *spec, seat_options(dir))) {
        seat = std::move(*opened);
    } else {
        seat = Seat::open_unavailable(
            io_, std::move(*spec), seat_options(dir), opened.error().message);
    }
    if (const auto s = seat->summary(); s.state == SeatState::unavailable) {
        spdlog::warn("seat {} is unavailable: {}", s.id, s.reason);
    } else if (search_ && spec) {
        announce_transcripts(*search_, dir, s.id, s.epoch, spec->cwd);
    }
    return seat;
}

std::size_t Hub::restore() {
    const auto root = seats_root();
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec)) {
        return 0;
    }
    std::vector<std::filesystem::path> dirs;
    for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
        std::error_code dec;
        if (entry.is_directory(dec) && valid_id(entry.path().filename().string())) {
            dirs.push_back(entry.path());
        }
    }
    std::sort(dirs.begin(), dirs.end());
    std::size_t listed = 0;
    for (const auto& dir : dirs) {
        try {
            add(open_folder(dir));
            ++listed;
        } catch (const std::exception& e) {
            spdlog::error("cannot list the seat in {}: {}", dir.string(), e.what());
        }
    }
    return listed;
}

std::vector<std::string> Hub::folder_ids() const {
    std::vector<std::string> ids;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(seats_root(), ec);
         !ec && it != std::filesystem::directory_iterator();
         it.increment(ec)) {
        auto name = it->path().filename().string();
        if (valid_id(name)) {
            ids.push_back(std::move(name));
        }
    }
    return ids;
}

void Hub::folder_ids(
    const net::any_io_executor& ex, std::function<void(Result<std::vector<std::string>>)> done) {
    on_writer<std::vector<std::string>>(
        [this]() -> Result<std::vector<std::string>> { return folder_ids(); }, ex, std::move(done));
}

void Hub::adopt(const std::string& id, const net::any_io_executor& ex, CreateDone done) {
    on_writer<std::shared_ptr<Seat>>(
        [this, id]() -> Result<std::shared_ptr<Seat>> {
            const auto dir = seats_root() / id;
            std::error_code ec;
            if (!valid_id(id) || !std::filesystem::exists(dir / "meta.json", ec)) {
                return Failure::of(errc::not_found, "no seat folder " + dir.string());
            }
            {
                // Checked before opening (an open may close a turn left open: never a hosted
                // seat's transcript). Adopts run on this writer one at a time and a seat made
                // meanwhile gets a new id: none is hosted under `id` between here and the swap.
                std::lock_guard lock(mu_);
                auto it = seats_.find(id);
                if (it != seats_.end() && !it->second->mirror()) {
                    return Failure::of(errc::conflict, "seat " + id + " is hosted here");
                }
            }
            auto seat = open_folder(dir);
            std::shared_ptr<Seat> mirror;
            {
                std::lock_guard lock(mu_);
                auto it = seats_.find(id);
                if (it != seats_.end()) {
                    // The mirror's place in the listing goes to the seat (its viewers' streams
                    // end; they reconnect to the seat itself).
                    mirror = it->second;
                    std::replace(order_.begin(), order_.end(), mirror, seat);
                } else {
                    order_.push_back(seat);
                }
                seats_[id] = seat;
            }
            if (mirror) {
                net::post(mirror->strand(), [mirror] { mirror->close(); });
            }
            return seat;
        },
        ex,
        std::move(done));
}

bool Hub::release(std::string_view id, std::unique_ptr<Source> placeholder) {
    std::shared_ptr<Seat> seat;
    std::shared_ptr<Seat> mirror;
    {
        std::lock_guard lock(mu_);
        auto it = seats_.find(std::string(id));
        if (it == seats_.end() || it->second->mirror() || it->second->foreign()) {
            return false;
        }
        seat = it->second;
        const auto s = seat->summary();
        SeatSpec spec;
        spec.id = s.id;
        spec.name = s.name;
        spec.agent = s.agent;
        spec.epoch = s.epoch;
        mirror = Seat::open_fed(io_, std::move(spec), seat_options({}), std::move(placeholder));
        it->second = mirror;
        std::replace(order_.begin(), order_.end(), seat, mirror);
    }
    net::post(seat->strand(), [seat] { seat->release(); });
    return true;
}

std::optional<Failure> Hub::check_spec(SeatSpec& spec) const {
    if (spec.agent.empty()) {
        spec.agent = "builtin";
    }
    if (spec.agent != "builtin" && spec.agent != "process" && !hosts_cli(spec.agent)) {
        return Failure::of(
            errc::bad_request, "field 'agent' must be " + std::string(AGENT_KINDS_TEXT));
    }
    if (!hosts_cli(spec.agent) && !spec.cwd.empty()) {
        return Failure::of(
            errc::bad_request, R"(field 'cwd' is for agents "claude", "codex" and "acp" only)");
    }
    if (!takes_agent_settings(spec.agent) && !spec.permission_mode.empty()) {
        return Failure::of(
            errc::bad_request,
            R"(field 'permission_mode' is for agents "claude" and "codex" only)");
    }
    if (spec.agent == "acp" && (spec.cmd.empty() || !spec.model.empty() || !spec.system.empty())) {
        return Failure::of(
            errc::bad_request,
            spec.cmd.empty() ? R"(agent "acp" needs field 'cmd': one of the command lines the hub )"
                               R"(allows (GET /v1/agents))"
                             : R"(fields 'model' and 'system' are not for agent "acp" (its own )"
                               R"(configuration chooses them))");
    }
    if (spec.agent != "acp" && !spec.cmd.empty()) {
        return Failure::of(errc::bad_request, R"(field 'cmd' is for agent "acp" only)");
    }
    spec.session_id.clear(); // learned from the agent, never taken from a client
    if (spec.name.size() > SEAT_NAME_MAX_BYTES) {
        return Failure::of(
            errc::bad_request,
            "field 'name' is over " + std::to_string(SEAT_NAME_MAX_BYTES) + " bytes");
    }
    if (spec.model.size() > SEAT_MODEL_MAX_BYTES) {
        return Failure::of(
            errc::bad_request,
            "field 'model' is over " + std::to_string(SEAT_MODEL_MAX_BYTES) + " bytes");
    }
    if (spec.system.size() > SEAT_SYSTEM_MAX_BYTES) {
        return Failure::of(
            errc::bad_request,
            "field 'system' is over " + std::to_string(SEAT_SYSTEM_MAX_BYTES) + " bytes");
    }
    {
        std::lock_guard lock(mu_);
        if (seats_.size() - foreign_seats_ >= config_.max_seats) {
            return Failure::of(
                errc::overloaded,
                "too many seats (at most " + std::to_string(config_.max_seats) + ")");
        }
    }
    return std::nullopt;
}

Result<std::shared_ptr<Seat>> Hub::create(SeatSpec spec) {
    if (auto refused = check_spec(spec)) {
        return *refused;
    }
    return make_seat(std::move(spec));
}

void Hub::create(SeatSpec spec, const net::any_io_executor& ex, CreateDone done) {
    if (auto refused = check_spec(spec)) {
        net::post(ex, [done = std::move(done), f = std::move(*refused)]() { done(f); });
        return;
    }
    make_on_writer(std::move(spec), ex, std::move(done));
}

void Hub::make_on_writer(
    SeatSpec spec, const net::any_io_executor& ex, CreateDone done, std::filesystem::path history) {
    // Its folder, first meta.json (two fsyncs) and transcript are made on the writer.
    on_writer<std::shared_ptr<Seat>>(
        [this, spec = std::move(spec), history = std::move(history)]() mutable {
            return make_seat(std::move(spec), history);
        },
        ex,
        std::move(done));
}

Result<std::shared_ptr<Seat>> Hub::make_seat(SeatSpec spec, const std::filesystem::path& history) {
    spec.id = new_id("s");
    spec.epoch = new_id("e");
    spec.turns = 0;
    if (spec.name.empty()) {
        spec.name = spec.id;
    }
    const auto dir = seats_root() / spec.id;
    const auto undo = [&dir] {
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
    };
    std::error_code fec;
    std::filesystem::create_directories(dir, fec);
    if (fec) {
        undo();
        return Failure::of(
            write_errc(boost::system::error_code(fec.value(), boost::system::system_category())),
            "cannot create " + dir.string() + ": " + fec.message());
    }
    // The seat's first write, before it is listed (on the writer when called by the async
    // create; on the caller's thread by the blocking one).
    if (auto w = write_meta(dir, spec); !w) {
        undo();
        return w.error();
    }
    if (!history.empty()) {
        // A codex seat continues a Codex rollout: its lines are read as the frames they mean.
        const auto format = spec.agent == "codex" ? RowFormat::codex_rollout : RowFormat::frames;
        if (auto seeded = seed_transcript(history, dir / "transcript.jsonl", format); !seeded) {
            undo();
            return seeded.error();
        }
    }
    auto seat = Seat::open(io_, std::move(spec), seat_options(dir));
    if (!seat) {
        undo();
        return seat.error();
    }
    if (const auto s = (*seat)->summary(); s.state == SeatState::unavailable) {
        undo(); // a client's choice of an agent kind this hub lacks is refused, not kept
        return Failure::of(errc::bad_request, s.reason);
    }
    add(*seat);
    return seat;
}

std::shared_ptr<Seat> Hub::find(std::string_view id) {
    std::lock_guard lock(mu_);
    const std::string key(id);
    if (auto it = seats_.find(key); it != seats_.end()) {
        return it->second;
    }
    auto it = foreign_.find(key);
    if (it == foreign_.end()) {
        return nullptr;
    }
    // Its first look-up: the seat is made now (nothing read yet; it opens at its first viewer).
    auto& l = it->second;
    auto seat = Seat::open_fed(
        io_,
        foreign_spec(key, l),
        seat_options(config_.data_dir / "foreign" / key),
        std::make_unique<FileSource>(l.file, l.listing),
        l.last_activity);
    l.seat = seat;
    l.listing = {}; // the seat's now
    seats_[key] = seat;
    order_.push_back(seat);
    ++foreign_seats_;
    return seat;
}

std::vector<std::shared_ptr<Seat>> Hub::list() const {
    std::lock_guard lock(mu_);
    return order_;
}

std::vector<SeatSummary> Hub::summaries() const {
    std::vector<std::shared_ptr<Seat>> seats;
    std::vector<SeatSummary> out;
    {
        std::lock_guard lock(mu_);
        seats.reserve(order_.size() + foreign_order_.size());
        for (const auto& seat : order_) {
            if (!seat->foreign()) {
                seats.push_back(seat);
            }
        }
        out.reserve(seats.size() + foreign_order_.size());
        for (const auto& id : foreign_order_) {
            const auto& l = foreign_.at(id);
            seats.push_back(l.seat);
            if (!l.seat) {
                out.push_back(
                    FileSource::listed_summary(foreign_spec(id, l), l.listing, l.last_activity));
            }
        }
    }
    // Seats' own summaries outside the hub's lock (each takes its seat's).
    std::vector<SeatSummary> all;
    all.reserve(seats.size());
    std::size_t listed = 0;
    for (const auto& seat : seats) {
        all.push_back(seat ? seat->summary() : std::move(out[listed++]));
    }
    // A session a hosted claude or codex seat continues is listed once: as that seat.
    std::set<std::string> continued;
    for (const auto& s : all) {
        if (s.source.empty() && hosts_cli(s.agent) && !s.session_id.empty()) {
            continued.insert(s.session_id);
        }
    }
    std::erase_if(all, [&continued](const SeatSummary& s) {
        return !s.source.empty() && continued.contains(s.session_id);
    });
    return all;
}

boost::system::result<void> Hub::remove(std::string_view id, bool purge) {
    std::shared_ptr<Seat> seat;
    {
        std::lock_guard lock(mu_);
        if (foreign_.contains(std::string(id))) {
            return make_error_code(errc::conflict); // a foreign session file is never deleted
        }
        auto it = seats_.find(std::string(id));
        if (it == seats_.end()) {
            return make_error_code(errc::not_found);
        }
        if (it->second->foreign()) {
            return make_error_code(errc::conflict); // a foreign session file is never deleted
        }
        seat = it->second;
        seats_.erase(it);
        std::erase(order_, seat);
    }
    if (search_) {
        search_->remove_seat(seat->id()); // its hits go with it
    }
    // Its spend today stays counted (SpendLimits::forget), kept on the writer: the job reads the
    // figure when it runs, so two removals in a row keep both.
    limits_->forget(seat->id());
    (void)writer_->submit(
        [limits = limits_, file = removed_spend_file()] {
            return write_removed_spend(file, limits->removed());
        },
        io_.get_executor(),
        [](boost::system::error_code) {});
    auto to =
        purge ? std::filesystem::path{}
              : archive_root() / archived_folder_name(seat->id(), std::chrono::system_clock::now());
    net::post(seat->strand(), [seat, to = std::move(to)]() mutable {
        seat->close(/*then_remove=*/true, std::move(to));
    });
    return {};
}

std::filesystem::path Hub::removed_spend_file() const {
    return config_.data_dir / "removed_spend.json";
}

std::filesystem::path Hub::archive_root() const {
    return seats_root().parent_path() / "archive";
}

void Hub::disk_use(const boost::asio::any_io_executor& ex, DiskUseDone done) const {
    std::vector<std::pair<std::string, std::filesystem::path>> dirs;
    for (const auto& seat : list()) {
        if (!seat->foreign() && !seat->mirror() && !seat->dir().empty()) {
            dirs.emplace_back(seat->id(), seat->dir());
        }
    }
    auto use = std::make_shared<DiskUse>();
    const bool queued = writer_->submit(
        [use, dirs = std::move(dirs), archive = archive_root()] {
            for (const auto& [id, dir] : dirs) {
                use->seats.emplace_back(id, folder_bytes(dir));
            }
            use->archive_bytes = folder_bytes(archive);
            return boost::system::error_code{};
        },
        ex,
        [use, done](boost::system::error_code) { done(std::move(*use)); });
    if (!queued) {
        net::post(ex, [done = std::move(done)] { done(std::nullopt); });
    }
}

void Hub::prune_archives(
    std::chrono::seconds max_age,
    const boost::asio::any_io_executor& ex,
    std::function<void(Pruned)> done) {
    std::map<std::string, std::string> epochs;
    for (const auto& seat : list()) {
        auto s = seat->summary();
        epochs.emplace(s.id, std::move(s.epoch));
    }
    auto result = std::make_shared<Pruned>();
    (void)writer_->submit(
        [result,
         root = seats_root(),
         archive = archive_root(),
         max_age,
         epochs = std::move(epochs)] {
            *result = hub::prune_archives(root, archive, max_age, epochs);
            return boost::system::error_code{};
        },
        ex,
        [result, done = std::move(done)](boost::system::error_code) { done(*result); });
}

// Not const, though the compiler would allow it: it closes every seat of this hub.
// NOLINTNEXTLINE(readability-make-member-function-const)
void Hub::shutdown() {
    for (const auto& seat : list()) {
        net::post(seat->strand(), [seat] { seat->close(); });
    }
}

HubStats Hub::stats() const {
    HubStats st;
    {
        std::lock_guard lock(mu_);
        st.seats = foreign_.size() - foreign_seats_; // listed, no seat made yet
    }
    for (const auto& seat : list()) {
        const auto s = seat->summary();
        ++st.seats;
        st.running += s.state == SeatState::running || s.state == SeatState::queued ? 1 : 0;
        st.subscribers += s.subscribers;
        st.window_frames += s.window_frames;
        st.window_bytes += s.window_bytes;
        st.frames_total += s.frames;
        st.preview_dropped_bytes += s.preview_dropped_bytes;
        st.resyncs += s.resyncs;
        st.write_errors += s.write_errors;
        st.degraded += s.state == SeatState::degraded ? 1 : 0;
    }
    return st;
}

} // namespace sluice::hub
