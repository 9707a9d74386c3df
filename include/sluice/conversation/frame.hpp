// Frame: one conversation row (Claude Code transcript / stream-json shape), immutable and shared.
#pragma once

#include <boost/json/object.hpp>
#include <boost/system/result.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

class Frame;

/// A frame is shared, never copied: the window, the ring and every send queue hold this.
using FramePtr = std::shared_ptr<const Frame>;

/// Whether a row `type` is a frame: `user`, `assistant`, `system`, `result`. Other transcript
/// rows (`summary`, `queue-operation`, `attachment`, `progress`, `stream_event`, …) are not.
bool is_frame_type(std::string_view type) noexcept;

/// The byte length of `v` as compact JSON (exactly what boost::json::serialize writes), computed
/// by a writer that only counts: no allocation.
std::size_t json_wire_bytes(const boost::json::value& v) noexcept;

/// The byte length of `o` as compact JSON; see the value overload.
std::size_t json_wire_bytes(const boost::json::object& o) noexcept;

/// What a user (or other) row is, for the turn scan; classified once when a frame is built.
enum class FrameRole : std::uint8_t {
    other,        ///< assistant, result, system rows other than a compact boundary
    prompt,       ///< a user row with text a person typed
    command,      ///< a user row with a slash command (`<command-name>`) or `!` bash input
    image,        ///< a user row with images and no typed text
    continuation, ///< the compaction continuation prompt ("This session is being continued…")
    tool_result,  ///< a user row carrying tool_result blocks
    note,         ///< meta rows, envelopes (`<…>`), interrupt markers, caveats, malformed rows
    compact_boundary, ///< a `system` row with subtype `compact_boundary`
};

/// Ids a frame names (tool_use ids), one pointer while empty, as most frames' are: a window
/// holds thousands of frames, and two empty std::vectors were 48 of a frame's bytes.
class IdList {
public:
    IdList() = default;

    IdList(const IdList& o)
        : ids_(o.ids_ ? std::make_unique<std::vector<std::string>>(*o.ids_) : nullptr) {}

    IdList(IdList&&) noexcept = default;

    IdList& operator=(const IdList& o) {
        if (this != &o) {
            ids_ = o.ids_ ? std::make_unique<std::vector<std::string>>(*o.ids_) : nullptr;
        }
        return *this;
    }

    IdList& operator=(IdList&&) noexcept = default;
    ~IdList() = default;

    [[nodiscard]] std::size_t size() const noexcept { return ids_ ? ids_->size() : 0; }

    [[nodiscard]] bool empty() const noexcept { return size() == 0; }

    const std::string& operator[](std::size_t i) const { return (*ids_)[i]; }

    const std::string* begin() const noexcept { return ids_ ? ids_->data() : nullptr; }

    const std::string* end() const noexcept { return ids_ ? ids_->data() + ids_->size() : nullptr; }

    void push_back(std::string id) { list().push_back(std::move(id)); }

    template <class... Args>
    std::string& emplace_back(Args&&... args) {
        return list().emplace_back(std::forward<Args>(args)...);
    }

    void clear() noexcept { ids_.reset(); }

private:
    std::vector<std::string>& list() {
        if (!ids_) {
            ids_ = std::make_unique<std::vector<std::string>>();
        }
        return *ids_;
    }

    std::unique_ptr<std::vector<std::string>> ids_;
};

/// The facts of a frame the turn scan reads (no JSON access needed after construction).
struct TurnFacts {
    FrameRole role{FrameRole::other}; ///< the row's role
    bool subagent{};                  ///< `isSidechain` or a non-null `parent_tool_use_id`
    bool tool_call{};                 ///< an assistant row with a tool_use block
    IdList skill_calls{};             ///< ids of `Skill` tool_use blocks (assistant rows)
    IdList results_for{};             ///< tool_use ids answered (tool_result rows)
};

/// One conversation row: parsed once, its compact JSON serialized once, its wire weight counted.
///
/// A frame built by `parse` keeps its compact JSON and the facts the scan needs; its JSON object
/// (`row()`) is materialized again on first use, so a window of parsed frames costs about its
/// wire bytes in memory. The JSON lives in the same heap block as the frame and its shared
/// count (one allocation per frame, ~100 bytes beside the JSON: a window holds thousands). A frame
/// built by `from_row` keeps the object it was given; `from_row_compact` keeps only the JSON, as
/// `parse` does. A frame heavier than FRAME_INLINE_MAX_BYTES keeps its object however it was built:
/// it is about to be cut to its reference form (`held_form`), which reads it, and is not held
/// itself.
///
/// @par Thread safety
/// Immutable after construction: safe to share and read from any thread (`row()` materializes
/// under a once-flag).
class Frame {
public:
    /// Parses one JSONL line. @return the frame, or an error: a JSON error code for a line that
    /// is not JSON, `errc::bad_request` for JSON that is not an object.
    static boost::system::result<FramePtr> parse(std::string_view json_line);

    /// Wraps a row built in memory (the runtime's own frames).
    static FramePtr from_row(boost::json::object row);

    /// Wraps a row built in memory and lets its object go once serialized, as `parse` does:
    /// for the rows a seat streams into its window, so a window costs about its wire bytes
    /// (a kept object costs ~1.4x them again), whatever the agent. `row()` parses it back on
    /// first use.
    static FramePtr from_row_compact(boost::json::object row);

    /// The row as a JSON object.
    const boost::json::object& row() const;

    /// Whether the object is held beside the JSON (`row()` then parses nothing).
    [[nodiscard]] bool keeps_row() const noexcept { return row_kept_; }

    /// The row as compact JSON, serialized once.
    std::string_view json() const noexcept { return json_; }

    /// The wire weight: the byte length of `json()`, counted by a writer that only counts.
    std::size_t wire_bytes() const noexcept { return json_.size(); }

    /// The row's `type` ("user", "assistant", …; empty when absent or not a string).
    std::string_view type() const noexcept { return type_; }

    /// Whether this row is a frame (see `is_frame_type`).
    bool is_frame() const noexcept { return is_frame_type(type_); }

    /// The facts the turn scan reads.
    const TurnFacts& facts() const noexcept { return facts_; }

    /// This row's `thinking_tokens` counter delta: `estimated_tokens_delta` of a main-thread
    /// `system`/`thinking_tokens` row (the shape Claude Code's stream-json writes), else 0.
    std::uint64_t thinking_delta() const noexcept { return thinking_delta_; }

    /// Private construction; use `parse` or `from_row`.
    struct Key {
        explicit Key() = default;
    };

    /// Builds from an object whose numbers are finite and whose compact JSON is `wire_bytes`
    /// long, into `tail`: the bytes allocated after the frame in its own block (the JSON, then
    /// an uncommon `type`'s name). `tail` is read when the frame is built, after its block is
    /// allocated. `keep_row` keeps the object, else it is re-materialized on demand.
    Frame(
        Key /*key*/,
        boost::json::object&& row,
        bool keep_row,
        std::size_t wire_bytes,
        char* const& tail);

    Frame(const Frame&) = delete; // its views point into its own block
    Frame& operator=(const Frame&) = delete;
    Frame(Frame&&) = delete;
    Frame& operator=(Frame&&) = delete;
    ~Frame() = default;

private:
    std::string_view json_; // exactly the wire bytes, in the frame's own block
    std::string_view type_; // a static name, or in the frame's block after the JSON
    TurnFacts facts_;
    std::uint64_t thinking_delta_{};
    bool row_kept_{};
    mutable std::once_flag row_once_;
    mutable std::unique_ptr<boost::json::object> row_; // kept, or materialized by row()
};

} // namespace sluice
