// `sluice run`: one turn (builtin runtime or a hosted agent process) written to stdout as stream-json.
#include "commands.hpp"

#include <sluice/runtime/agent.hpp>
#include <sluice/runtime/frame_builder.hpp>
#include <sluice/runtime/runtime.hpp>
#include <sluice/runtime/tools.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>

namespace sluice::app {

namespace json = boost::json;

namespace {

struct RunOptions {
    std::string provider{"scripted"};
    std::string base_url;
    std::string model;
    std::string tools;
    std::string agent_cmd;
    std::string script;
    double pace{1.0};
    std::string system;
    std::string cwd{"."};
    std::uint32_t max_rounds{16};
    std::size_t max_tool_output{64 * 1024};
    std::int64_t tool_timeout_ms{120'000};
    std::uint32_t thinking_budget{0};
    std::string prompt;
};

// stdout as the turn's caller: one JSON row per line, written at once. A failed write (EPIPE:
// the reader went away) marks it broken; the caller then cancels the turn.
class RowWriter {
public:
    bool write(const json::object& row) {
        if (broken_) {
            return false;
        }
        std::string line = json::serialize(row);
        line += '\n';
        std::string_view rest(line);
        while (!rest.empty()) {
            const auto n = ::write(STDOUT_FILENO, rest.data(), rest.size());
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                broken_ = true;
                return false;
            }
            rest.remove_prefix(static_cast<std::size_t>(n));
        }
        return true;
    }

    [[nodiscard]] bool broken() const noexcept { return broken_; }

private:
    bool broken_{false};
};

runtime::RuntimeConfig runtime_config(const RunOptions& o) {
    runtime::RuntimeConfig c;
    c.provider.kind = o.provider;
    c.provider.base_url = o.base_url;
    c.provider.model = o.model;
    c.provider.script_path = o.script;
    c.provider.script_pace = o.pace;
    c.model = o.model;
    c.system_prompt = o.system;
    c.tools = runtime::split_tool_list(o.tools);
    c.working_dir = o.cwd;
    c.max_rounds = o.max_rounds;
    c.max_tool_output = o.max_tool_output;
    c.tool_timeout = std::chrono::milliseconds(o.tool_timeout_ms);
    if (o.thinking_budget > 0) {
        c.thinking_budget = o.thinking_budget;
    }
    return c;
}

int report_end(const RowWriter& out, const std::string& error) {
    if (out.broken()) {
        std::fprintf(stderr, "sluice: stdout was closed; the turn was cancelled\n");
        return 1;
    }
    if (!error.empty()) {
        std::fprintf(stderr, "sluice: %s\n", error.c_str());
        return 1;
    }
    return 0;
}

// The builtin runtime: this thread is the relay's caller, stdout its pace.
int run_builtin(const RunOptions& o) {
    const auto config = runtime_config(o);
    // The turn runs on an io_context served by one thread; this thread reads the relay.
    boost::asio::io_context io;
    auto work = boost::asio::make_work_guard(io);
    std::thread io_thread([&io] { io.run(); });
    struct Join {
        decltype(work)& guard;
        std::thread& runner;
        ~Join() {
            guard.reset();
            runner.join();
        }
    } join{work, io_thread};
    runtime::Runtime rt(io.get_executor(), config); // throws on a bad provider or tool setting
    const std::string session_id = runtime::make_uuid();
    RowWriter out;
    json::array tool_names;
    for (const auto& t : rt.config().tools) {
        tool_names.emplace_back(t);
    }
    json::object init{
        {"type", "system"},
        {"subtype", "init"},
        {"session_id", session_id},
        {"provider", config.provider.kind},
        {"tools", std::move(tool_names)},
        {"cwd", config.working_dir},
        {"uuid", runtime::make_uuid()}};
    if (!config.model.empty()) {
        init["model"] = config.model; // else the provider's default, named in the result row
    }
    out.write(init);
    std::vector<json::value> messages{json::object{{"role", "user"}, {"content", o.prompt}}};
    runtime::FrameBuilder frames(session_id, messages.size(), config.model);
    std::string error;
    {
        auto rx = rt.run_stream_with_messages(std::move(messages), CancellationToken{});
        while (!out.broken()) {
            auto ev = rx.next();
            if (!ev) {
                break;
            }
            if (auto row = frames.preview_row(*ev)) {
                out.write(*row);
            }
            for (const auto& row : frames.on_event(*ev)) {
                out.write(row);
            }
        }
        // Leaving this scope with the turn still running (stdout broke) destroys the receiver:
        // that cancels the turn, which closes the provider connection and kills tools.
    }
    if (const auto& err = frames.error()) {
        error = err->message; // providers name themselves in their messages
    }
    return report_end(out, error);
}

class StdoutSink final : public runtime::TurnSink {
public:
    explicit StdoutSink(CancellationToken cancel) : cancel_(std::move(cancel)), frames_(runtime::make_uuid(), 0) {}

