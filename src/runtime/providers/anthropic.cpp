// The Anthropic provider: request body, and the Messages stream's events assembled into
// StreamEvents and an assistant message.
#include "sse_request.hpp"

#include <sluice/core/error.hpp>
#include <sluice/runtime/providers/anthropic.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <map>
#include <stdexcept>

namespace sluice::runtime {

namespace json = boost::json;

namespace {

constexpr detail::ProviderLabel LABEL{"anthropic", "ANTHROPIC_API_KEY"};

bool takes_json_input(std::string_view type) {
    return type == "tool_use" || type == "server_tool_use" || type == "mcp_tool_use";
}

/// One response's state: the content blocks as they are built, usage, stop reason.
class MessageAssembler final : public detail::StreamAssembler {
public:
    MessageAssembler(const EventSink& sink, detail::Failure& failure)
        : sink_(sink)
        , failure_(failure) {}

    detail::EventVerdict on_event(const sse::Event& ev) override {
        json::object obj;
        if (!detail::parse_object(LABEL, ev, obj, failure_)) {
            return detail::EventVerdict::stop;
        }
        std::string type(detail::string_of(obj, "type"));
        if (type.empty()) {
            type = ev.type;
        }
        if (type == "ping") {
            return detail::EventVerdict::more;
        }
        if (type == "error" || ev.type == "error") {
            const auto* e = obj.if_contains("error");
            const std::string text = e != nullptr ? detail::error_text(json::serialize(obj))
                                                  : detail::error_text(ev.data);
            failure_.set(errc::provider_error, "anthropic: stream error: " + text);
            return detail::EventVerdict::stop;
        }
        if (type == "message_start") {
            return message_start(obj);
        }
        if (!started_) {
            return malformed("'" + type + "' before message_start");
        }
        if (type == "content_block_start") {
            return block_start(obj);
        }
        if (type == "content_block_delta") {
            return block_delta(obj);
        }
        if (type == "content_block_stop") {
            return block_stop(obj);
        }
        if (type == "message_delta") {
            if (const auto* d = obj.if_contains("delta"); d != nullptr && d->is_object()) {
                if (const auto r = detail::string_of(d->get_object(), "stop_reason"); !r.empty()) {
                    stop_reason_ = r;
                }
            }
            if (const auto* u = obj.if_contains("usage"); u != nullptr && u->is_object()) {
                read_usage(u->get_object());
            }
            return detail::EventVerdict::more;
        }
        if (type == "message_stop") {
            stopped_ = true;
        }
        return detail::EventVerdict::more; // unknown event types are skipped
    }

    /// Called when the body ended (and no failure was recorded): the summary, or a failure.
    std::optional<ProviderResponse> finish() override {
        if (!started_ || !stopped_) {
            failure_.set(
                errc::protocol_error,
                started_ ? "anthropic: malformed stream: the stream ended before message_stop"
                         : "anthropic: malformed stream: no message_start");
            return std::nullopt;
        }
        ProviderResponse out;
        out.stop_reason_text = stop_reason_;
        out.stop_reason = stop_reason_from(stop_reason_);
        json::array content;
        for (auto& [index, b] : blocks_) {
            if (b.open && takes_json_input(b.type)) {
                // Never finished (cut by max_tokens): usable only if its JSON happens to parse.
                if (!finish_input(b)) {
                    const auto name = detail::string_of(b.block, "name");
                    const std::string problem =
                        "tool call " + std::string(name) + " ended without complete input";
                    const detail::CutToolCall cut{
                        name, detail::string_of(b.block, "id"), problem, "max_tokens", "input"};
                    if (!detail::drop_cut_tool_call(LABEL, out.stop_reason, cut, sink_, failure_)) {
                        return std::nullopt;
                    }
                    continue;
                }
                emit_tool_use(b);
            }
            if (b.type == "text" && detail::string_of(b.block, "text").empty()) {
                continue; // the API refuses empty text blocks in a request
            }
            content.emplace_back(std::move(b.block));
        }
        detail::finish_response(out, std::move(content), usage_);
        return out;
    }

private:
    struct Block {
        std::string type;
        json::object block;
        std::string input_json; // input_json_delta fragments so far
        bool open{true};
    };

    detail::EventVerdict malformed(const std::string& what) {
        failure_.set(errc::protocol_error, "anthropic: malformed stream: " + what);
        return detail::EventVerdict::stop;
    }

    void read_usage(const json::object& u) {
        if (u.contains("input_tokens")) {
            usage_.input = detail::count_of(u, "input_tokens");
        }
        if (u.contains("output_tokens")) {
            usage_.output = detail::count_of(u, "output_tokens");
        }
        if (u.contains("cache_read_input_tokens")) {
            usage_.cache_read = detail::count_of(u, "cache_read_input_tokens");
        }
        if (u.contains("cache_creation_input_tokens")) {
            usage_.cache_creation = detail::count_of(u, "cache_creation_input_tokens");
        }
    }

