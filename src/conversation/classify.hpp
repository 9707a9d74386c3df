// Private: the classification of user text shared by Frame and the row scanner.
#pragma once

#include <sluice/conversation/frame.hpp>

#include <string_view>

namespace sluice::detail {

/// What one piece of user text is: a typed prompt, a command, a continuation, or a note.
FrameRole classify_user_text(std::string_view raw);

} // namespace sluice::detail
