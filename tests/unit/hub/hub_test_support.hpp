// Test support for tests/unit/hub: a fake agent that calls its sink on the seat's strand, a temp
// data dir, and a single-threaded io_context driver.
#pragma once

#include "support/files.hpp"

#include <sluice/detail/net.hpp>
#include <sluice/hub/seat.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace sluice::hub::test {

using namespace std::chrono_literals;

/// A folder under the temp dir, removed at the end.
class TempDir {
public:
    TempDir() {
        std::random_device rd;
        path_ = std::filesystem::temp_directory_path()
                / ("sluice-hub-test-" + std::to_string(rd()) + std::to_string(rd()));
        std::filesystem::create_directories(path_);
    }

    ~TempDir() {
        std::error_code ec;
        std::filesystem::permissions(
            path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
        std::filesystem::remove_all(path_, ec);
    }

    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

/// Runs `io` (on this thread) until `pred()` holds or `limit` passes. @return whether it held.
template <class Pred>
bool run_until(net::io_context& io, Pred pred, std::chrono::milliseconds limit = 5000ms) {
    auto guard = net::make_work_guard(io);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        io.restart();
        io.run_for(1ms);
    }
    return true;
}

/// Runs `fn` on `seat`'s strand and waits for it (the io_context runs on this thread).
template <class Fn>
auto on_strand(net::io_context& io, Seat& seat, Fn fn) -> decltype(fn()) {
    using R = decltype(fn());
    if constexpr (std::is_void_v<R>) {
        bool done = false;
        net::post(seat.strand(), [&] {
            fn();
            done = true;
        });
        run_until(io, [&] { return done; });
    } else {
        std::optional<R> out;
        net::post(seat.strand(), [&] { out.emplace(fn()); });
        run_until(io, [&] { return out.has_value(); });
        return std::move(*out);
    }
}

/// A history page through the seat's one history path (Seat::history with a callback), waited
/// for: a page below the window is read on the writer.
inline Result<HistoryPage> history_page(
    net::io_context& io, Seat& seat, std::optional<std::uint64_t> before, std::size_t turns) {
    std::optional<Result<HistoryPage>> page;
    net::post(seat.strand(), [&] {
        seat.history(before, turns, [&](Result<HistoryPage> p) { page.emplace(std::move(p)); });
    });
    run_until(io, [&] { return page.has_value(); });
    return std::move(*page);
}

/// The turns a fake agent was given; the test plays the agent through them.
struct FakeTurn {
    std::string prompt;
    CancellationToken cancel;
    std::shared_ptr<runtime::TurnSink> sink;
    CancelRegistration on_cancel;
    bool ended{false};
};

/// What the tests see of every fake agent a factory made.
struct FakeAgents {
    std::vector<std::vector<boost::json::object>> histories; ///< rows each agent was given
    std::deque<std::shared_ptr<FakeTurn>> turns;             ///< every turn started, in order
    std::vector<std::string> kinds_refused;                  ///< specs refused (no agent)
};

/// An agent whose turns the test drives: `start_turn` records the turn (posted, never inline);
/// cancelling the token ends it with `cancelled` on the strand, as the contract says.
class FakeAgent final : public runtime::Agent {
public:
    FakeAgent(std::shared_ptr<FakeAgents> seen, net::any_io_executor ex)
        : seen_(std::move(seen))
        , ex_(std::move(ex)) {}

    void start_turn(
        std::string prompt,
        CancellationToken cancel,
        std::shared_ptr<runtime::TurnSink> sink) override {
        auto turn = std::make_shared<FakeTurn>();
        turn->prompt = std::move(prompt);
        turn->cancel = cancel;
        turn->sink = std::move(sink);
        net::post(ex_, [seen = seen_, turn, ex = ex_] {
            std::weak_ptr<FakeTurn> weak = turn;
            turn->on_cancel = turn->cancel.on_cancel([weak, ex] {
                net::post(ex, [weak] {
                    if (auto t = weak.lock(); t && !t->ended) {
                        t->ended = true;
                        t->sink->on_end(runtime::TurnEnd{runtime::TurnEnd::State::cancelled, {}});
                    }
                });
            });
            seen->turns.push_back(turn);
        });
    }

    [[nodiscard]] std::string kind() const override { return "builtin"; }

private:
    std::shared_ptr<FakeAgents> seen_;
    net::any_io_executor ex_;
};

/// A factory of fake agents; kind "process" is refused with a reason (as a hub without
/// --agent-cmd does).
inline AgentFactory fake_factory(const std::shared_ptr<FakeAgents>& seen) {
    return
        [seen](
            const SeatSpec& spec, std::vector<boost::json::object> rows, net::any_io_executor ex) {
            if (spec.agent == "process") {
                seen->kinds_refused.push_back(spec.agent);
                return AgentOrReason{nullptr, "agent kind 'process' needs --agent-cmd"};
            }
            seen->histories.push_back(std::move(rows));
            return AgentOrReason{std::make_unique<FakeAgent>(seen, std::move(ex)), {}};
        };
}

/// An assistant row with `text`.
inline boost::json::object assistant_row(std::string_view text) {
    return boost::json::object{
        {"type", "assistant"},
        {"message",
         boost::json::object{
             {"role", "assistant"},
             {"content",
              boost::json::array{boost::json::object{{"type", "text"}, {"text", text}}}}}}};
}

/// A result row (closes a turn).
inline boost::json::object result_row() {
    return boost::json::object{{"type", "result"}, {"subtype", "success"}, {"is_error", false}};
}

/// The kinds of a batch of events.
inline std::vector<OutEvent::Kind> kinds_of(const std::vector<OutEvent>& evs) {
    std::vector<OutEvent::Kind> k;
    k.reserve(evs.size());
    for (const auto& e : evs) {
        k.push_back(e.kind);
    }
    return k;
}

using sluice::test::slurp; // the whole text of a file

} // namespace sluice::hub::test
