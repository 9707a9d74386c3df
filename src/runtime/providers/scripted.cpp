// The scripted provider: replays a JSON script as a streamed response, paced by a steady_timer.
#include <sluice/core/error.hpp>
#include <sluice/core/utf8.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/runtime/providers/scripted.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sluice::runtime {

namespace json = boost::json;

namespace {

// Basis: with no delay a flood (`repeat: -1`) would otherwise never give its thread back; one
// yield per 64 events lets other work on the same executor interleave (see
// ScriptedProvider.PacesWithoutBlockingTheIoContext) at a negligible cost per event.
constexpr unsigned EVENTS_PER_YIELD = 64;

// An assembled block is not kept past the one limit every decoder shares (a `repeat: -1` flood
// must not grow memory); the stream itself continues (a script is ours, not a hostile peer).
constexpr std::size_t MAX_ASSEMBLED_BLOCK_BYTES = ASSEMBLED_BLOCK_MAX_BYTES;

// Ends a block cut at MAX_ASSEMBLED_BLOCK_BYTES.
constexpr std::string_view BLOCK_CUT_MARKER =
    "\n[… cut: this block passed ASSEMBLED_BLOCK_MAX_BYTES]";

constexpr std::string_view DEFAULT_SCRIPT =
    R"json({
  "model": "scripted-demo",
  "delay_ms": 25,
  "chunk_bytes": 16,
  "rounds": [
    {"events": [
       {"thinking": "The user wants to see what a turn looks like. I will say what I am about)json"
    R"json( to do, run one small tool call so its output streams)json"
    R"json( back, and then answer.", "signature": "scripted-signature"},
       {"text": "Let me run a quick tool call to show how tool output streams."},
       {"tool_use": {"choices": [
          {"name": "bash", "input": {"command": "echo 'hello from the bash tool'; uname -sr"}},
          {"name": "read_file", "input": {"path": "/etc/os-release", "limit": 400}},
          {"name": "echo", "input": {"text": "hello from the echo tool"}}]}}],
     "usage": {"input": 120, "output": 64}},
    {"events": [
       {"text": "The tool answered, and its output streamed back as tool result deltas before)json"
    R"json( the whole result arrived. That was one turn of the scripted provider:)json"
    R"json( thinking, a tool call with its result, and this answer, with no)json"
    R"json( network and no API key."}],
     "usage": {"input": 210, "output": 48}}
  ]
})json";

struct ToolChoice {
    std::string name;
    json::value input;
};

struct ScriptEvent {
    enum class Kind { thinking, text, tool_use, error } kind{Kind::text};
    std::string text;      // thinking / text / error message
    std::string signature; // thinking
    std::string id;        // tool_use (empty: generated)
    std::vector<ToolChoice> choices;
    std::int64_t repeat{1}; // -1: forever
};

struct ScriptRound {
    std::vector<ScriptEvent> events;
    std::optional<StopReason> stop;
    std::string stop_text;
    session::Usage usage;
};

struct Script {
    std::string model{"scripted"};
    double delay_ms{0};
    std::size_t chunk_bytes{0};
    std::vector<ScriptRound> rounds;
};

[[noreturn]] void bad(const std::string& what) {
    throw std::invalid_argument("scripted provider: " + what);
}

std::string str_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr) {
        return {};
    }
    if (!v->is_string()) {
        bad("\"" + std::string(key) + "\" must be a string");
    }
    return std::string(v->get_string());
}

std::uint64_t uint_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr) {
        return 0;
    }
    if (v->is_int64() && v->get_int64() >= 0) {
        return static_cast<std::uint64_t>(v->get_int64());
    }
    if (v->is_uint64()) {
        return v->get_uint64();
    }
    bad("\"" + std::string(key) + "\" must be a non-negative integer");
}

ToolChoice parse_choice(const json::value& v) {
    const auto* o = v.if_object();
    if (o == nullptr) {
        bad("a tool choice must be an object");
    }
    ToolChoice c{str_of(*o, "name"), json::object{}};
    if (c.name.empty()) {
        bad("a tool_use needs a \"name\"");
    }
    if (const auto* in = o->if_contains("input"); in != nullptr) {
        if (!in->is_object()) {
            bad("a tool_use \"input\" must be an object");
        }
        c.input = *in;
    }
    return c;
}

