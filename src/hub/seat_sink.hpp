// Seat::Sink: the TurnSink a seat gives its agent for one turn — every call lands on the seat's
// strand, tagged with its turn (private to the seat's sources).
#pragma once

#include <sluice/detail/net.hpp>
#include <sluice/hub/seat.hpp>
#include <sluice/runtime/agents/agent.hpp>

#include <boost/asio/dispatch.hpp>
#include <boost/json.hpp>

#include <cstdint>
#include <memory>
#include <utility>

namespace sluice::hub {

// Under the agent contract the calls already run on the strand (dispatch runs them inline); a
// call from another thread is posted there. A call for a turn that is no longer the running
// one (a late call after a failure) is ignored by the seat.
class Seat::Sink final : public runtime::TurnSink {
public:
    Sink(std::weak_ptr<Seat> seat, strand_type strand, std::uint64_t turn)
        : seat_(std::move(seat))
        , strand_(std::move(strand))
        , turn_(turn) {}

    void on_row(boost::json::object row) override {
        net::dispatch(strand_, [w = seat_, t = turn_, row = std::move(row)]() mutable {
            if (auto s = w.lock()) {
                s->on_row(t, std::move(row));
            }
        });
    }

    void on_event(runtime::AgentEvent event) override {
        net::dispatch(strand_, [w = seat_, t = turn_, ev = std::move(event)]() mutable {
            if (auto s = w.lock()) {
                s->on_event(t, std::move(ev));
            }
        });
    }

    void on_preview(StreamEvent preview) override {
        net::dispatch(strand_, [w = seat_, t = turn_, ev = std::move(preview)]() mutable {
            if (auto s = w.lock()) {
                s->on_preview(t, std::move(ev));
            }
        });
    }

    void on_end(runtime::TurnEnd end) override {
        net::dispatch(strand_, [w = seat_, t = turn_, e = std::move(end)]() mutable {
            if (auto s = w.lock()) {
                s->on_end(t, std::move(e));
            }
        });
    }

private:
    std::weak_ptr<Seat> seat_;
    strand_type strand_;
    std::uint64_t turn_;
};

} // namespace sluice::hub
