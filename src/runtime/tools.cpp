// The built-in tools: bash (process group, streamed, killed on cancel/timeout), read_file, echo.
#include "child_process.hpp"

#include <sluice/runtime/tools.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <stdexcept>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace sluice::runtime {

namespace json = boost::json;

namespace {

using clock = std::chrono::steady_clock;

// Output kept for the model and streamed to the caller, capped at max_output bytes.
class CappedOutput {
public:
    explicit CappedOutput(const ToolContext& ctx) : ctx_(ctx) {}

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
        std::string out = std::move(kept_);
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
    if (obj == nullptr) {
        return nullptr;
    }
    const auto* v = obj->if_contains(key);
    return v == nullptr ? nullptr : v->if_string();
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

json::value schema(std::initializer_list<std::pair<std::string_view, std::string_view>> props,
                   std::initializer_list<std::string_view> required,
                   std::initializer_list<std::string_view> integer_props = {}) {
    json::object properties;
    for (const auto& [name, desc] : props) {
        const bool is_int = std::find(integer_props.begin(), integer_props.end(), name)
                            != integer_props.end();
        properties[name] = json::object{{"type", is_int ? "integer" : "string"}, {"description", desc}};
    }
    json::array req;
    for (auto r : required) {
        req.emplace_back(r);
    }
    return json::object{{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(req)}};
}

class BashTool final : public Tool {
public:
    explicit BashTool(ToolOptions options) : options_(std::move(options)) {}

    ToolSpec spec() const override {
        return ToolSpec{
            "bash",
            "Runs a shell command (/bin/sh -c) in the working directory and returns its combined "
            "stdout and stderr. Non-zero exit status is reported as an error.",
            schema({{"command", "the shell command to run"}}, {"command"})};
    }

    // TEMP(helper B replaces): the old blocking body, run inside the coroutine.
    boost::asio::awaitable<ToolOutcome> run(json::value input, ToolContext ctx) override {
        co_return run_blocking(input, ctx);
    }

    // TEMP(helper B replaces)
    ToolOutcome run_blocking(const json::value& input, const ToolContext& ctx) {
        const auto* command = string_field(input, "command");
        if (command == nullptr) {
            return {"bash: the input needs a \"command\" string", true};
        }
        std::string error;
        auto child = detail::ChildProcess::spawn(
            {.argv = {"/bin/sh", "-c", std::string(*command)}, .cwd = options_.working_dir}, error);
        if (!child) {
            return {"bash: " + error, true};
        }
        detail::WakeFd wake;
        auto reg = ctx.cancel.on_cancel([&wake] { wake.notify(); });
        CappedOutput out(ctx);
        const auto deadline = clock::now() + ctx.timeout;
        std::string note;
        bool failed = false;
        bool pipe_open = true;
        std::optional<int> status;
        char buf[16384];
        while (true) {
            if (ctx.cancel.is_cancelled()) {
                note = "cancelled; process group killed";
                failed = true;
                break;
            }
            const auto now = clock::now();
            if (now >= deadline) {
                note = "timed out after " + std::to_string(ctx.timeout.count())
                       + " ms; process group killed";
                failed = true;
                break;
            }
            if (!pipe_open || status) {
                // The shell exited (or closed its output): take what is buffered, then stop —
                // a background job may hold the pipe open indefinitely.
                if (!status) {
                    status = child->try_wait();
                    if (!status) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(5));
                        continue;
                    }
                }
                while (pipe_open) {
                    const auto n = ::read(child->stdout_fd(), buf, sizeof buf);
                    if (n > 0) {
                        out.append(std::string_view(buf, static_cast<std::size_t>(n)));
                    } else {
                        pipe_open = false;
                    }
                }
                break;
            }
            // Tick at most every 50 ms to notice the shell exiting while a straggler keeps
            // the pipe open.
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
            const int wait_ms = static_cast<int>(std::min<std::int64_t>(left.count() + 1, 50));
            pollfd fds[2] = {{child->stdout_fd(), POLLIN, 0}, {wake.fd(), POLLIN, 0}};
            const int r = ::poll(fds, 2, wait_ms);
            if (r < 0 && errno != EINTR) {
                note = std::string("poll failed: ") + std::strerror(errno);
                failed = true;
                break;
            }
            if (r > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
                const auto n = ::read(child->stdout_fd(), buf, sizeof buf);
                if (n > 0) {
                    out.append(std::string_view(buf, static_cast<std::size_t>(n)));
                } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                    pipe_open = false;
                }
            }
            if (!status) {
                status = child->try_wait();
            }
        }
        if (failed) {
            child->kill_group(SIGKILL);
            child->wait();
            return {out.finish(note), true};
        }
        const int st = status.value_or(child->wait());
        const bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        return {out.finish(ok ? "" : detail::ChildProcess::describe_status(st)), !ok};
    }

private:
    ToolOptions options_;
};

class ReadFileTool final : public Tool {
public:
    explicit ReadFileTool(ToolOptions options) : options_(std::move(options)) {}

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

    // TEMP(helper B replaces): the old blocking body, run inside the coroutine.
    boost::asio::awaitable<ToolOutcome> run(json::value input, ToolContext ctx) override {
        co_return run_blocking(input, ctx);
    }

    // TEMP(helper B replaces)
    ToolOutcome run_blocking(const json::value& input, const ToolContext& ctx) {
        const auto* path_in = string_field(input, "path");
        if (path_in == nullptr || path_in->empty()) {
            return {"read_file: the input needs a \"path\" string", true};
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
            return {"read_file: cannot open " + std::string(*path_in) + ": " + std::strerror(errno), true};
        }
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            return {"read_file: " + std::string(*path_in) + " is not a regular file", true};
        }
        const auto size = static_cast<std::uint64_t>(st.st_size);
        std::string data;
        const std::uint64_t want = offset >= size ? 0 : std::min(limit, size - offset);
        data.resize(static_cast<std::size_t>(want));
        std::size_t got = 0;
        while (got < data.size() && !ctx.cancel.is_cancelled()) {
            const auto n = ::pread(fd, data.data() + got, data.size() - got,
                                   static_cast<off_t>(offset + got));
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                break;
            }
            got += static_cast<std::size_t>(n);
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
        return {std::move(data), false};
    }

private:
    ToolOptions options_;
};

class EchoTool final : public Tool {
public:
    ToolSpec spec() const override {
        return ToolSpec{"echo", "Returns the given text unchanged.", schema({{"text", "the text to return"}}, {"text"})};
    }

    // TEMP(helper B replaces): the old blocking body, run inside the coroutine.
    boost::asio::awaitable<ToolOutcome> run(json::value input, ToolContext ctx) override {
        co_return run_blocking(input, ctx);
    }

    // TEMP(helper B replaces)
    ToolOutcome run_blocking(const json::value& input, const ToolContext& ctx) {
        const auto* text = string_field(input, "text");
        if (text == nullptr) {
            return {"echo: the input needs a \"text\" string", true};
        }
        CappedOutput out(ctx);
        out.append(*text);
        return {out.finish(""), false};
    }
};

} // namespace

std::shared_ptr<Tool> make_bash_tool(ToolOptions options) {
    return std::make_shared<BashTool>(std::move(options));
}

std::shared_ptr<Tool> make_read_file_tool(ToolOptions options) {
    return std::make_shared<ReadFileTool>(std::move(options));
}

std::shared_ptr<Tool> make_echo_tool() { return std::make_shared<EchoTool>(); }

std::vector<std::shared_ptr<Tool>> make_tools(
    const std::vector<std::string>& names, const ToolOptions& options) {
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
