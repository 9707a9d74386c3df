// Test support: the sluice binary as a child process, and HTTP/SSE clients for it.
#include "support/hub_process.hpp"

#include <boost/json.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

extern char** environ;

namespace sluice::test {

SluiceProcess::SluiceProcess(
    std::vector<std::string> args, bool wait_for_listen, std::optional<unsigned> nofile)
    : SluiceProcess(std::move(args), wait_for_listen, HubAuth::no_token, {}, nofile) {
}

SluiceProcess::SluiceProcess(
    std::vector<std::string> args,
    bool wait_for_listen,
    HubAuth auth,
    const std::string& cwd,
    std::optional<unsigned> nofile) {
    if (auth == HubAuth::no_token && !args.empty() && args.front() == "serve"
        && std::find(args.begin(), args.end(), "--token") == args.end()
        && std::find(args.begin(), args.end(), "--no-token") == args.end()) {
        args.emplace_back("--no-token");
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        throw std::runtime_error("pipe failed");
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    if (!cwd.empty()) {
        posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
    }
    std::vector<std::string> argv_s;
    if (nofile) {
        argv_s.emplace_back("/usr/bin/prlimit");
        argv_s.push_back("--nofile=" + std::to_string(*nofile) + ":" + std::to_string(*nofile));
    }
    argv_s.emplace_back(SLUICE_BINARY);
    for (auto& a : args) {
        argv_s.push_back(std::move(a));
    }
    std::vector<char*> argv;
    for (auto& a : argv_s) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawn(
        &pid, nofile ? "/usr/bin/prlimit" : SLUICE_BINARY, &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        throw std::runtime_error("cannot start sluice");
    }
    pid_ = pid;
    out_fd_ = fds[0];
    reader_ = std::thread([this] { reader(); });
    if (wait_for_listen) {
        std::unique_lock lock(mu_);
        const bool ok =
            cv_.wait_for(lock, std::chrono::seconds(20), [&] { return port_ != 0 || exited_; });
        if (!ok || port_ == 0) {
            lock.unlock();
            terminate();
            throw std::runtime_error("sluice serve did not report its port; output: " + output());
        }
    }
}

void SluiceProcess::reader() {
    char buf[4096];
    for (;;) {
        const auto n = ::read(out_fd_, buf, sizeof buf);
        if (n <= 0) {
            break;
        }
        std::lock_guard lock(mu_);
        out_.append(buf, static_cast<std::size_t>(n));
        if (port_ == 0) {
            const auto at = out_.find("listening on http");
            const auto scheme_end = out_.find("://", at == std::string::npos ? 0 : at);
            if (at != std::string::npos && scheme_end != std::string::npos) {
                tls_ = out_.compare(at, 18, "listening on https") == 0;
                const auto colon = out_.find(':', scheme_end + 3);
                const auto nl = out_.find('\n', at);
                if (colon != std::string::npos && nl != std::string::npos) {
                    port_ =
                        static_cast<unsigned>(std::stoul(out_.substr(colon + 1, nl - colon - 1)));
                }
            }
        }
        cv_.notify_all();
    }
    std::lock_guard lock(mu_);
    exited_ = true;
    cv_.notify_all();
}

std::string SluiceProcess::base() const {
    return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

std::string SluiceProcess::token() const {
    std::lock_guard lock(mu_);
    const auto at = out_.find("#token=");
    if (at == std::string::npos) {
        return {};
    }
    const auto nl = out_.find('\n', at);
    return out_.substr(at + 7, nl == std::string::npos ? std::string::npos : nl - at - 7);
}

int SluiceProcess::wait(std::chrono::milliseconds timeout) {
    if (pid_ <= 0) {
        return status_;
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        int st = 0;
        const pid_t r = ::waitpid(pid_, &st, WNOHANG);
        if (r == pid_) {
            pid_ = -1;
            status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            if (reader_.joinable()) {
                reader_.join(); // everything the child wrote is in output() once wait returns
            }
            return status_;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return -1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

int SluiceProcess::terminate(std::chrono::milliseconds timeout) {
    if (pid_ > 0) {
        ::kill(pid_, SIGTERM);
        if (wait(timeout) == -1 && pid_ > 0) {
            ::kill(pid_, SIGKILL);
            wait(std::chrono::seconds(10));
        }
    }
    if (reader_.joinable()) {
        reader_.join();
    }
    if (out_fd_ >= 0) {
        ::close(out_fd_);
        out_fd_ = -1;
    }
    return status_;
}

SluiceProcess::~SluiceProcess() {
    terminate(std::chrono::seconds(5));
}

std::string SluiceProcess::output() const {
    std::lock_guard lock(mu_);
    return out_;
}

std::string Reply::header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
        if (k.size() == name.size()
            && std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
                   return std::tolower(static_cast<unsigned char>(a))
                          == std::tolower(static_cast<unsigned char>(b));
               })) {
            return v;
        }
    }
    return {};
}

std::vector<std::string> hub_args(const TempDir& dir, std::vector<std::string> extra) {
    std::vector<std::string> a{
        "serve", "--listen", "127.0.0.1:0", "--data", dir.path(), "--pace", "0"};
    a.insert(a.end(), std::make_move_iterator(extra.begin()), std::make_move_iterator(extra.end()));
    return a;
}

std::string fake_claude(const TempDir& dir, const std::string& flags) {
    const auto agent =
        (std::filesystem::path(SLUICE_SOURCE_DIR) / "tests/support/fake_agent.py").string();
    const auto path = dir.file("claude");
    std::ofstream(path) << "#!/bin/sh\nexec python3 '" << agent << "' " << flags << " \"$@\"\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
}

int connect_raw(unsigned port, int rcvbuf) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    if (rcvbuf > 0) {
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

transport::HttpHeaders bearer(const std::string& token) {
    return {{"Authorization", "Bearer " + token}};
}

std::string new_seat(const SluiceProcess& hub, const NewSeat& seat) {
    boost::json::object body{{"name", seat.name}};
    if (!seat.agent.empty()) {
        body["agent"] = seat.agent;
    }
    auto r = http(
        "POST",
        hub.base() + "/v1/seats",
        boost::json::serialize(body),
        seat.token.empty() ? transport::HttpHeaders{} : bearer(seat.token));
    EXPECT_EQ(r.status, 201U) << r.body;
    return r.status == 201U ? std::string(r.json.at("seat").as_string()) : std::string();
}

std::uint64_t send(const SluiceProcess& hub, const std::string& seat, const std::string& text) {
    auto r = http(
        "POST",
        hub.base() + "/v1/seats/" + seat + "/messages",
        boost::json::serialize(boost::json::object{{"text", text}}));
    EXPECT_EQ(r.status, 202U) << r.body;
    return r.status == 202U ? r.json.at("turn").to_number<std::uint64_t>() : 0;
}

Reply http(
    const std::string& method,
    const std::string& url,
    const std::string& body,
    transport::HttpHeaders headers) {
    transport::HttpOptions opt;
    opt.max_attempts = 1;
    opt.connect_timeout = std::chrono::seconds(10);
    // Longer than any bound the hub itself answers within (e.g. 10 s for an agent's settings
    // answer): a passing test never waits for it.
    opt.first_byte_timeout = std::chrono::seconds(30);
    opt.idle_timeout = std::chrono::seconds(30);
    opt.proxy = "";
    transport::HttpClient client(opt);
    transport::HttpRequest req;
    req.method = method;
    req.url = url;
    req.body = body;
    req.headers = std::move(headers);
    const bool has_type = std::any_of(req.headers.begin(), req.headers.end(), [](const auto& h) {
        return h.first == "Content-Type";
    });
    if (method != "GET" && method != "HEAD" && !has_type) {
        req.headers.emplace_back("Content-Type", "application/json"); // the hub takes JSON only
    }
    Reply reply;
    std::string ok_body;
    auto r = client.request_blocking(req, CancellationToken{}, [&](std::string_view chunk) {
        ok_body.append(chunk);
        return true;
    });
    if (!r) {
        throw std::runtime_error(method + " " + url + ": " + client.error_message());
    }
    reply.status = r->status;
    reply.headers = r->headers;
    reply.body = r->status / 100 == 2 ? ok_body : r->body;
    boost::system::error_code ec;
    auto v = boost::json::parse(reply.body, ec);
    if (!ec) {
        reply.json = std::move(v);
    }
    return reply;
}

std::string raw_http(unsigned port, const std::string& request, std::chrono::milliseconds timeout) {
    const int fd = connect_raw(port);
    if (fd < 0) {
        throw std::runtime_error("connect failed");
    }
    (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string out;
    char buf[16384];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            break;
        }
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
            break;
        }
        const auto n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
            break;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

SseClient::SseClient(std::string url, std::optional<std::string> last_event_id) {
    thread_ = std::thread([this, url = std::move(url), last = std::move(last_event_id)] {
        transport::HttpOptions opt;
        opt.max_attempts = 1;
        opt.idle_timeout = std::chrono::milliseconds(0);
        opt.proxy = "";
        transport::HttpClient client(opt);
        transport::HttpRequest req;
        req.url = url;
        req.headers.emplace_back("Accept", "text/event-stream");
        if (last) {
            req.headers.emplace_back("Last-Event-ID", *last);
        }
        // Frames can be large (a flood's final message carries all of it): generous limits.
        sse::Parser parser(sse::Limits{.max_line = 64U << 20U, .max_event = 64U << 20U});
        std::vector<sse::Event> got;
        (void)client.request_blocking(req, cancel_, [&](std::string_view chunk) {
            got.clear();
            if (parser.feed(chunk, got)) {
                return false;
            }
            if (!got.empty()) {
                std::lock_guard lock(mu_);
                for (auto& e : got) {
                    events_.push_back(std::move(e));
                }
                cv_.notify_all();
            }
            return true;
        });
        std::lock_guard lock(mu_);
        done_ = true;
        cv_.notify_all();
    });
}

SseClient::~SseClient() {
    stop();
}

void SseClient::stop() {
    cancel_.cancel();
    if (thread_.joinable()) {
        thread_.join();
    }
}

bool SseClient::wait_for(
    const std::function<bool(const std::vector<sse::Event>&)>& pred,
    std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return pred(events_); });
}

std::vector<sse::Event> SseClient::events() const {
    std::lock_guard lock(mu_);
    return events_;
}

std::vector<std::pair<std::int64_t, boost::json::value>>
frames_of(const std::vector<sse::Event>& events) {
    std::vector<std::pair<std::int64_t, boost::json::value>> out;
    for (const auto& e : events) {
        if (e.type != "frame") {
            continue;
        }
        auto v = boost::json::parse(e.data);
        out.emplace_back(v.at("seq").as_int64(), v.at("row"));
    }
    return out;
}

bool has_turn_state(
    const std::vector<sse::Event>& events, std::uint64_t turn, std::string_view state) {
    for (const auto& e : events) {
        if (e.type != "turn") {
            continue;
        }
        auto v = boost::json::parse(e.data);
        if (v.at("turn").to_number<std::uint64_t>() == turn && v.at("state").as_string() == state) {
            return true;
        }
    }
    return false;
}

std::vector<boost::json::value> turn_frames(
    const SluiceProcess& hub,
    const std::string& seat,
    const std::string& text,
    const std::function<bool(const std::vector<sse::Event>&)>& also) {
    SseClient sub(hub.base() + "/v1/seats/" + seat + "/events");
    if (!sub.wait_for([](const auto& ev) { return !ev.empty(); })) {
        return {};
    }
    const auto turn = send(hub, seat, text);
    if (turn == 0 || !sub.wait_for([turn](const auto& ev) {
            return has_turn_state(ev, turn, "ended") || has_turn_state(ev, turn, "failed");
        })) {
        return {};
    }
    if (also) {
        sub.wait_for(also, std::chrono::seconds(5));
    }
    std::vector<boost::json::value> rows;
    for (auto& [seq, row] : frames_of(sub.events())) {
        rows.push_back(std::move(row));
    }
    return rows;
}

} // namespace sluice::test
