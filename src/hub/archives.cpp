// prune_archives, retire_folder, folder_bytes, archived_folder_name (archives.hpp).
#include <sluice/hub/archives.hpp>

#include <ctime>
#include <string_view>

namespace sluice::hub {

namespace fs = std::filesystem;

namespace {

bool older_than(const fs::path& p, fs::file_time_type cutoff) {
    std::error_code ec;
    const auto t = fs::last_write_time(p, ec);
    return !ec && t < cutoff;
}

// The epoch of a reset archive's name (`transcript.<epoch>.jsonl`), or "" for any other file.
std::string_view archive_epoch(std::string_view name) {
    constexpr std::string_view head = "transcript.";
    constexpr std::string_view tail = ".jsonl";
    if (name.size() <= head.size() + tail.size() || !name.starts_with(head)
        || !name.ends_with(tail)) {
        return {};
    }
    return name.substr(head.size(), name.size() - head.size() - tail.size());
}

} // namespace

Pruned prune_archives(
    const fs::path& seats_root,
    const fs::path& archive_root,
    std::chrono::seconds max_age,
    const std::map<std::string, std::string>& current_epochs) {
    Pruned out;
    const auto cutoff = fs::file_time_type::clock::now() - max_age;
    std::error_code ec;
    for (fs::directory_iterator seat(seats_root, ec), end; !ec && seat != end; seat.increment(ec)) {
        std::error_code dec;
        if (!seat->is_directory(dec)) {
            continue;
        }
        const auto id = seat->path().filename().string();
        const auto cur = current_epochs.find(id);
        for (fs::directory_iterator f(seat->path(), dec); !dec && f != end; f.increment(dec)) {
            const auto name = f->path().filename().string();
            const auto epoch = archive_epoch(name);
            if (epoch.empty() || (cur != current_epochs.end() && cur->second == epoch)
                || !older_than(f->path(), cutoff)) {
                continue;
            }
            std::error_code rec;
            const auto bytes = fs::file_size(f->path(), rec);
            if (fs::remove(f->path(), rec)) {
                ++out.files;
                out.bytes += rec ? 0 : bytes;
            }
            auto index = f->path();
            index += ".sidx";
            fs::remove(index, rec);
        }
    }
    ec.clear();
    for (fs::directory_iterator d(archive_root, ec), end; !ec && d != end; d.increment(ec)) {
        std::error_code dec;
        if (!d->is_directory(dec) || !older_than(d->path(), cutoff)) {
            continue;
        }
        const auto bytes = folder_bytes(d->path());
        if (fs::remove_all(d->path(), dec) > 0 && !dec) {
            ++out.folders;
            out.bytes += bytes;
        }
    }
    return out;
}

std::error_code retire_folder(const fs::path& dir, const fs::path& to) {
    std::error_code ec;
    if (to.empty()) {
        fs::remove_all(dir, ec);
        return ec;
    }
    fs::create_directories(to.parent_path(), ec);
    if (!ec) {
        fs::rename(dir, to, ec);
    }
    if (!ec) {
        std::error_code ignored; // an age from the last append only prunes it a little early
        fs::last_write_time(to, fs::file_time_type::clock::now(), ignored);
    }
    return ec;
}

std::uint64_t folder_bytes(const fs::path& dir) {
    std::uint64_t total = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code fec;
        if (it->is_regular_file(fec)) {
            const auto n = it->file_size(fec);
            total += fec ? 0 : n;
        }
    }
    return total;
}

std::string archived_folder_name(const std::string& id, std::chrono::system_clock::time_point at) {
    const std::time_t t = std::chrono::system_clock::to_time_t(at);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    return id + "." + stamp;
}

} // namespace sluice::hub
