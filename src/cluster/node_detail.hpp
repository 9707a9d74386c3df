// Cluster node, private: the Lua scripts and the helpers its files share.
#pragma once

#include <sluice/cluster/mirror_source.hpp>
#include <sluice/hub/seat.hpp>
#include <sluice/redis/resp.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::cluster::detail {

inline constexpr auto TUPLE = boost::asio::as_tuple(boost::asio::use_awaitable);

// Seeds a seat's stream whole (a new epoch, or Redis lost it): KEYS stream, head, channel;
// ARGV epoch, first, then (frame, opens) pairs. Replaces what was there; tells the followers.
inline constexpr const char* SEED_LUA = R"lua(
redis.call('DEL', KEYS[1])
local first = tonumber(ARGV[2])
local n = (#ARGV - 2) / 2
for i = 0, n - 1 do
  redis.call('XADD', KEYS[1], string.format('%d-1', first + i), 'f', ARGV[3 + 2 * i],
             'o', ARGV[4 + 2 * i])
end
redis.call('HSET', KEYS[2], 'epoch', ARGV[1], 'end', string.format('%d', first + n))
redis.call('PUBLISH', KEYS[3], 'r ' .. ARGV[1])
return first + n
)lua";

// Appends durable frames: KEYS stream, head, channel; ARGV epoch, first, front, then pairs
// (stored frame, opens). -1 when the head is of another epoch or the frames do not follow it
// (the owner seeds instead); frames already in the stream are skipped (a retried publish). One
// PUBLISH carries the frames to the followers (`f <epoch> <first>\n` then, per frame, its opens
// digit, its length, ':' and its stored bytes); the stream is trimmed to the window front.
inline constexpr const char* APPEND_LUA = R"lua(
if redis.call('HGET', KEYS[2], 'epoch') ~= ARGV[1] then return -1 end
local e = tonumber(redis.call('HGET', KEYS[2], 'end'))
local first = tonumber(ARGV[2])
if first > e then return -1 end
local n = (#ARGV - 3) / 2
local parts = {}
for i = 0, n - 1 do
  local seq = first + i
  if seq >= e then
    redis.call('XADD', KEYS[1], string.format('%d-1', seq), 'f', ARGV[4 + 2 * i],
               'o', ARGV[5 + 2 * i])
    e = seq + 1
  end
  parts[#parts + 1] = ARGV[5 + 2 * i] .. #ARGV[4 + 2 * i] .. ':' .. ARGV[4 + 2 * i]
end
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[3])
redis.call('HSET', KEYS[2], 'end', string.format('%d', e))
local notice = 'f ' .. ARGV[1] .. ' ' .. ARGV[2] .. '\n' .. table.concat(parts)
redis.call('PUBLISH', KEYS[3], notice)
return e
)lua";

// Reads a seat's head and stream at once: KEYS stream, head; ARGV the first id ('-': all).
inline constexpr const char* READ_LUA = R"lua(
local ep = redis.call('HGET', KEYS[2], 'epoch')
if not ep then return {} end
return {ep, redis.call('HGET', KEYS[2], 'end'), redis.call('XRANGE', KEYS[1], ARGV[1], '+')}
)lua";

// Claims or renews a seat's lease and lists it: KEYS lease, registry; ARGV node, ttl, id, entry.
inline constexpr const char* LEASE_LUA = R"lua(
local o = redis.call('GET', KEYS[1])
if o and o ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
return 1
)lua";

// Takes a seat's lease when it is free or this node's (takeover): KEYS lease; ARGV node, ttl.
inline constexpr const char* CLAIM_LUA = R"lua(
local o = redis.call('GET', KEYS[1])
if o and o ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
)lua";

// Gives a lease back if this node holds it: KEYS lease; ARGV node.
inline constexpr const char* UNCLAIM_LUA = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
)lua";

// The registry with each seat's lease holder: KEYS registry; ARGV key prefix of a seat.
inline constexpr const char* LIST_LUA = R"lua(
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  out[#out + 1] = all[i]
  out[#out + 1] = all[i + 1]
  out[#out + 1] = redis.call('GET', ARGV[1] .. all[i] .. ':owner') or ''
end
return out
)lua";

/// A seat state from its name (idle when unknown).
hub::SeatState parse_state(std::string_view s);

/// A seat's registry entry (JSON): its owner node and summary.
std::string entry_json(const hub::SeatSummary& s, const std::string& node);

/// A string member of `o` (empty when absent or not a string).
std::string str_of(const boost::json::object& o, std::string_view k);

/// A number member of `o` (0 when absent or not a number).
std::uint64_t num_of(const boost::json::object& o, std::string_view k);

/// A decimal (0 when it is not one).
std::uint64_t to_u64(const std::string& s);

/// Frames of an XRANGE reply, with the seq of the first and whether they are contiguous.
struct Entries {
    std::vector<MirrorFrame> frames; ///< the frames parsed
    std::uint64_t first{};           ///< the seq of the first
    bool contiguous{true};           ///< no hole, no entry that is not a frame
};

/// Parses an XRANGE reply of a seat's stream.
Entries parse_entries(const redis::Reply& r);

/// A frame's stored form in a stream entry and a notice: its compact JSON as it is (it starts
/// with '{'), or, when that saves bytes, `z<length>:` then its raw deflate (zlib level 1).
/// Basis: real transcripts' rows deflate to 0.46 of their bytes one by one (the fixtures,
/// bench/RESULTS.md "Redis memory per seat"), which brings a seat's stream under its window's
/// wire bytes; a row that does not shrink is stored plain.
std::string store_frame(std::string_view json);

/// A frame's JSON from its stored form; nullopt when it is neither form (never served).
std::optional<std::string> load_frame(std::string_view stored);

/// A preview's notice on a seat's channel: `p <epoch> <pos> <offset>\n<kind><tool_id>\n<bytes>`
/// (kind t text, h thinking, u tool input, r tool output; the bytes raw, to the end).
std::string preview_notice(
    std::string_view epoch, std::uint64_t pos, std::uint64_t offset, const StreamEvent& ev);

/// The preview in a notice's body (after its first line); nullopt when it is not one.
std::optional<StreamEvent> parse_preview(std::string_view body);

/// Logs a failed command (a transport error or Redis's error reply), else nothing.
void log_failure(const char* what, const boost::system::error_code& ec, const redis::Reply& r);

} // namespace sluice::cluster::detail
