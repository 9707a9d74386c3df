// `sluice run`: one turn (builtin runtime or a hosted agent process) written to stdout as
// stream-json.
#include "commands.hpp"
#include "runtime_flags.hpp"

#include <sluice/core/relay_reader.hpp>
#include <sluice/detail/net.hpp>
#include <sluice/runtime/agents/agent.hpp>
#include <sluice/runtime/agents/codex_agent.hpp>
#include <sluice/runtime/frame_builder.hpp>
#include <sluice/runtime/runtime.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace sluice::app {

namespace json = boost::json;

namespace {

struct RunOptions {
    RuntimeFlags runtime;
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

// The builtin runtime on an io_context run by this thread; stdout (written synchronously: it is
// this command's only output and its pace) is the relay's caller.
int run_builtin(const RunOptions& o) {
    const auto config = runtime_config(o.runtime);
    net::io_context io;
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
        net::co_spawn(
            io,
            [&]() -> net::awaitable<void> {
                RelayReader reader(rx);
                while (!out.broken()) {
                    auto ev = co_await reader.next();
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
                // stdout broke: let go of the receiver now, which cancels the turn (closing the
                // provider connection, killing tools), so an endless stream cannot hold io.run().
                rx = RelayReceiver{};
            },
            net::detached); // writes and relay receives do not throw
        io.run();
        // Leaving this scope with the turn still running (stdout broke) destroys the receiver:
        // that cancels the turn, which closes the provider connection and kills tools.
    }
    io.restart();
    io.run(); // what the cancelled turn still had to do (closing its connection, killing tools)
    rt.wait_idle(std::chrono::seconds(10));
    if (const auto& err = frames.error()) {
        error = err->message; // providers name themselves in their messages
    }
    return report_end(out, error);
}

class StdoutSink final : public runtime::TurnSink {
public:
    /// @param verbatim the agent relays its stream_event rows (on_stream_row): print those
    ///   as they are instead of previews re-encoded (the claude drop-in).
    StdoutSink(CancellationToken cancel, bool verbatim)
        : cancel_(std::move(cancel))
        , frames_(runtime::make_uuid(), 0)
        , verbatim_(verbatim) {}

    void on_row(json::object row) override { write(row); }

    void on_preview(StreamEvent preview) override {
        if (verbatim_) {
            return; // its stream_event row was written as it came
        }
        if (auto row = frames_.preview_row(preview)) {
            write(*row);
        }
    }

    void on_stream_row(json::object row) override {
        if (verbatim_) {
            write(row);
        }
    }

    void on_end(runtime::TurnEnd end) override {
        end_ = std::move(end);
        if (on_end_) {
            on_end_();
        }
    }

    /// Called on the io_context after the turn ended.
    void when_ended(std::function<void()> fn) { on_end_ = std::move(fn); }

    [[nodiscard]] const std::optional<runtime::TurnEnd>& end() const { return end_; }

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
    std::optional<runtime::TurnEnd> end_;
    std::function<void()> on_end_;
    bool verbatim_;
};

// A hosted agent process: its rows pass through; its partials are re-encoded as stream_event
// rows. The io_context runs on this thread until the turn ended and the process is gone.
// With --agent claude (the drop-in): Claude Code itself, every row of its stdout written as it
// came (all stream events, its own block indexes); permission prompts are refused (no one
// here to ask) unless --claude-arg names a permission mode or tools.
// With --agent codex: `codex app-server` (--codex-bin) in --workdir, its turn as frames;
// approval policy "never" (no one here to ask: Codex runs what its sandbox allows, unasked).
int run_process(const RunOptions& o) {
    net::io_context io;
    CancellationToken cancel;
    const bool claude = o.runtime.agent == "claude";
    auto sink = std::make_shared<StdoutSink>(cancel, claude);
    std::unique_ptr<runtime::Agent> agent;
    if (o.runtime.agent == "codex") {
        if (auto why = codex_unrunnable(o.runtime); !why.empty()) {
            return report_end(sink->out(), why);
        }
        runtime::CodexAgentConfig cc;
        cc.bin = o.runtime.codex_bin;
        cc.working_dir = o.runtime.workdir;
        cc.model = o.runtime.model;
        cc.approval_policy = "never";
        agent = runtime::make_codex_agent(io.get_executor(), std::move(cc));
    } else {
        auto config = claude ? claude_agent_config(o.runtime, o.runtime.model, {}, {})
                             : process_agent_config(o.runtime);
        if (claude) {
            config.host_permissions = false;
            config.relay_stream_rows = true;
            config.live_settings = false;
            config.env.clear(); // the drop-in prints what claude prints: no session-state rows
        }
        agent = runtime::make_process_agent(io.get_executor(), std::move(config));
    }
    sink->when_ended([&agent] { agent.reset(); }); // ends the process (asynchronously)
    agent->start_turn(o.prompt, cancel, sink);
    io.run();
    const auto end =
        sink->end().value_or(runtime::TurnEnd{runtime::TurnEnd::State::failed, "no end"});
    return report_end(
        sink->out(), end.state == runtime::TurnEnd::State::ended ? std::string{} : end.error);
}

} // namespace

void add_run_command(CLI::App& app) {
    auto* sub = app.add_subcommand("run", "Run one turn and write it to stdout as stream-json");
    auto o = std::make_shared<RunOptions>();
    add_runtime_flags(*sub, o->runtime);
    sub->add_option("prompt", o->prompt, "the prompt")->required();
    sub->add_option(
           "--agent",
           o->runtime.agent,
           "claude: host Claude Code (--claude-bin) itself; codex: host Codex (--codex-bin)")
        ->check(CLI::IsMember({"claude", "codex"}));
    on_selected(sub, [o] {
        // A reader that goes away must surface as EPIPE on write, not kill the process.
        std::signal(SIGPIPE, SIG_IGN);
        return o->runtime.agent_cmd.empty() && o->runtime.agent.empty() ? run_builtin(*o)
                                                                        : run_process(*o);
    });
}

} // namespace sluice::app
