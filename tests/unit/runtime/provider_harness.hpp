// Test helper: runs a provider against the loopback stub and tallies the events it emitted.
#pragma once

#include "support/run_async.hpp"
#include "support/stub_provider.hpp"

#include <sluice/runtime/providers/provider.hpp>

#include <boost/json/serialize.hpp>

#include <map>
#include <string>
#include <vector>

namespace sluice::test {

/// What one provider call emitted, summed up.
struct Tally {
    std::string text;                          ///< all Text previews joined
    std::string thinking;                      ///< all Thinking previews joined
    std::vector<llm::ToolUseStart> starts;     ///< ToolUseStart events
    std::map<std::string, std::string> deltas; ///< ToolUseDelta joined per tool id
    std::vector<llm::ToolUse> uses;            ///< ToolUse events
    std::vector<std::string> notices;          ///< Notice lines
    std::size_t events{};                      ///< every event
    boost::system::result<runtime::ProviderResponse> result{runtime::ProviderResponse{}};
    std::string error; ///< the provider's error_message()
};

/// The path of a shared fixture.
inline std::string fixture(const std::string& rel) {
    return std::string(SLUICE_FIXTURES_DIR) + "/" + rel;
}

/// A fixture as an SSE body: raw captures end with a blank line, data-per-line files are framed.
inline std::string fixture_body(const std::string& rel) {
    auto raw = StubProvider::read_file(fixture(rel));
    if (rel.size() > 11 && rel.ends_with(".chunks.txt")) {
        return StubProvider::sse_from_data_lines(raw);
    }
    return StubProvider::terminated_sse(std::move(raw));
}

/// Calls `provider.stream` once with a one-message request, on a fresh single-threaded
/// io_context run to completion, and tallies what it emitted.
inline Tally run_provider(
    runtime::Provider& provider,
    const CancellationToken& cancel = {},
    runtime::ProviderRequest request = {}) {
    if (request.messages.empty()) {
        request.messages.push_back(boost::json::object{{"role", "user"}, {"content", "hi"}});
    }
    Tally t;
    const runtime::EventSink sink = [&t](StreamEvent ev) {
        ++t.events;
        if (auto* x = std::get_if<llm::Text>(&ev)) {
            t.text += x->text;
        } else if (auto* th = std::get_if<llm::Thinking>(&ev)) {
            t.thinking += th->text;
        } else if (auto* s = std::get_if<llm::ToolUseStart>(&ev)) {
            t.starts.push_back(*s);
        } else if (auto* d = std::get_if<llm::ToolUseDelta>(&ev)) {
            t.deltas[d->tool_id] += d->delta;
        } else if (auto* u = std::get_if<llm::ToolUse>(&ev)) {
            t.uses.push_back(*u);
        } else if (auto* n = std::get_if<session::Notice>(&ev)) {
            t.notices.push_back(n->text);
        }
    };
    boost::asio::io_context io;
    t.result = run_async(io, [&] { return provider.stream(request, cancel, sink); });
    if (!t.result) {
        t.error = provider.error_message();
    }
    return t;
}

/// The blocks of an assembled assistant message whose type is `type`.
inline std::vector<boost::json::object>
blocks_of(const boost::json::value& message, std::string_view type) {
    std::vector<boost::json::object> out;
    for (const auto& b : message.at("content").as_array()) {
        if (b.at("type").as_string() == type) {
            out.push_back(b.as_object());
        }
    }
    return out;
}

} // namespace sluice::test