    detail::EventVerdict message_start(const json::object& obj) {
        if (started_ && !stopped_) {
            return malformed("a second message_start before message_stop");
        }
        started_ = true;
        stopped_ = false;
        blocks_.clear();
        assembled_ = 0;
        const auto* m = obj.if_contains("message");
        if (m == nullptr || !m->is_object()) {
            return malformed("message_start without a message");
        }
        usage_.model = std::string(detail::string_of(m->get_object(), "model"));
        if (const auto* u = m->get_object().if_contains("usage"); u != nullptr && u->is_object()) {
            read_usage(u->get_object());
        }
        return detail::EventVerdict::more;
    }

    Block* block_at(const json::object& obj) {
        const auto* i = obj.if_contains("index");
        if (i == nullptr || !i->is_number()) {
            return nullptr;
        }
        auto it = blocks_.find(detail::count_of(obj, "index"));
        return it == blocks_.end() ? nullptr : &it->second;
    }

    detail::EventVerdict block_start(const json::object& obj) {
        const auto* cb = obj.if_contains("content_block");
        if (cb == nullptr || !cb->is_object() || !obj.contains("index")) {
            return malformed("content_block_start without a block");
        }
        const auto index = detail::count_of(obj, "index");
        if (blocks_.contains(index)) {
            return malformed("content block " + std::to_string(index) + " started twice");
        }
        Block b{
            std::string(detail::string_of(cb->get_object(), "type")), cb->get_object(), {}, true};
        if (b.type == "tool_use") {
            sink_(llm::ToolUseStart{
                std::string(detail::string_of(b.block, "name")),
                std::string(detail::string_of(b.block, "id"))});
        } else if (b.type == "text") {
            if (const auto t = detail::string_of(b.block, "text"); !t.empty()) {
                sink_(llm::Text{std::string(t)});
            }
        } else if (b.type == "thinking") {
            if (const auto t = detail::string_of(b.block, "thinking"); !t.empty()) {
                sink_(llm::Thinking{std::string(t)});
            }
        }
        blocks_.emplace(index, std::move(b));
        return detail::EventVerdict::more;
    }

    // Appends `piece` to the block's `key` unless that passes ASSEMBLED_BLOCK_MAX_BYTES.
    static bool append_string(json::object& o, std::string_view key, std::string_view piece) {
        auto& v = o[key];
        if (v.is_string()) {
            if (v.get_string().size() + piece.size() > ASSEMBLED_BLOCK_MAX_BYTES) {
                return false;
            }
            v.get_string().append(piece);
        } else {
            v = piece;
        }
        return true;
    }

    detail::EventVerdict
    too_large(const json::object& obj, std::string_view what, bool whole_message = false) {
        failure_.set(
            errc::payload_too_large,
            assembled_block_too_large(
                "anthropic: " + std::string(what)
                    + (whole_message
                           ? std::string()
                           : " of block " + std::to_string(detail::count_of(obj, "index"))),
                whole_message));
        return detail::EventVerdict::stop;
    }

    detail::EventVerdict block_delta(const json::object& obj) {
        Block* b = block_at(obj);
        const auto* d = obj.if_contains("delta");
        if (b == nullptr || d == nullptr || !d->is_object()) {
            return malformed("content_block_delta for an unknown block");
        }
        const auto& delta = d->get_object();
        const auto kind = detail::string_of(delta, "type");
        assembled_ += detail::string_of(delta, "text").size()
                      + detail::string_of(delta, "thinking").size()
                      + detail::string_of(delta, "signature").size()
                      + detail::string_of(delta, "partial_json").size();
        if (assembled_ > ASSEMBLED_MESSAGE_MAX_BYTES) {
            return too_large(obj, "the message (all its blocks)", /*whole_message=*/true);
        }
        if (kind == "text_delta") {
            const auto t = detail::string_of(delta, "text");
            if (!append_string(b->block, "text", t)) {
                return too_large(obj, "the text");
            }
            sink_(llm::Text{std::string(t)});
        } else if (kind == "thinking_delta") {
            const auto t = detail::string_of(delta, "thinking");
            if (!append_string(b->block, "thinking", t)) {
                return too_large(obj, "the thinking");
            }
            sink_(llm::Thinking{std::string(t)});
        } else if (kind == "signature_delta") {
            if (!append_string(b->block, "signature", detail::string_of(delta, "signature"))) {
                return too_large(obj, "the signature");
            }
        } else if (kind == "input_json_delta") {
            const auto part = detail::string_of(delta, "partial_json");
            if (b->input_json.size() + part.size() > ASSEMBLED_BLOCK_MAX_BYTES) {
                return too_large(obj, "the tool input");
            }
            b->input_json.append(part);
            if (b->type == "tool_use" && !part.empty()) {
                sink_(llm::ToolUseDelta{
                    std::string(detail::string_of(b->block, "id")), std::string(part)});
            }
        } else if (kind == "citations_delta") {
            auto& c = b->block["citations"];
            if (!c.is_array()) {
                c = json::array{};
            }
            if (const auto* cit = delta.if_contains("citation"); cit != nullptr) {
                c.get_array().push_back(*cit);
            }
        } else if (kind == "compaction_delta") {
            for (const auto& kv : delta) {
                if (kv.key() != "type") {
                    b->block[kv.key()] = kv.value();
                }
            }
        }
        return detail::EventVerdict::more;
    }

