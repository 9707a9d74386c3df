// Oversize frames: the reference form the window, ring, pages and streams hold in place of a
// frame heavier than FRAME_INLINE_MAX_BYTES (the transcript keeps it whole).
#pragma once

#include <sluice/conversation/frame.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace sluice {

/// The heaviest frame (compact JSON bytes) held and sent as it is. Heavier frames are held in
/// reference form. Basis: 256 KiB is 64x a typical assistant or tool row (a few KiB) and still
/// one cheap write per viewer, while a 12 MB tool result held whole would cost 12 MB in the
/// window, every page that holds it and every viewer it is sent to (bench/RESULTS.md).
inline constexpr std::size_t FRAME_INLINE_MAX_BYTES = 256 * 1024;

/// Bytes of a large block kept at its head and again at its tail in the reference form.
inline constexpr std::size_t FRAME_PREVIEW_BYTES = 2 * 1024;

/// Strings shorter than this are never cut: they are not "large blocks" (a cut saves little).
inline constexpr std::size_t FRAME_BLOCK_MIN_BYTES = 4 * FRAME_PREVIEW_BYTES;

/// The lowercase hex SHA-256 of `bytes`.
[[nodiscard]] std::string sha256_hex(std::string_view bytes);

/// The form a frame is held in: `f` itself when its wire weight is at most
/// FRAME_INLINE_MAX_BYTES, else its reference form — the same row with every string value of
/// FRAME_BLOCK_MIN_BYTES or more replaced by its head and tail (FRAME_PREVIEW_BYTES each, cut
/// at UTF-8 boundaries) around a marker naming its size, and a top-level `sluice_ref` object:
/// `{"bytes":<the whole frame's wire bytes>,"sha256":<of the whole frame's JSON>,
/// "blocks":[{"path":<JSON pointer>,"bytes":…,"lines":…,"sha256":…},…]}`. The whole frame is
/// fetched from the transcript (`GET /v1/seats/{id}/frames/{seq}`). A row that already has
/// `sluice_ref` is returned as it is. Builds the new row without copying the large strings.
[[nodiscard]] FramePtr held_form(FramePtr f);

/// Whether `f` is a reference form (has `sluice_ref`).
[[nodiscard]] bool is_reference_form(const Frame& f);

} // namespace sluice
