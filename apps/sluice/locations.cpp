// Where a hub keeps its things, and how the CLI finds it (locations.hpp).
#include "locations.hpp"

#include <boost/json.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sluice::app {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// An XDG base directory: $VAR when set to an absolute path (the spec ignores relative ones),
// else ~/`fallback`.
fs::path xdg_dir(const char* var, const char* fallback) {
    if (const char* v = std::getenv(var); v != nullptr && *v == '/') {
        return fs::path(v);
    }
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
        return fs::path(home) / fallback;
    }
    return {};
}

bool alive(long pid) {
    return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

fs::path standard_data_dir() {
    const fs::path base = xdg_dir("XDG_STATE_HOME", ".local/state");
    return base.empty() ? fs::path("sluice-state") : base / "sluice";
}

fs::path standard_config_file() {
    const fs::path base = xdg_dir("XDG_CONFIG_HOME", ".config");
    return base.empty() ? fs::path() : base / "sluice" / "config.toml";
}

fs::path resolve_data_dir(const std::string& given, bool notice) {
    if (!given.empty()) {
        return fs::path(given);
    }
    std::error_code ec;
    if (fs::is_directory(LEGACY_DATA_DIR, ec)) {
        const fs::path legacy = fs::absolute(LEGACY_DATA_DIR, ec);
        if (notice) {
            std::fprintf(
                stderr,
                "notice: using %s, an earlier version's data dir in this folder; `sluice data "
                "move` moves it to %s, where any folder finds it\n",
                legacy.c_str(),
                standard_data_dir().c_str());
        }
        return legacy;
    }
    return standard_data_dir();
}

bool write_hub_file(const fs::path& dir, const HubFile& f) {
    json::array pages;
    for (const auto& p : f.pages) {
        pages.emplace_back(p);
    }
    const json::object o{
        {"url", f.url},
        {"public_url", f.public_url},
        {"pages", std::move(pages)},
        {"pid", f.pid},
        {"started", f.started}};
    const std::string text = json::serialize(o) + "\n";
    const fs::path tmp = dir / (std::string(HUB_FILE) + ".tmp");
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        std::fprintf(stderr, "warning: cannot write %s: %s\n", tmp.c_str(), std::strerror(errno));
        return false;
    }
    const bool wrote = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    std::error_code ec;
    if (wrote) {
        fs::rename(tmp, dir / HUB_FILE, ec);
    }
    if (!wrote || ec) {
        fs::remove(tmp, ec);
        std::fprintf(stderr, "warning: cannot write %s/%s\n", dir.c_str(), HUB_FILE);
        return false;
    }
    return true;
}

std::optional<HubFile> read_hub_file(const fs::path& dir) {
    std::error_code ec;
    const fs::path p = dir / HUB_FILE;
    if (!fs::is_regular_file(p, ec)) {
        return std::nullopt;
    }
    boost::system::error_code jec;
    const json::value v = json::parse(read_all(p), jec);
    if (jec || !v.is_object()) {
        return std::nullopt;
    }
    const auto& o = v.as_object();
    HubFile f;
    auto str = [&o](const char* k) {
        const auto* x = o.if_contains(k);
        return x != nullptr && x->is_string() ? std::string(x->as_string()) : std::string();
    };
    f.url = str("url");
    f.public_url = str("public_url");
    if (const auto* pages = o.if_contains("pages"); pages != nullptr && pages->is_array()) {
        for (const auto& page : pages->as_array()) {
            if (page.is_string()) {
                f.pages.emplace_back(page.as_string());
            }
        }
    }
    if (const auto* pid = o.if_contains("pid"); pid != nullptr && pid->is_int64()) {
        f.pid = static_cast<long>(pid->as_int64());
    }
    if (const auto* s = o.if_contains("started"); s != nullptr && s->is_int64()) {
        f.started = s->as_int64();
    }
    if (f.url.empty() || !alive(f.pid)) {
        return std::nullopt; // stale: its hub is gone without removing it (kill -9, a crash)
    }
    return f;
}