    void on_row(json::object row) override { write(row); }

    void on_preview(StreamEvent preview) override {
        if (auto row = frames_.preview_row(preview)) {
            write(*row);
        }
    }

    void on_end(runtime::TurnEnd end) override { done_.set_value(std::move(end)); }

    std::future<runtime::TurnEnd> ended() { return done_.get_future(); }

    const RowWriter& out() const { return out_; }

private:
    void write(const json::object& row) {
        if (!out_.write(row)) {
            cancel_.cancel();
        }
    }

    CancellationToken cancel_;
    runtime::FrameBuilder frames_;
    RowWriter out_;
    std::promise<runtime::TurnEnd> done_;
};

// A hosted agent process: its rows pass through; its partials are re-encoded as stream_event rows.
int run_process(const RunOptions& o) {
    runtime::ProcessAgentConfig pc;
    pc.argv = runtime::ProcessAgentConfig::shell_argv(o.agent_cmd);
    pc.working_dir = o.cwd;
    CancellationToken cancel;
    auto sink = std::make_shared<StdoutSink>(cancel);
    auto ended = sink->ended();
    auto agent = runtime::make_process_agent(pc);
    agent->start_turn(o.prompt, cancel, sink);
    const auto end = ended.get();
    agent.reset();
    return report_end(sink->out(), end.state == runtime::TurnEnd::State::ended ? std::string{} : end.error);
}

} // namespace

void add_run_command(CLI::App& app) {
    auto* sub = app.add_subcommand("run", "Run one turn and write it to stdout as stream-json");
    auto o = std::make_shared<RunOptions>();
    sub->add_option("--provider", o->provider, "anthropic | openai | scripted")
        ->check(CLI::IsMember({"anthropic", "openai", "scripted"}))
        ->capture_default_str();
    sub->add_option("--base-url", o->base_url, "provider base URL (default: the provider's)");
    sub->add_option("--model", o->model, "model id (default: the provider's)");
    sub->add_option("--tools", o->tools, "enabled tools, comma-separated: bash,read_file,echo");
    sub->add_option("--agent-cmd", o->agent_cmd, "host this agent command (stream-json on stdio) instead");
    sub->add_option("--script", o->script, "scripted provider: a JSON script (default: built-in)");
    sub->add_option("--pace", o->pace, "scripted provider: delay factor, 0 = no delay")->capture_default_str();
    sub->add_option("--system", o->system, "system prompt");
    sub->add_option("--cwd", o->cwd, "working directory of tools and agent")->capture_default_str();
    sub->add_option("--max-rounds", o->max_rounds, "model responses per turn at most")->capture_default_str();
    sub->add_option("--max-tool-output", o->max_tool_output, "bytes of tool output kept")->capture_default_str();
    sub->add_option("--tool-timeout-ms", o->tool_timeout_ms, "one tool run at most")->capture_default_str();
    sub->add_option("--thinking-budget", o->thinking_budget, "extended thinking budget (0 = off)");
    sub->add_option("prompt", o->prompt, "the prompt")->required();
    on_selected(sub, [o] {
        // A reader that goes away must surface as EPIPE on write, not kill the process.
        std::signal(SIGPIPE, SIG_IGN);
        return o->agent_cmd.empty() ? run_builtin(*o) : run_process(*o);
    });
}

} // namespace sluice::app
