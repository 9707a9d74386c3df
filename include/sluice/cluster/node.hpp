// Cluster node (`sluice serve --redis URL`): seats' frames to Redis Streams, a lease per seat,
// the seat registry, and mirrors of other nodes' seats for this node's viewers.
#pragma once

#include <sluice/hub/broker.hpp>
#include <sluice/hub/forward.hpp>
#include <sluice/hub/hub.hpp>
#include <sluice/redis/client.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace sluice::cluster {

namespace detail {
class Forwards;
class Mirrors;
class Takeover;
struct Claimable;
} // namespace detail

/// A node's settings.
struct NodeConfig {
    redis::Url url;                          ///< the Redis server
    std::string tls_ca_file;                 ///< rediss://: CAs to verify it (empty: system's)
    std::string tls_cert_file;               ///< rediss://: client certificate (empty: none)
    std::string tls_key_file;                ///< rediss://: its private key
    std::filesystem::path data_dir;          ///< where the node id is kept (`cluster-node`)
    std::chrono::milliseconds tick{1000};    ///< registry, lease renewal, position check
    std::chrono::milliseconds lease{10'000}; ///< a seat's lease TTL (renewed every tick)
    std::string prefix{"sluice:"};           ///< every key and channel starts with it
    /// The seats' folders are shared storage (`serve --shared-seats`): a seat whose owner's
    /// lease ran out is taken over by a node that claims it, and an owner that cannot renew a
    /// lease lets the seat go before it runs out.
    bool takeover{false};
};

/// The Redis engine. As owner, each seat's durable frames go to its stream `<prefix>seat:<id>:s`
/// (entry id `<seq>-1`, fields `f` frame and `o` opens-a-turn) with one Lua script that also
/// trims it to the window front (`XTRIM MINID`) and PUBLISHes a notice carrying the frames,
/// their first seq and the epoch; the seat's head `<prefix>seat:<id>:m` holds `epoch` and `end`.
/// A new epoch (or a stream Redis lost) is seeded whole from the window. A lease
/// (`…:owner`, SET PX, renewed each tick) and the registry hash `<prefix>seats` list the seat
/// cluster-wide. As viewer, a seat of another node is a mirror (cluster::MirrorSource): at its
/// first viewer the node subscribes to its channel, then reads head and stream in one script
/// (subscribe before reading: nothing published in between is missed), and follows the
/// notices: contiguous frames are appended, a hole or another epoch makes it read again; a
/// position check each tick catches a lost notice and a Redis restart. Turn states and
/// previews go over the seat's channel only (never the stream): a preview carries the frame
/// position it follows and the bytes published there before it, so a mirror shows it in order
/// or drops it, and reports what it missed as a `gap` (pub/sub is lossy).
///
/// The Node is the engine: it owns the Redis connections, the tick and the owner's side, and
/// delegates to its parts (src/cluster/): detail::Forwards (commands forwarded between nodes),
/// detail::Mirrors (following other nodes' seats), detail::Takeover (`takeover`: claiming seats
/// whose owner is gone).
///
/// @par Thread safety
/// Safe from any thread (the Broker hooks come from seats' strands).
class Node : public hub::Broker, public hub::Forwarder, public std::enable_shared_from_this<Node> {
public:
    /// A node on `io` (nothing connects before `start`).
    /// @throw std::runtime_error when the TLS files of a `rediss://` URL cannot be loaded.
    static std::shared_ptr<Node> create(boost::asio::io_context& io, NodeConfig cfg);

    ~Node() override;
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    /// Connects to Redis, waiting up to `timeout` by running `io` on this thread (call before
    /// the io_context runs elsewhere). @return the reason when Redis does not answer.
    std::optional<std::string> start(hub::Hub& hub, std::chrono::milliseconds timeout);

    /// Stops ticking and closes the connections.
    void stop();

    /// This node's id (kept in the data dir, so a restarted node owns its seats again).
    [[nodiscard]] const std::string& id() const noexcept { return id_; }

    /// Commands forwarded to this node (for its seats) go to `fn`, which answers through its
    /// `done` (the app runs them as its own API would). Set before `start`.
    void on_forwarded(std::function<void(hub::ForwardedRequest, hub::ForwardDone)> fn);

    /// Sends a command to the owner over Redis pub/sub (`<prefix>node:<owner>`), its answer
    /// back on this node's channel; no subscriber (the owner is gone) or no answer within
    /// FORWARD_TIMEOUT: status 0 and why.
    void
    forward(const std::string& owner, hub::ForwardedRequest req, hub::ForwardDone done) override;

    void published(hub::Seat& seat, std::uint64_t first) override;
    void turn_state(hub::Seat& seat, std::uint64_t before, const std::string& data) override;
    void preview(
        hub::Seat& seat, std::uint64_t pos, std::uint64_t offset, const StreamEvent& ev) override;
    void mirror_wanted(const std::shared_ptr<hub::Seat>& seat) override;

private:
    using Clock = std::chrono::steady_clock;

    struct Owned {
        std::string epoch;           // seeded under this epoch (empty: not seeded)
        Clock::time_point renewed{}; // takeover: when the last renewal that held was sent
        bool watched{true}; // a node follows its channel (PUBSUB NUMSUB each tick): previews go
    };

    Node(boost::asio::io_context& io, NodeConfig cfg);
    void on_node_message(const std::string& payload);
    [[nodiscard]] std::string key(const std::string& seat, const char* what) const;
    void seed(hub::Seat& seat);
    void append(hub::Seat& seat, std::uint64_t first);
    void on_message(const std::string& channel, const std::string& payload);
    void hosted(const std::string& id, Clock::time_point sent); // taken over (on strand_)
    // Takeover, on strand_: an owner cut off from Redis lets its seats go before their leases
    // can run out (fence); a seat let go is this node's no more (release).
    void fence();
    void release(const std::string& id, const std::string& why);
    boost::asio::awaitable<void> tick_loop();
    boost::asio::awaitable<void> tick();
    boost::asio::awaitable<std::set<std::string>> renew();
    boost::asio::awaitable<void> count_followers(const std::set<std::string>& local);
    boost::asio::awaitable<void> drop_gone();
    boost::asio::awaitable<void> follow_registry(
        const std::set<std::string>& local, std::map<std::string, detail::Claimable>& claimable);

    boost::asio::io_context& io_;
    boost::asio::strand<boost::asio::io_context::executor_type> strand_;
    NodeConfig cfg_;
    std::string id_;
    hub::Hub* hub_{nullptr};
    std::shared_ptr<redis::Client> cmd_, sub_;
    boost::asio::steady_timer timer_;
    std::mutex mu_;
    std::map<std::string, Owned> owned_;         // local seats, by id
    std::unique_ptr<detail::Forwards> forwards_; // commands to and from other nodes
    std::unique_ptr<detail::Mirrors> mirrors_;   // other nodes' seats followed here
    std::unique_ptr<detail::Takeover> takeover_; // seats let go and claimed (`takeover`)
    bool stopped_{false};
};

/// Ticks a mirror's seat may be missing from the registry before the mirror goes (a Redis that
/// restarted empty lists nothing until every owner has listed again, one tick).
inline constexpr int MIRROR_MISSING_TICKS = 5;

/// Ticks a followed mirror may go without a viewer before this node stops following it (its
/// window let go, its channel unsubscribed; its next viewer follows it again): a reload keeps it.
inline constexpr int MIRROR_IDLE_TICKS = 30;

/// How long a forwarded command waits for its owner's answer.
inline constexpr std::chrono::milliseconds FORWARD_TIMEOUT{5000};

} // namespace sluice::cluster
