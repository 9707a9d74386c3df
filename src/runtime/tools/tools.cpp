// The built-in tools as coroutines: bash (process group, streamed, killed on cancel/timeout),
// read_file (bounded reads), echo.
#include "process/child.hpp"

#include <sluice/detail/net.hpp>
#include <sluice/runtime/agents/stream_json.hpp>
#include <sluice/runtime/tools/tools.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace sluice::runtime {

namespace json = boost::json;

namespace {

constexpr auto TUPLE = net::as_tuple(net::use_awaitable);

// Basis: one pipe's default capacity on Linux (64 KiB) in four reads; also read_file's chunk,
// so one synchronous pread of a local file never holds the I/O thread for more than this.
constexpr std::size_t READ_CHUNK_BYTES = 16 * 1024;

// Output kept for the model and streamed to the caller, capped at max_output bytes.
class CappedOutput {
public:
    explicit CappedOutput(const ToolContext& ctx)
        : ctx_(ctx) {}

    void append(std::string_view chunk) {
        const std::size_t room = ctx_.max_output - std::min(ctx_.max_output, kept_.size());
        const std::size_t take = std::min(room, chunk.size());
        if (take > 0) {
            kept_.append(chunk.substr(0, take));
            if (ctx_.on_output) {
                ctx_.on_output(chunk.substr(0, take));
            }
        }
        omitted_ += chunk.size() - take;
    }

