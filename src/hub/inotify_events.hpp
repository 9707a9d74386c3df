// Private: the events one inotify read returned, decoded (the Claude and Codex session followers).
#pragma once

#include <sys/inotify.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace sluice::hub {

/// Calls `fn(wd, mask, name)` for each event in the `n` bytes an inotify descriptor's read put
/// in `buf` (a name is empty for an event on the watched folder itself).
template <class Fn>
void for_each_inotify_event(const char* buf, std::size_t n, Fn&& fn) {
    std::size_t at = 0;
    while (at + sizeof(inotify_event) <= n) {
        inotify_event ev{};
        std::memcpy(&ev, buf + at, sizeof(ev)); // the buffer need not be aligned for it
        std::string name;
        if (ev.len > 0) {
            name.assign(buf + at + sizeof(ev), ev.len);
            name.resize(std::strlen(name.c_str())); // padded with NULs
        }
        fn(ev.wd, static_cast<std::uint32_t>(ev.mask), name);
        at += sizeof(inotify_event) + ev.len;
    }
}

} // namespace sluice::hub
