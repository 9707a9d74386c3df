// The OpenAI Chat Completions provider: history translation, request body, and the stream's
// chunks assembled into StreamEvents and an (Anthropic-shaped) assistant message.
#include "sse_request.hpp"

#include <sluice/core/error.hpp>
#include <sluice/runtime/providers/openai.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <map>

namespace sluice::runtime {

namespace json = boost::json;

namespace {

constexpr detail::ProviderLabel LABEL{"openai", "OPENAI_API_KEY"};

/// The text of a tool_result's content (a string, or the text blocks of an array).
std::string result_text(const json::value& content) {
    if (content.is_string()) {
        return std::string(content.get_string());
    }
    std::string out;
    if (content.is_array()) {
        for (const auto& b : content.get_array()) {
            if (b.is_object() && detail::string_of(b.get_object(), "type") == "text") {
                if (!out.empty()) {
                    out += "\n";
                }
                out += detail::string_of(b.get_object(), "text");
            }
        }
    }
    return out;
}

/// One response's state: text, reasoning, tool calls by index, finish reason, usage.
class ChunkAssembler final : public detail::StreamAssembler {
public:
    ChunkAssembler(const EventSink& sink, detail::Failure& failure)
        : sink_(sink)
        , failure_(failure) {}

    detail::EventVerdict on_event(const sse::Event& ev) override {
        if (sse::is_done(ev)) {
            done_ = true;
            return detail::EventVerdict::more;
        }
        json::object obj;
        if (!detail::parse_object(LABEL, ev, obj, failure_)) {
            return detail::EventVerdict::stop;
        }
        const auto* err = obj.if_contains("error");
        if (ev.type == "error" || (err != nullptr && !err->is_null())) {
            failure_.set(
                errc::provider_error, "openai: stream error: " + detail::error_text(ev.data));
            return detail::EventVerdict::stop;
        }
        if (const auto m = detail::string_of(obj, "model"); !m.empty()) {
            usage_.model = m;
        }
        if (const auto* u = obj.if_contains("usage"); u != nullptr && u->is_object()) {
            const auto& uo = u->get_object();
            usage_.input = detail::count_of(uo, "prompt_tokens");
            usage_.output = detail::count_of(uo, "completion_tokens");
            if (const auto* d = uo.if_contains("prompt_tokens_details");
                d != nullptr && d->is_object()) {
                usage_.cache_read = detail::count_of(d->get_object(), "cached_tokens");
            }
        }
        const auto* choices = obj.if_contains("choices");
        if (choices == nullptr || !choices->is_array()) {
            return detail::EventVerdict::more;
        }
        for (const auto& c : choices->get_array()) {
            if (!c.is_object() || detail::count_of(c.get_object(), "index") != 0) {
                continue; // only the first choice is followed
            }
            choice(c.get_object());
        }
        return too_large_ ? detail::EventVerdict::stop : detail::EventVerdict::more;
    }

    std::optional<ProviderResponse> finish() override {
        if (!done_ && finish_reason_.empty()) {
            failure_.set(
                errc::protocol_error,
                "openai: malformed stream: the stream ended before the response finished");
            return std::nullopt;
        }
        ProviderResponse out;
        out.stop_reason_text = finish_reason_;
        out.stop_reason = stop_reason_from(finish_reason_);
        if (!refusal_.empty()) {
            out.stop_reason = StopReason::refusal;
        }
        json::array content;
        if (!text_.empty() || !refusal_.empty()) {
            content.push_back(json::object{{"type", "text"}, {"text", text_ + refusal_}});
        }
        for (auto& [index, call] : calls_) {
            if (!call.started) {
                start(call, index);
            }
            json::value input = json::object{};
            if (!call.args.empty()) {
                boost::system::error_code ec;
                input = json::parse(call.args, ec);
                if (ec || !input.is_object()) {
                    const std::string problem =
                        "the arguments of tool call " + call.name + " are not a JSON object";
                    const detail::CutToolCall cut{
                        call.name, call.id, problem, "its length limit", "arguments"};
                    if (!detail::drop_cut_tool_call(LABEL, out.stop_reason, cut, sink_, failure_)) {
                        return std::nullopt;
                    }
                    continue;
                }
            }
            sink_(llm::ToolUse{call.name, call.id, input});
            content.push_back(json::object{
                {"type", "tool_use"},
                {"id", call.id},
                {"name", call.name},
                {"input", std::move(input)}});
        }
        detail::finish_response(out, std::move(content), usage_);
        return out;
    }

private:
    struct Call {
        std::string id;
        std::string name;
        std::string args;
        bool started{false};
    };

