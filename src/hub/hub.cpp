// Hub: the seat registry, persistence of the seat list, and whole-hub stats.
#include <sluice/hub/hub.hpp>

#include "ids.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace sluice::hub {

namespace json = boost::json;
namespace net = boost::asio;

namespace {

std::optional<SeatSpec> read_meta(const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in) {
        return std::nullopt;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    boost::system::error_code ec;
    auto v = json::parse(ss.str(), ec);
    if (ec || !v.is_object()) {
        return std::nullopt;
    }
    const auto& o = v.get_object();
    auto str = [&](std::string_view k) {
        const auto* p = o.if_contains(k);
        return p != nullptr && p->is_string() ? std::string(p->get_string()) : std::string();
    };
    SeatSpec spec;
    spec.id = str("id");
    spec.name = str("name");
    spec.agent = str("agent");
    spec.model = str("model");
    spec.system = str("system");
    spec.epoch = str("epoch");
    if (const auto* t = o.if_contains("turns"); t != nullptr && t->is_number()) {
        spec.turns = t->to_number<std::uint64_t>();
    }
    if (!valid_id(spec.id) || spec.epoch.empty()) {
        return std::nullopt;
    }
    if (spec.agent.empty()) {
        spec.agent = "builtin";
    }
    return spec;
}

} // namespace

Hub::Hub(net::io_context& io, HubConfig config) : io_(io), config_(std::move(config)) {}

Hub::~Hub() = default;

std::size_t Hub::restore() {
    const auto root = config_.data_dir / "seats";
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec)) {
        return 0;
    }
    std::vector<std::filesystem::path> dirs;
    for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
        if (entry.is_directory()) {
            dirs.push_back(entry.path());
        }
    }
    std::sort(dirs.begin(), dirs.end());
    std::size_t restored = 0;
    for (const auto& dir : dirs) {
        auto spec = read_meta(dir / "meta.json");
        if (!spec) {
            spdlog::warn("skipping {}: no readable meta.json", dir.string());
            continue;
        }
        SeatOptions opt{dir, config_.make_agent, config_.max_queued_prompts, config_.sync_interval, config_.budget};
        auto seat = Seat::open(io_, std::move(*spec), std::move(opt));
        if (!seat) {
            spdlog::error("cannot restore seat in {}: {}", dir.string(), seat.error().message());
            continue;
        }
        std::lock_guard lock(mu_);
        seats_[(*seat)->id()] = *seat;
        order_.push_back(*seat);
        ++restored;
    }
    return restored;
}

boost::system::result<std::shared_ptr<Seat>> Hub::create(SeatSpec spec) {
    if (spec.agent.empty()) {
        spec.agent = "builtin";
    }
    if (spec.agent != "builtin" && spec.agent != "process") {
        return make_error_code(errc::bad_request);
    }
    if (spec.name.size() > 200 || spec.model.size() > 200 || spec.system.size() > 64 * 1024) {
        return make_error_code(errc::bad_request);
    }
    {
        std::lock_guard lock(mu_);
        if (seats_.size() >= config_.max_seats) {
            return make_error_code(errc::overloaded);
        }
    }
    spec.id = new_id("s");
    spec.epoch.clear();
    spec.turns = 0;
    if (spec.name.empty()) {
        spec.name = spec.id;
    }
    SeatOptions opt{
        config_.data_dir / "seats" / spec.id,
        config_.make_agent,
        config_.max_queued_prompts,
        config_.sync_interval,
        config_.budget};
    std::shared_ptr<Seat> seat;
    try {
        auto r = Seat::open(io_, std::move(spec), std::move(opt));
        if (!r) {
            return r.error();
        }
        seat = std::move(*r);
    } catch (const std::exception& e) {
        spdlog::error("cannot create seat: {}", e.what());
        return make_error_code(errc::bad_request);
    }
    std::lock_guard lock(mu_);
    seats_[seat->id()] = seat;
    order_.push_back(seat);
    return seat;
}

std::shared_ptr<Seat> Hub::find(std::string_view id) const {
    std::lock_guard lock(mu_);
    auto it = seats_.find(std::string(id));
    return it == seats_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<Seat>> Hub::list() const {
    std::lock_guard lock(mu_);
    return order_;
}

boost::system::result<void> Hub::remove(std::string_view id) {
    std::shared_ptr<Seat> seat;
    {
        std::lock_guard lock(mu_);
        auto it = seats_.find(std::string(id));
        if (it == seats_.end()) {
            return make_error_code(errc::not_found);
        }
        seat = it->second;
        seats_.erase(it);
        std::erase(order_, seat);
    }
    const auto dir = config_.data_dir / "seats" / seat->id();
    net::post(seat->strand(), [seat, dir] {
        seat->close();
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    });
    return {};
}

void Hub::shutdown() {
    for (const auto& seat : list()) {
        net::post(seat->strand(), [seat] { seat->close(); });
    }
}

HubStats Hub::stats() const {
    HubStats st;
    for (const auto& seat : list()) {
        const auto s = seat->summary();
        ++st.seats;
        st.running += s.state != SeatState::idle ? 1 : 0;
        st.subscribers += s.subscribers;
        st.window_frames += s.window_frames;
        st.window_bytes += s.window_bytes;
        st.frames_total += s.frames;
        st.preview_dropped_bytes += s.preview_dropped_bytes;
        st.resyncs += s.resyncs;
    }
    return st;
}

} // namespace sluice::hub
