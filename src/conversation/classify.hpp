// Private: the classification of user text shared by Frame and the row scanner.
#pragma once

#include <sluice/conversation/frame.hpp>

#include <string_view>

namespace sluice::detail {

/// What one piece of user text is: a typed prompt, a command, a continuation, or a note.
FrameRole classify_user_text(std::string_view raw);

/// What the text and image blocks of one user row said, folded into its role as Frame and the
/// row scan both do (one rule, two parsers).
class UserBlocks {
public:
    /// One text block.
    void text(std::string_view raw);

    /// One image block.
    void image() noexcept { image_ = true; }

    /// Sets `f.role` from the blocks seen: a tool_result row stays one; else a command, a
    /// prompt, a continuation, an image, in that order; else the role is left as it was.
    void settle(TurnFacts& f) const noexcept;

private:
    bool prompt_{false};
    bool command_{false};
    bool continuation_{false};
    bool image_{false};
};

} // namespace sluice::detail