ScriptEvent parse_event(const json::value& v) {
    const auto* o = v.if_object();
    if (o == nullptr) {
        bad("an event must be an object");
    }
    ScriptEvent e;
    if (const auto* r = o->if_contains("repeat"); r != nullptr) {
        if (!r->is_int64() || r->get_int64() < -1) {
            bad("\"repeat\" must be an integer >= -1");
        }
        e.repeat = r->get_int64();
    }
    if (o->contains("thinking")) {
        e.kind = ScriptEvent::Kind::thinking;
        e.text = str_of(*o, "thinking");
        e.signature = str_of(*o, "signature");
    } else if (o->contains("text")) {
        e.kind = ScriptEvent::Kind::text;
        e.text = str_of(*o, "text");
    } else if (const auto* tu = o->if_contains("tool_use"); tu != nullptr) {
        e.kind = ScriptEvent::Kind::tool_use;
        const auto* to = tu->if_object();
        if (to == nullptr) {
            bad("\"tool_use\" must be an object");
        }
        e.id = str_of(*to, "id");
        if (const auto* ch = to->if_contains("choices"); ch != nullptr) {
            if (!ch->is_array() || ch->get_array().empty()) {
                bad("\"choices\" must be a non-empty array");
            }
            for (const auto& c : ch->get_array()) {
                e.choices.push_back(parse_choice(c));
            }
        } else {
            e.choices.push_back(parse_choice(*tu));
        }
    } else if (o->contains("error")) {
        e.kind = ScriptEvent::Kind::error;
        e.text = str_of(*o, "error");
    } else {
        bad("an event needs one of thinking, text, tool_use, error");
    }
    return e;
}

Script parse_script(std::string_view text) {
    boost::system::error_code ec;
    auto doc = json::parse(text, ec);
    if (ec) {
        bad("the script is not JSON: " + ec.message());
    }
    const auto* root = doc.if_object();
    if (root == nullptr) {
        bad("the script must be a JSON object");
    }
    Script s;
    if (auto m = str_of(*root, "model"); !m.empty()) {
        s.model = std::move(m);
    }
    if (const auto* d = root->if_contains("delay_ms"); d != nullptr) {
        if (!d->is_number()) {
            bad("\"delay_ms\" must be a number");
        }
        s.delay_ms = std::max(0.0, d->to_number<double>());
    }
    s.chunk_bytes = static_cast<std::size_t>(uint_of(*root, "chunk_bytes"));
    const auto* rounds = root->if_contains("rounds");
    if (rounds == nullptr || !rounds->is_array() || rounds->get_array().empty()) {
        bad("\"rounds\" must be a non-empty array");
    }
    for (const auto& rv : rounds->get_array()) {
        const auto* ro = rv.if_object();
        if (ro == nullptr) {
            bad("a round must be an object");
        }
        ScriptRound r;
        const auto* evs = ro->if_contains("events");
        if (evs == nullptr || !evs->is_array()) {
            bad("a round needs an \"events\" array");
        }
        for (const auto& ev : evs->get_array()) {
            r.events.push_back(parse_event(ev));
        }
        if (auto st = str_of(*ro, "stop_reason"); !st.empty()) {
            r.stop = stop_reason_from(st);
            r.stop_text = st;
        }
        if (const auto* u = ro->if_contains("usage"); u != nullptr && u->is_object()) {
            r.usage.input = uint_of(u->get_object(), "input");
            r.usage.output = uint_of(u->get_object(), "output");
            r.usage.cache_read = uint_of(u->get_object(), "cache_read");
            r.usage.cache_creation = uint_of(u->get_object(), "cache_creation");
        }
        s.rounds.push_back(std::move(r));
    }
    return s;
}

// A user message that carries a prompt (not only tool results) starts a turn.
bool is_prompt(const json::value& m) {
    const auto* o = m.if_object();
    if (o == nullptr) {
        return false;
    }
    const auto* role = o->if_contains("role");
    if (role == nullptr || !role->is_string() || role->get_string() != "user") {
        return false;
    }
    const auto* content = o->if_contains("content");
    if (content == nullptr || content->is_string()) {
        return true;
    }
    if (!content->is_array()) {
        return true;
    }
    return std::any_of(
        content->get_array().begin(), content->get_array().end(), [](const json::value& b) {
            const auto* bo = b.if_object();
            const auto* t = bo == nullptr ? nullptr : bo->if_contains("type");
            return t == nullptr || !t->is_string() || t->get_string() != "tool_result";
        });
}

std::size_t round_of(const std::vector<json::value>& messages) {
    std::size_t assistants = 0;
    for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
        if (is_prompt(*it)) {
            break;
        }
        const auto* o = it->if_object();
        const auto* role = o == nullptr ? nullptr : o->if_contains("role");
        if (role != nullptr && role->is_string() && role->get_string() == "assistant") {
            ++assistants;
        }
    }
    return assistants;
}

