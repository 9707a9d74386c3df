// Fuzzes the HTTP request path on an in-memory stream: parser and limits, Host/Origin checks,
// token and role, router, JSON body validation and the handlers, against a hub with one seat.
// "{seat}" in an input becomes that seat's id; "Bearer fuzz-owner" and "Bearer fuzz-viewer"
// are the tokens it takes.
#include "server/http_session_impl.hpp"
#include "unit/conversation/fixtures.hpp"
#include "unit/server/test_stream_sessions.hpp"

#include <sluice/detail/net.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/server/auth.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>

namespace {

using namespace sluice;

class IdleAgent final : public runtime::Agent {
public:
    void start_turn(std::string, CancellationToken, std::shared_ptr<runtime::TurnSink>) override {}

    [[nodiscard]] std::string kind() const override { return "idle"; }
};

struct Rig {
    net::io_context io;
    test::TempDir dir;
    std::unique_ptr<hub::Hub> hub;
    std::shared_ptr<server::Server::Impl> s;
    std::string seat;

    Rig() {
        hub::HubConfig hc;
        hc.data_dir = std::filesystem::path(dir.path()) / "hub";
        hc.make_agent = [](const hub::SeatSpec&,
                           std::vector<boost::json::object>,
                           const net::any_io_executor&) -> hub::AgentOrReason {
            return {std::make_unique<IdleAgent>(), {}};
        };
        hub = std::make_unique<hub::Hub>(io, std::move(hc));
        seat = (*hub->create(hub::SeatSpec{}))->id();
        std::ofstream(dir.file("tokens.json"))
            << R"({"tokens":[{"id":"fuzzview","sha256":")"
            << server::auth::hex(server::auth::digest("fuzz-viewer"))
            << R"(","seat":"","created":0,"expires":0}]})";
        server::ServerConfig cfg;
        cfg.heartbeat = std::chrono::hours(1);
        cfg.max_body_bytes = 4096;
        cfg.token = "fuzz-owner";
        cfg.token_dir = dir.path();
        cfg.auth_free_failures = 1U << 30U; // the backoff would turn every later input into 429
        s = std::make_shared<server::Server::Impl>(io, *hub, cfg);
    }

    // Runs handlers until `done()` holds; false if it does not within `limit`. Completions
    // also come from the hub's writer thread (a create's disk work), so an empty poll does not
    // mean the work is over: wait for the next handler a while.
    template <class Done>
    bool settle_until(Done done, std::chrono::milliseconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (!done()) {
            if (std::chrono::steady_clock::now() >= deadline) {
                return false;
            }
            io.restart();
            if (io.poll() == 0) {
                io.restart();
                (void)io.run_one_for(std::chrono::milliseconds(1));
            }
        }
        return true;
    }

    // Runs handlers until none has come for a quiet while (a request still on the writer
    // then finishes after its client has gone, which is a case worth running too).
    void settle() {
        for (int i = 0; i < 10000; ++i) {
            io.restart();
            if (io.poll() > 0) {
                continue;
            }
            io.restart();
            if (io.run_one_for(std::chrono::milliseconds(2)) == 0) {
                break;
            }
        }
    }
};

Rig& rig() {
    static Rig r;
    return r;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto& r = rig();
    std::string input(reinterpret_cast<const char*>(data), size);
    for (auto at = input.find("{seat}"); at != std::string::npos; at = input.find("{seat}", at)) {
        input.replace(at, 6, r.seat);
    }
    r.s->connections = std::make_shared<server::Connections>(100);
    beast::test::stream ss(r.io);
    beast::test::stream client(r.io);
    ss.connect(client);
    ss.append(input);
    auto ticket = r.s->connections->enter();
    bool ended = false;
    net::co_spawn(
        r.io,
        server::serve_http<beast::test::stream>(r.s, std::move(ss), std::move(ticket)),
        [&ended](const std::exception_ptr& e) {
            if (e) {
                std::abort(); // nothing a client sends may end a session by an exception
            }
            ended = true;
        });
    r.settle();
    client.close(); // the client goes: a session waiting for more reads the end
    bool drained = false;
    r.s->connections->close([&drained] { drained = true; }); // and shutdown ends any stream
    if (!r.settle_until([&] { return ended && drained; }, std::chrono::seconds(10))) {
        std::abort(); // a session outlived its client and the shutdown
    }
    // One seat between inputs: what an input made goes, what it deleted comes back.
    for (const auto& seat : r.hub->list()) {
        if (seat->id() != r.seat) {
            (void)r.hub->remove(seat->id());
        }
    }
    if (!r.hub->find(r.seat)) {
        r.seat = (*r.hub->create(hub::SeatSpec{}))->id();
    }
    r.settle();
    return 0;
}