    void start(Call& call, std::uint64_t index) {
        if (call.id.empty()) {
            call.id = "call_" + std::to_string(index); // some compatible servers send no id
        }
        call.started = true;
        sink_(llm::ToolUseStart{call.name, call.id});
        if (!call.args.empty()) {
            sink_(llm::ToolUseDelta{call.id, call.args});
        }
    }

    // Appends `piece` to `into` unless that passes ASSEMBLED_BLOCK_MAX_BYTES; then the response
    // fails (payload_too_large) and the stream stops.
    bool fits(std::string& into, std::string_view piece, std::string_view what) {
        assembled_ += piece.size();
        const bool whole = assembled_ > ASSEMBLED_MESSAGE_MAX_BYTES;
        if (into.size() + piece.size() > ASSEMBLED_BLOCK_MAX_BYTES || whole) {
            failure_.set(
                errc::payload_too_large,
                assembled_block_too_large(
                    whole ? std::string("openai: the message (all its choices' pieces)")
                          : std::string("openai: ") + std::string(what),
                    whole));
            too_large_ = true;
            return false;
        }
        into.append(piece);
        return true;
    }

    void choice(const json::object& c) {
        if (const auto f = detail::string_of(c, "finish_reason"); !f.empty()) {
            finish_reason_ = f;
        }
        const auto* d = c.if_contains("delta");
        if (d == nullptr || !d->is_object()) {
            return;
        }
        const auto& delta = d->get_object();
        if (const auto t = detail::string_of(delta, "content"); !t.empty()) {
            if (!fits(text_, t, "content")) {
                return;
            }
            sink_(llm::Text{std::string(t)});
        }
        auto reasoning = detail::string_of(delta, "reasoning_content");
        if (reasoning.empty()) {
            reasoning = detail::string_of(delta, "reasoning");
        }
        if (!reasoning.empty()) {
            sink_(llm::Thinking{std::string(reasoning)});
        }
        if (const auto r = detail::string_of(delta, "refusal"); !r.empty()) {
            if (!fits(refusal_, r, "refusal")) {
                return;
            }
            sink_(llm::Text{std::string(r)});
        }
        const auto* calls = delta.if_contains("tool_calls");
        if (calls == nullptr || !calls->is_array()) {
            return;
        }
        std::uint64_t position = 0;
        for (const auto& tc : calls->get_array()) {
            if (!tc.is_object()) {
                continue;
            }
            const auto& t = tc.get_object();
            const std::uint64_t index =
                t.contains("index") ? detail::count_of(t, "index") : position;
            ++position;
            Call& call = calls_[index];
            if (const auto id = detail::string_of(t, "id"); !id.empty() && call.id.empty()) {
                call.id = id;
            }
            std::string_view args;
            if (const auto* f = t.if_contains("function"); f != nullptr && f->is_object()) {
                if (const auto n = detail::string_of(f->get_object(), "name");
                    !n.empty() && call.name.empty()) {
                    call.name = n;
                }
                args = detail::string_of(f->get_object(), "arguments");
            }
            if (!fits(call.args, args, "tool call arguments")) {
                return;
            }
            if (!call.started) {
                if (!call.name.empty()) {
                    start(call, index); // also replays any arguments that came first
                }
            } else if (!args.empty()) {
                sink_(llm::ToolUseDelta{call.id, std::string(args)});
            }
        }
    }

    const EventSink& sink_;
    detail::Failure& failure_;
    std::string text_;
    std::string refusal_;
    bool too_large_{false};
    std::size_t assembled_{}; // bytes assembled by this response (ASSEMBLED_MESSAGE_MAX_BYTES)
    std::map<std::uint64_t, Call> calls_;
    std::string finish_reason_;
    session::Usage usage_;
    bool done_{false};
};

class OpenAiProvider final : public detail::SseProvider {
public:
    OpenAiProvider(detail::ProviderSettings settings, transport::HttpOptions http)
        : SseProvider(LABEL, std::move(http))
        , base_url_(std::move(settings.base_url))
        , key_(std::move(settings.key))
        , model_(std::move(settings.model))
        , completion_tokens_field_(base_url_.find("api.openai.com") != std::string::npos) {}

private:
    [[nodiscard]] detail::SseCall prepare(const ProviderRequest& request) const override {
        transport::HttpHeaders headers;
        if (!key_.empty()) {
            headers.emplace_back("Authorization", "Bearer " + key_);
        }
        return {
            detail::join_url(base_url_, "/chat/completions"),
            std::move(headers),
            json::serialize(openai_request_body(request, model_, completion_tokens_field_))};
    }