    /// Parses a tool block's accumulated input into block.input; false if it is not JSON.
    static bool finish_input(Block& b) {
        b.open = false;
        if (b.input_json.empty()) {
            if (!b.block.contains("input") || !b.block["input"].is_object()) {
                b.block["input"] = json::object{};
            }
            return true;
        }
        boost::system::error_code ec;
        auto v = json::parse(b.input_json, ec);
        if (ec || !v.is_object()) {
            return false;
        }
        b.block["input"] = std::move(v);
        b.input_json.clear();
        return true;
    }

    void emit_tool_use(const Block& b) {
        if (b.type == "tool_use") {
            sink_(llm::ToolUse{
                std::string(detail::string_of(b.block, "name")),
                std::string(detail::string_of(b.block, "id")),
                b.block.at("input")});
        }
    }

    detail::EventVerdict block_stop(const json::object& obj) {
        Block* b = block_at(obj);
        if (b == nullptr) {
            return malformed("content_block_stop for an unknown block");
        }
        if (takes_json_input(b->type)) {
            if (!finish_input(*b)) {
                return malformed(
                    "the input of tool call " + std::string(detail::string_of(b->block, "name"))
                    + " is not a JSON object");
            }
            emit_tool_use(*b);
        }
        b->open = false;
        return detail::EventVerdict::more;
    }

    const EventSink& sink_;
    detail::Failure& failure_;
    std::map<std::uint64_t, Block> blocks_;
    std::size_t assembled_{}; // bytes assembled by this message's blocks (ASSEMBLED_MESSAGE_MAX)
    session::Usage usage_;
    std::string stop_reason_;
    bool started_{false};
    bool stopped_{false};
};

class AnthropicProvider final : public detail::SseProvider {
public:
    AnthropicProvider(detail::ProviderSettings settings, transport::HttpOptions http)
        : SseProvider(LABEL, std::move(http))
        , base_url_(std::move(settings.base_url))
        , key_(std::move(settings.key))
        , model_(std::move(settings.model)) {}

private:
    [[nodiscard]] detail::SseCall prepare(const ProviderRequest& request) const override {
        return {
            detail::join_url(base_url_, "/v1/messages"),
            {{"x-api-key", key_}, {"anthropic-version", ANTHROPIC_API_VERSION}},
            json::serialize(anthropic_request_body(request, model_))};
    }

    [[nodiscard]] std::unique_ptr<detail::StreamAssembler>
    assembler(const EventSink& sink, detail::Failure& failure) const override {
        return std::make_unique<MessageAssembler>(sink, failure);
    }

    std::string base_url_;
    std::string key_;
    std::string model_;
};

} // namespace

json::object
anthropic_request_body(const ProviderRequest& request, std::string_view default_model) {
    json::object body;
    body["model"] = request.model.empty() ? default_model : std::string_view(request.model);
    std::uint32_t max_tokens = request.max_tokens;
    if (request.thinking_budget) {
        // The API requires max_tokens > budget_tokens: the budget comes on top of the answer.
        if (max_tokens <= *request.thinking_budget) {
            max_tokens = *request.thinking_budget + request.max_tokens;
        }
        body["thinking"] =
            json::object{{"type", "enabled"}, {"budget_tokens", *request.thinking_budget}};
    }
    body["max_tokens"] = max_tokens;
    body["stream"] = true;
    if (!request.system.empty()) {
        body["system"] = request.system;
    }
    json::array messages;
    for (const auto& m : request.messages) {
        messages.push_back(m);
    }
    body["messages"] = std::move(messages);
    if (!request.tools.empty()) {
        json::array tools;
        for (const auto& t : request.tools) {
            tools.push_back(json::object{
                {"name", t.name},
                {"description", t.description},
                {"input_schema", t.input_schema}});
        }
        body["tools"] = std::move(tools);
    }
    return body;
}

std::unique_ptr<Provider>
make_anthropic_provider(const ProviderConfig& config, transport::HttpOptions http) {
    auto settings = detail::settings_of(
        config,
        {"ANTHROPIC_API_KEY",
         "ANTHROPIC_BASE_URL",
         ANTHROPIC_DEFAULT_BASE_URL,
         ANTHROPIC_DEFAULT_MODEL});
    if (settings.key.empty()) {
        throw std::invalid_argument(
            "anthropic: no API key: set ANTHROPIC_API_KEY (or pass a key in the configuration)");
    }
    return std::make_unique<AnthropicProvider>(std::move(settings), std::move(http));
}

boost::system::result<ProviderResponse> decode_anthropic_stream(
    std::string_view body, std::size_t chunk, const EventSink& sink, std::string& error) {
    return detail::decode_with<MessageAssembler>(LABEL, body, chunk, sink, error);
}

} // namespace sluice::runtime
