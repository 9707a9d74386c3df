// fanout_conn.hpp: one SSE subscriber connection of bench/fanout_client.cpp and the tallies its
// reads add to. Thread safety: a Conn and a Totals belong to one worker thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fanout {

/// Wall-clock nanoseconds (the publisher stamps tokens with the same clock).
std::int64_t now_ns();

/// This process's own CPU time (user + system), to show whether the measuring client (or the
/// floor server) is the bottleneck of a latency run.
double cpu_seconds();

/// A TCP connection to 127.0.0.1:`port` (exits the process on failure).
int connect_to(int port, bool nonblock);

/// One subscriber connection: header, de-chunking and token scan state.
struct Conn {
    int fd = -1;
    bool header_done = false;
    bool chunked = false;
    bool done = false;
    bool closed = false;
    std::string header;
    std::string scan;           // carry from the previous read + payload
    std::size_t chunk_left = 0; // payload bytes left in the current chunk
    int chunk_state = 0;        // 0 size line, 1 data, 2 CRLF after data
    std::string size_line;
    std::int64_t next_k = 0;
    std::int64_t received = 0, lost = 0, dup = 0, connected_events = 0;
    bool started = false; // join mode: the first token seen sets next_k
    std::int64_t first_k = -1;
    bool bye = false; // the stream carried a `: bye: …` comment (the hub let it go, saying why)
};

/// Join mode (`fanout_client join`): each connection counts from the first token it sees.
extern bool join_mode;

/// What every connection of one worker saw.
struct Totals {
    std::int64_t received = 0, lost = 0, dup = 0, resyncs = 0, incomplete = 0, closed = 0;
    std::int64_t first_ns = 0, last_ns = 0;
    std::vector<std::int64_t> lat_us;
};

/// Response headers read so far, over every worker.
extern std::atomic<int> headers_ready;
/// Set once every subscriber is connected: the workers start reading.
extern std::atomic<bool> go_read;

/// Scans `c.scan` for tokens, counting order, loss and latency into `t` (`expect`: the last k+1).
void scan_tokens(Conn& c, std::int64_t expect, Totals& t, std::int64_t now);

/// Feeds `n` bytes read from `c`'s socket: header, then (de-chunked) payload, scanned.
void feed(Conn& c, const char* p, std::size_t n);

} // namespace fanout