    std::string finish(std::string_view note) {
        std::string out;
        out.swap(kept_); // kept_ is left empty, not moved-from
        if (omitted_ > 0) {
            out += "\n[output truncated: " + std::to_string(omitted_) + " bytes omitted]";
        }
        if (!note.empty()) {
            if (!out.empty() && out.back() != '\n') {
                out += '\n';
            }
            out += '[';
            out.append(note);
            out += ']';
        }
        return out;
    }

private:
    const ToolContext& ctx_;
    std::string kept_;
    std::uint64_t omitted_{};
};

const json::string* string_field(const json::value& input, std::string_view key) {
    const auto* obj = input.if_object();
    return obj == nullptr ? nullptr : find_str(*obj, key);
}

std::optional<std::uint64_t> uint_field(const json::value& input, std::string_view key) {
    const auto* obj = input.if_object();
    const auto* v = obj == nullptr ? nullptr : obj->if_contains(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (const auto* i = v->if_int64(); i != nullptr && *i >= 0) {
        return static_cast<std::uint64_t>(*i);
    }
    if (const auto* u = v->if_uint64(); u != nullptr) {
        return *u;
    }
    return std::nullopt;
}

json::value schema(
    std::initializer_list<std::pair<std::string_view, std::string_view>> props,
    std::initializer_list<std::string_view> required,
    std::initializer_list<std::string_view> integer_props = {}) {
    json::object properties;
    for (const auto& [name, desc] : props) {
        const bool is_int =
            std::find(integer_props.begin(), integer_props.end(), name) != integer_props.end();
        properties[name] =
            json::object{{"type", is_int ? "integer" : "string"}, {"description", desc}};
    }
    json::array req;
    for (auto r : required) {
        req.emplace_back(r);
    }
    return json::object{
        {"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(req)}};
}

// A cancellation flag the coroutine can await: a timer at time_point::max() that the token's
// callback (any thread) cancels through a post to the executor.
class CancelSignal {
public:
    CancelSignal(const net::any_io_executor& ex, const CancellationToken& token)
        : timer_(std::make_shared<net::steady_timer>(ex, net::steady_timer::time_point::max())) {
        reg_ =
            token.on_cancel([t = timer_] { net::post(t->get_executor(), [t] { t->cancel(); }); });
    }

    /// Completes when the token is cancelled.
    net::awaitable<void> wait() { (void)co_await timer_->async_wait(TUPLE); }

private:
    std::shared_ptr<net::steady_timer> timer_;
    CancelRegistration reg_;
};

// Reads the child's output into `out` until EOF or an error.
net::awaitable<void> read_output(net::posix::stream_descriptor& pipe, CappedOutput& out) {
    std::array<char, READ_CHUNK_BYTES> buf{};
    while (true) {
        auto [ec, n] = co_await pipe.async_read_some(net::buffer(buf), TUPLE);
        if (n > 0) {
            out.append(std::string_view(buf.data(), n));
        }
        if (ec) {
            co_return;
        }
    }
}

// What is already in the pipe, without waiting (the shell exited; a background job may keep
// the pipe open indefinitely).
void drain_output(net::posix::stream_descriptor& pipe, CappedOutput& out) {
    std::array<char, READ_CHUNK_BYTES> buf{};
    while (true) {
        const auto n = ::read(pipe.native_handle(), buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        out.append(std::string_view(buf.data(), static_cast<std::size_t>(n)));
    }
}

// A tool that works in the configured working directory.
class WorkdirTool : public Tool {
public:
    explicit WorkdirTool(ToolOptions options)
        : options_(std::move(options)) {}

protected:
    ToolOptions options_; // NOLINT(misc-non-private-member-variables-in-classes): the tools' own
};

class BashTool final : public WorkdirTool {
public:
    using WorkdirTool::WorkdirTool;

    ToolSpec spec() const override {
        return ToolSpec{
            "bash",
            "Runs a shell command (/bin/sh -c) in the working directory and returns its combined "
            "stdout and stderr. Non-zero exit status is reported as an error.",
            schema({{"command", "the shell command to run"}}, {"command"})};
    }

    net::awaitable<ToolOutcome> run(json::value input, ToolContext ctx) override {
        using namespace net::experimental::awaitable_operators;
        const auto* command = string_field(input, "command");
        if (command == nullptr) {
            co_return ToolOutcome{"bash: the input needs a \"command\" string", true};
        }
        auto ex = co_await net::this_coro::executor;
        std::string error;
        auto child = detail::Child::spawn(
            ex,
            {.argv = {"/bin/sh", "-c", std::string(*command)},
             .cwd = options_.working_dir,
             .stdin_pipe = false,
             .separate_stderr = false,
             .env = {}},
            error);
        if (!child) {
            co_return ToolOutcome{"bash: " + error, true};
        }
        CappedOutput out(ctx);
        CancelSignal cancelled(ex, ctx.cancel);
        net::steady_timer timeout(ex, ctx.timeout);
        std::string note;
        std::optional<int> status;
        bool output_open = true;
        while (!status && note.empty()) {
            if (ctx.cancel.is_cancelled()) {
                note = "cancelled; process group killed";
                break;
            }
            // The shell's exit, its output's end, the timeout or a cancel: whichever comes first.
            if (output_open) {
                auto r = co_await (
                    child->wait_exit() || read_output(child->out(), out)
                    || timeout.async_wait(TUPLE) || cancelled.wait());
                switch (r.index()) {
                case 0:
                    status = std::get<0>(r);
                    break;
                case 1:
                    output_open = false;
                    break;
                case 2:
                    note = "timed out after " + std::to_string(ctx.timeout.count()) + " ms";
                    break;
                default:
                    note = "cancelled";
                    break;
                }
            } else {
                auto r =
                    co_await (child->wait_exit() || timeout.async_wait(TUPLE) || cancelled.wait());
                switch (r.index()) {
                case 0:
                    status = std::get<0>(r);
                    break;
                case 1:
                    note = "timed out after " + std::to_string(ctx.timeout.count()) + " ms";
                    break;
                default:
                    note = "cancelled";
                    break;
                }
            }
            if (!note.empty() && note.find("killed") == std::string::npos) {
                note += "; process group killed";
            }
        }
        if (!note.empty()) {
            child->signal_group(SIGKILL);
            (void)co_await child->wait_exit(); // SIGKILL cannot be ignored: this is prompt
            co_return ToolOutcome{out.finish(note), true};
        }
        if (output_open) {
            drain_output(child->out(), out);
        }
        const int st = *status;
        const bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        co_return ToolOutcome{out.finish(ok ? "" : detail::Child::describe_status(st)), !ok};
    }
};

class ReadFileTool final : public WorkdirTool {
public:
    using WorkdirTool::WorkdirTool;

    ToolSpec spec() const override {
        return ToolSpec{
            "read_file",
            "Reads a text file (path relative to the working directory). Optional byte offset "
            "and limit; long files are cut, and the cut is reported.",
            schema(
                {{"path", "the file to read"},
                 {"offset", "byte offset to start at (default 0)"},
                 {"limit", "most bytes to read"}},
                {"path"},
                {"offset", "limit"})};
    }

    // A regular local file is read with pread in chunks of READ_CHUNK_BYTES, yielding to the
    // executor between chunks, at most `max_output` bytes in all: a bounded read, never a wait
    // on a pipe or device (those are refused before any read).
    net::awaitable<ToolOutcome> run(json::value input, ToolContext ctx) override {
        const auto* path_in = string_field(input, "path");
        if (path_in == nullptr || path_in->empty()) {
            co_return ToolOutcome{"read_file: the input needs a \"path\" string", true};
        }
        std::string path(*path_in);
        if (path.front() != '/') {
            path = options_.working_dir + "/" + path;
        }
        const std::uint64_t offset = uint_field(input, "offset").value_or(0);
        const std::uint64_t limit = std::min<std::uint64_t>(
            uint_field(input, "limit").value_or(ctx.max_output), ctx.max_output);
        // O_NONBLOCK: opening a FIFO must not hang the turn.
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
            co_return ToolOutcome{
                "read_file: cannot open " + std::string(*path_in) + ": " + std::strerror(errno),
                true};
        }

        struct stat st {};

        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            co_return ToolOutcome{
                "read_file: " + std::string(*path_in) + " is not a regular file", true};
        }
        const auto size = static_cast<std::uint64_t>(st.st_size);
        std::string data;
        const std::uint64_t want = offset >= size ? 0 : std::min(limit, size - offset);
        data.resize(static_cast<std::size_t>(want));
        std::size_t got = 0;
        while (got < data.size() && !ctx.cancel.is_cancelled()) {
            const auto chunk = std::min(data.size() - got, READ_CHUNK_BYTES);
            const auto n = ::pread(fd, data.data() + got, chunk, static_cast<off_t>(offset + got));
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                break;
            }
            got += static_cast<std::size_t>(n);
            if (got < data.size()) {
                co_await net::post(co_await net::this_coro::executor, net::use_awaitable);
            }
        }
        ::close(fd);
        data.resize(got);
        if (ctx.on_output && !data.empty()) {
            ctx.on_output(data);
        }
        const std::uint64_t end = offset + got;
        if (end < size) {
            data += "\n[" + std::to_string(size - end) + " more bytes; read on with offset "
                    + std::to_string(end) + "]";
        }
        // NOLINTNEXTLINE(clang-analyzer-cplusplus.Move): one move; the analyzer loses the frame
        co_return ToolOutcome{std::move(data), false};
    }
};

class EchoTool final : public Tool {
public:
    ToolSpec spec() const override {
        return ToolSpec{
            "echo",
            "Returns the given text unchanged.",
            schema({{"text", "the text to return"}}, {"text"})};
    }

    net::awaitable<ToolOutcome> run(json::value input, ToolContext ctx) override {
        const auto* text = string_field(input, "text");
        if (text == nullptr) {
            co_return ToolOutcome{"echo: the input needs a \"text\" string", true};
        }
        CappedOutput out(ctx);
        out.append(*text);
        co_return ToolOutcome{out.finish(""), false};
    }
};

} // namespace

std::shared_ptr<Tool> make_bash_tool(ToolOptions options) {
    return std::make_shared<BashTool>(std::move(options));
}

std::shared_ptr<Tool> make_read_file_tool(ToolOptions options) {
    return std::make_shared<ReadFileTool>(std::move(options));
}

std::shared_ptr<Tool> make_echo_tool() {
    return std::make_shared<EchoTool>();
}

std::vector<std::shared_ptr<Tool>>
make_tools(const std::vector<std::string>& names, const ToolOptions& options) {
    std::vector<std::shared_ptr<Tool>> tools;
    for (const auto& n : names) {
        if (n == "bash") {
            tools.push_back(make_bash_tool(options));
        } else if (n == "read_file") {
            tools.push_back(make_read_file_tool(options));
        } else if (n == "echo") {
            tools.push_back(make_echo_tool());
        } else {
            throw std::invalid_argument("unknown tool '" + n + "' (known: bash, read_file, echo)");
        }
    }
    return tools;
}

std::vector<std::string> split_tool_list(const std::string& list) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= list.size()) {
        auto end = list.find(',', start);
        if (end == std::string::npos) {
            end = list.size();
        }
        auto item = list.substr(start, end - start);
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (!item.empty()) {
            out.push_back(std::move(item));
        }
        start = end + 1;
    }
    return out;
}

} // namespace sluice::runtime