void remove_hub_file(const fs::path& dir) {
    const fs::path p = dir / HUB_FILE;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
        return;
    }
    boost::system::error_code jec;
    const json::value v = json::parse(read_all(p), jec);
    const auto* pid = !jec && v.is_object() ? v.as_object().if_contains("pid") : nullptr;
    if (pid != nullptr && pid->is_int64() && pid->as_int64() == ::getpid()) {
        fs::remove(p, ec);
    }
}

std::string normalize_hub_url(std::string url) {
    if (!url.empty() && url.find("://") == std::string::npos) {
        url = "http://" + url;
    }
    while (!url.empty() && url.back() == '/') {
        url.pop_back();
    }
    return url;
}

std::string resolve_hub_url(const std::string& flag, const fs::path& data_dir) {
    if (!flag.empty()) {
        return normalize_hub_url(flag);
    }
    if (const char* env = std::getenv("SLUICE_HUB"); env != nullptr && *env != '\0') {
        return normalize_hub_url(env);
    }
    if (auto f = read_hub_file(data_dir)) {
        return normalize_hub_url(f->url);
    }
    return DEFAULT_HUB_URL;
}

HubLock::~HubLock() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

HubLock& HubLock::operator=(HubLock&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        fd_ = o.fd_;
        o.fd_ = -1;
    }
    return *this;
}

std::optional<HubLock> HubLock::acquire(const fs::path& dir, std::string& why) {
    const fs::path p = dir / LOCK_FILE;
    int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EROFS || errno == EACCES)) {
        // A read-only data dir (it serves history, refuses prompts): an existing lock file is
        // still lockable read-only; without one, no hub can write there, so none is needed.
        fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return HubLock{};
        }
    }
    if (fd < 0) {
        why = "cannot open " + p.string() + ": " + std::strerror(errno);
        return std::nullopt;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        ::close(fd);
        if (err != EWOULDBLOCK) {
            why = "cannot lock " + p.string() + ": " + std::strerror(err);
            return std::nullopt;
        }
        why = "another hub already runs on " + dir.string();
        if (auto f = read_hub_file(dir)) {
            why += " (pid " + std::to_string(f->pid) + ", " + f->url + ")";
        }
        why += "; stop it first, or give this one another --data";
        return std::nullopt;
    }
    HubLock lock;
    lock.fd_ = fd;
    return lock;
}

std::vector<std::string> page_addresses(
    const std::string& scheme,
    const std::string& host,
    unsigned port,
    const std::string& public_url) {
    std::vector<std::string> out;
    if (!public_url.empty()) {
        out.push_back(normalize_hub_url(public_url));
        return out;
    }
    const std::string tail = ":" + std::to_string(port);
    const bool v4_any = host == "0.0.0.0" || host.empty();
    const bool v6_any = host == "[::]" || host == "::";
    if (!v4_any && !v6_any) {
        out.push_back(scheme + "://" + host + tail);
        return out;
    }
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) == 0) {
        for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
            if (a->ifa_addr == nullptr || (a->ifa_flags & IFF_UP) == 0
                || (a->ifa_flags & IFF_LOOPBACK) != 0) {
                continue;
            }
            char buf[INET6_ADDRSTRLEN] = {};
            const int family = a->ifa_addr->sa_family;
            if (family == AF_INET) {
                const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
                ::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
                out.push_back(scheme + "://" + buf + tail);
            } else if (family == AF_INET6 && v6_any) {
                const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ifa_addr);
                if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr)) {
                    continue; // needs a zone id no browser link carries
                }
                ::inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
                out.push_back(scheme + "://[" + buf + "]" + tail);
            }
        }
        ::freeifaddrs(list);
    }
    out.push_back(scheme + "://" + std::string(v6_any ? "[::1]" : "127.0.0.1") + tail);
    return out;
}

std::string this_binary() {
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("/usr/bin/sluice") : p.string();
}

} // namespace sluice::app
