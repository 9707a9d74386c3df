// Message: one notice as every delivery sends it — the push payload and webhook body (JSON),
// a person's title and text, ntfy's tags and priority, RFC 8030's urgency and topic. Private to
// src/push; pure.
#pragma once

#include <sluice/hub/notify.hpp>

#include <string>

namespace sluice::push {

/// One notice as every delivery sends it: made once, shared.
struct Message {
    std::string json;     // the push payload and the webhook body
    std::string title;    // a person's one line
    std::string text;     // the detail
    std::string tags;     // ntfy Tags
    std::string priority; // ntfy Priority (1-5)
    std::string click;    // the card's absolute URL, or ""
    std::string urgency;  // RFC 8030 Urgency
    std::string topic;    // RFC 8030 Topic: the seat, so a newer push replaces an older
    std::string kind;
};

/// The message of `n`; card links are absolute under `public_url` when it is set.
[[nodiscard]] Message make_message(const hub::Notice& n, const std::string& public_url);

} // namespace sluice::push