    [[nodiscard]] std::unique_ptr<detail::StreamAssembler>
    assembler(const EventSink& sink, detail::Failure& failure) const override {
        return std::make_unique<ChunkAssembler>(sink, failure);
    }

    std::string base_url_;
    std::string key_;
    std::string model_;
    bool completion_tokens_field_;
};

} // namespace

json::array
chat_messages_from_anthropic(std::string_view system, const std::vector<json::value>& messages) {
    json::array out;
    if (!system.empty()) {
        out.push_back(json::object{{"role", "system"}, {"content", system}});
    }
    for (const auto& m : messages) {
        if (!m.is_object()) {
            continue;
        }
        const auto& mo = m.get_object();
        const std::string role(detail::string_of(mo, "role"));
        const auto* content = mo.if_contains("content");
        if (content == nullptr) {
            continue;
        }
        if (content->is_string()) {
            out.push_back(json::object{{"role", role}, {"content", content->get_string()}});
            continue;
        }
        if (!content->is_array()) {
            continue;
        }
        std::string text;
        json::array tool_calls;
        for (const auto& b : content->get_array()) {
            if (!b.is_object()) {
                continue;
            }
            const auto& bo = b.get_object();
            const auto type = detail::string_of(bo, "type");
            if (type == "text") {
                if (!text.empty()) {
                    text += "\n";
                }
                text += detail::string_of(bo, "text");
            } else if (type == "tool_result") {
                // Tool answers must directly follow the assistant's tool_calls: emit them first.
                std::string result = bo.contains("content") ? result_text(bo.at("content")) : "";
                if (const auto* e = bo.if_contains("is_error");
                    e != nullptr && e->is_bool() && e->get_bool()) {
                    result.insert(0, "Error: ");
                }
                out.push_back(json::object{
                    {"role", "tool"},
                    {"tool_call_id", detail::string_of(bo, "tool_use_id")},
                    {"content", result}});
            } else if (type == "tool_use") {
                const auto* input = bo.if_contains("input");
                tool_calls.push_back(json::object{
                    {"id", detail::string_of(bo, "id")},
                    {"type", "function"},
                    {"function",
                     json::object{
                         {"name", detail::string_of(bo, "name")},
                         {"arguments",
                          input != nullptr ? json::serialize(*input) : std::string("{}")}}}});
            }
            // thinking, redacted_thinking and images have no Chat Completions form here.
        }
        if (role == "assistant") {
            json::object a{{"role", "assistant"}};
            if (!tool_calls.empty()) {
                a["content"] = text.empty() ? json::value(nullptr) : json::value(text);
                a["tool_calls"] = std::move(tool_calls);
            } else {
                a["content"] = text;
            }
            out.push_back(std::move(a));
        } else if (!text.empty()) {
            out.push_back(json::object{{"role", role}, {"content", text}});
        }
    }
    return out;
}

json::object openai_request_body(
    const ProviderRequest& request, std::string_view default_model, bool max_completion_tokens) {
    json::object body;
    body["model"] = request.model.empty() ? default_model : std::string_view(request.model);
    body["messages"] = chat_messages_from_anthropic(request.system, request.messages);
    body["stream"] = true;
    body["stream_options"] = json::object{{"include_usage", true}};
    body[max_completion_tokens ? "max_completion_tokens" : "max_tokens"] = request.max_tokens;
    if (!request.tools.empty()) {
        json::array tools;
        for (const auto& t : request.tools) {
            tools.push_back(json::object{
                {"type", "function"},
                {"function",
                 json::object{
                     {"name", t.name},
                     {"description", t.description},
                     {"parameters", t.input_schema}}}});
        }
        body["tools"] = std::move(tools);
    }
    return body;
}

std::unique_ptr<Provider>
make_openai_provider(const ProviderConfig& config, transport::HttpOptions http) {
    auto settings = detail::settings_of(
        config,
        {"OPENAI_API_KEY", "OPENAI_BASE_URL", OPENAI_DEFAULT_BASE_URL, OPENAI_DEFAULT_MODEL});
    return std::make_unique<OpenAiProvider>(std::move(settings), std::move(http));
}

boost::system::result<ProviderResponse> decode_openai_stream(
    std::string_view body, std::size_t chunk, const EventSink& sink, std::string& error) {
    return detail::decode_with<ChunkAssembler>(LABEL, body, chunk, sink, error);
}

} // namespace sluice::runtime
