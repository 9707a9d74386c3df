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

    void on_row(boost::json::object row) override { to_seat(&Seat::on_row, std::move(row)); }

    void on_event(runtime::AgentEvent event) override {
        to_seat(&Seat::on_event, std::move(event));
    }

    void on_preview(StreamEvent preview) override {
        to_seat(&Seat::on_preview, std::move(preview));
    }

    void on_end(runtime::TurnEnd end) override { to_seat(&Seat::on_end, std::move(end)); }

private:
    // Calls `fn` of the seat, if it still exists, with this sink's turn and `arg`, on its strand.
    template <class Arg>
    void to_seat(void (Seat::*fn)(std::uint64_t, Arg), Arg arg) {
        net::dispatch(strand_, [w = seat_, t = turn_, fn, a = std::move(arg)]() mutable {
            if (auto s = w.lock()) {
                ((*s).*fn)(t, std::move(a));
            }
        });
    }

    std::weak_ptr<Seat> seat_;
    strand_type strand_;
    std::uint64_t turn_;
};

} // namespace sluice::hub