class ScriptedProvider final : public Provider {
public:
    ScriptedProvider(Script script, double pace)
        : script_(std::move(script))
        , pace_(std::max(0.0, pace)) {}

    net::awaitable<boost::system::result<ProviderResponse>>
    stream(const ProviderRequest& request, CancellationToken cancel, EventSink sink) override {
        // The replay and its timer live on a strand of the caller's executor, so a cancel from
        // another thread (posted there) never races the timer. (No temporaries with
        // destructors inside a co_await expression: GCC 12 may destroy them twice.)
        const auto caller = co_await net::this_coro::executor;
        const Strand strand = net::make_strand(caller);
        const auto replay_on_strand = [this, &request, &cancel, &sink, &strand]() {
            return replay(request, cancel, sink, strand);
        };
        co_return co_await net::co_spawn(strand, replay_on_strand, net::use_awaitable);
    }

private:
    using Strand = net::strand<net::any_io_executor>;

    net::awaitable<boost::system::result<ProviderResponse>> replay(
        const ProviderRequest& request,
        const CancellationToken& cancel,
        const EventSink& sink,
        Strand strand) {
        const auto& round =
            script_.rounds[std::min(round_of(request.messages), script_.rounds.size() - 1)];
        Pacer pacer(
            strand, cancel, std::chrono::duration<double, std::milli>(script_.delay_ms * pace_));
        const std::string model = request.model.empty() ? script_.model : request.model;
        json::array content;
        bool called_tool = false;
        std::size_t tool_seq = 0;
        for (const auto& ev : round.events) {
            for (std::int64_t i = 0; ev.repeat < 0 || i < ev.repeat; ++i) {
                if (!co_await pacer.wait()) {
                    co_return cancelled();
                }
                switch (ev.kind) {
                case ScriptEvent::Kind::thinking:
                    if (!co_await emit_chunks(ev.text, pacer, sink, [](std::string t) {
                            return StreamEvent{llm::Thinking{std::move(t)}};
                        })) {
                        co_return cancelled();
                    }
                    append_block(content, "thinking", "thinking", ev.text, ev.signature);
                    break;
                case ScriptEvent::Kind::text: {
                    const std::string text = expand(ev.text, request);
                    if (!co_await emit_chunks(text, pacer, sink, [](std::string t) {
                            return StreamEvent{llm::Text{std::move(t)}};
                        })) {
                        co_return cancelled();
                    }
                    append_block(content, "text", "text", text, {});
                    break;
                }
                case ScriptEvent::Kind::tool_use: {
                    const auto& choice = pick(ev.choices, request.tools);
                    std::string id = ev.id.empty()
                                         ? "toolu_scripted_"
                                               + std::to_string(round_of(request.messages)) + "_"
                                               + std::to_string(tool_seq)
                                         : ev.id;
                    ++tool_seq;
                    sink(llm::ToolUseStart{choice.name, id});
                    const std::string input_text = json::serialize(choice.input);
                    if (!co_await emit_chunks(input_text, pacer, sink, [&id](std::string t) {
                            return StreamEvent{llm::ToolUseDelta{id, std::move(t)}};
                        })) {
                        co_return cancelled();
                    }
                    sink(llm::ToolUse{choice.name, id, choice.input});
                    content.push_back(json::object{
                        {"type", "tool_use"},
                        {"id", id},
                        {"name", choice.name},
                        {"input", choice.input}});
                    called_tool = true;
                    break;
                }
                case ScriptEvent::Kind::error:
                    error_ = "scripted provider error: " + ev.text;
                    co_return boost::system::error_code(errc::provider_error);
                }
            }
        }
        ProviderResponse resp;
        resp.stop_reason =
            round.stop.value_or(called_tool ? StopReason::tool_use : StopReason::end_turn);
        resp.stop_reason_text =
            round.stop ? round.stop_text : std::string(stop_reason_text(resp.stop_reason));
        resp.usage = round.usage;
        resp.usage.model = model;
        resp.assistant_message = json::object{
            {"id", "msg_scripted_" + std::to_string(++message_seq_)},
            {"type", "message"},
            {"role", "assistant"},
            {"model", model},
            {"content", std::move(content)},
            {"stop_reason", resp.stop_reason_text},
            {"usage",
             json::object{
                 {"input_tokens", resp.usage.input}, {"output_tokens", resp.usage.output}}}};
        error_.clear();
        co_return resp;
    }

    std::string error_message() const override { return error_; }

    std::string name() const override { return "scripted"; }

    // Waits between events on a steady_timer (the thread stays free), waking at once on cancel;
    // with no delay it yields now and then instead.
    class Pacer {
    public:
        Pacer(
            const Strand& strand,
            const CancellationToken& cancel,
            std::chrono::duration<double, std::milli> delay)
            : cancel_(cancel)
            , delay_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(delay))
            , timer_(std::make_shared<net::steady_timer>(strand)) {
            reg_ = cancel_.on_cancel([strand, weak = std::weak_ptr<net::steady_timer>(timer_)] {
                net::post(strand, [weak] {
                    if (const auto timer = weak.lock()) {
                        timer->cancel();
                    }
                });
            });
        }

        // False once cancelled.
        net::awaitable<bool> wait() {
            if (cancel_.is_cancelled()) {
                co_return false;
            }
            if (delay_.count() <= 0) {
                if (++since_yield_ >= EVENTS_PER_YIELD) {
                    since_yield_ = 0;
                    const auto ex = timer_->get_executor();
                    co_await net::post(ex, net::use_awaitable);
                }
                co_return !cancel_.is_cancelled();
            }
            timer_->expires_after(delay_);
            co_await timer_->async_wait(net::as_tuple(net::use_awaitable));
            co_return !cancel_.is_cancelled();
        }

    private:
        const CancellationToken& cancel_;
        std::chrono::steady_clock::duration delay_;
        std::shared_ptr<net::steady_timer> timer_;
        unsigned since_yield_{};
        CancelRegistration reg_; // last: unregistered before the timer goes
    };

    template <class Make>
    net::awaitable<bool>
    emit_chunks(std::string_view text, Pacer& pacer, const EventSink& sink, Make make) const {
        const std::size_t chunk = script_.chunk_bytes == 0 ? text.size() : script_.chunk_bytes;
        bool first = true;
        while (!text.empty() || first) {
            if (!first && !co_await pacer.wait()) {
                co_return false;
            }
            first = false;
            std::size_t n = std::min(chunk, text.size());
            if (n < text.size()) {
                n = utf8::floor_boundary(text, n);
                n = n == 0 ? std::min(chunk, text.size()) : n;
            }
            if (n > 0) {
                sink(make(std::string(text.substr(0, n))));
            }
            text.remove_prefix(n);
        }
        co_return true;
    }

    // Fills `{{message_count}}` with the number of request messages (lets tests see history).
    static std::string expand(const std::string& text, const ProviderRequest& request) {
        static constexpr std::string_view KEY = "{{message_count}}";
        const auto at = text.find(KEY);
        if (at == std::string::npos) {
            return text;
        }
        std::string out = text;
        out.replace(at, KEY.size(), std::to_string(request.messages.size()));
        return out;
    }

    static void append_block(
        json::array& content,
        std::string_view type,
        std::string_view field,
        const std::string& text,
        const std::string& signature) {
        if (!content.empty()) {
            auto& last = content.back().as_object();
            if (last.at("type").as_string() == type) {
                auto& s = last.at(field).as_string();
                if (s.size() + text.size() <= MAX_ASSEMBLED_BLOCK_BYTES) {
                    s.append(text);
                } else if (!s.ends_with(BLOCK_CUT_MARKER)) {
                    s.append(BLOCK_CUT_MARKER); // cut, and said so, once
                }
                return;
            }
        }
        json::object block{{"type", type}, {field, text}};
        if (type == "thinking") {
            block["signature"] = signature;
        }
        content.push_back(std::move(block));
    }

    static const ToolChoice&
    pick(const std::vector<ToolChoice>& choices, const std::vector<ToolSpec>& offered) {
        for (const auto& c : choices) {
            if (std::any_of(offered.begin(), offered.end(), [&](const ToolSpec& t) {
                    return t.name == c.name;
                })) {
                return c;
            }
        }
        return choices.back();
    }

    boost::system::result<ProviderResponse> cancelled() {
        error_ = "cancelled";
        return boost::system::error_code(errc::cancelled);
    }

    Script script_;
    double pace_;
    std::string error_;
    std::uint64_t message_seq_{};
};

} // namespace

std::string_view default_script() noexcept {
    return DEFAULT_SCRIPT;
}

std::unique_ptr<Provider> make_scripted_provider(std::string_view script, double pace) {
    return std::make_unique<ScriptedProvider>(parse_script(script), pace);
}

std::unique_ptr<Provider> make_scripted_provider(const ProviderConfig& config) {
    if (config.script_path.empty()) {
        return make_scripted_provider(default_script(), config.script_pace);
    }
    std::ifstream in(config.script_path, std::ios::binary);
    if (!in) {
        throw std::invalid_argument("scripted provider: cannot read " + config.script_path);
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return make_scripted_provider(ss.str(), config.script_pace);
}

} // namespace sluice::runtime
