#include "dirs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <string_view>

namespace gangway::sys {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

enum class Fault { open, make, mode, stat, not_dir, owner, not_theirs, writable, name };

// The one line for a directory that cannot be taken: built only on failure,
// in one place (the plugin carries this code: its size, BENCHMARKS.md).
[[gnu::cold, gnu::noinline]] Failure fault(Fault f, std::string_view path, int e = 0, unsigned uid = 0) {
    std::string m(path.empty() ? std::string_view("/") : path);
    switch (f) {
        case Fault::open: m.insert(0, "cannot open "); break;
        case Fault::make: m.insert(0, "cannot make "); break;
        case Fault::mode: m.insert(0, "cannot set the owner or mode of "); break;
        case Fault::stat: m.insert(0, "cannot stat "); break;
        case Fault::not_dir: m += " is not a directory"; break;
        case Fault::owner: m += " is owned by uid " + std::to_string(uid) + ", not root: that user could move root's files under it"; break;
        case Fault::not_theirs: m += " is there but is not a directory of uid " + std::to_string(uid); break;
        case Fault::writable: m += " is writable by group or others: any user could move root's files under it"; break;
        case Fault::name: m += " is not an absolute path of plain names (no \".\" or \"..\")"; break;
    }
    if (f <= Fault::stat) m += std::string(": ") + (e == ELOOP || e == ENOTDIR ? "a symbolic link or not a directory (name the real path)" : std::strerror(e));
    return Failure{std::move(m)};
}

// mkdir applies the umask: the mode meant (and the owner) set through the descriptor.
bool set_mode(int fd, mode_t mode, uid_t uid, gid_t gid) {
    return (uid == 0 || ::fchown(fd, uid, gid) == 0) && ::fchmod(fd, mode) == 0;
}

}  // namespace

Result<Fd> open_root_tree(const std::string& path, mode_t mode, bool make) {
    if (path.empty() || path[0] != '/') return fault(Fault::name, path);
    Fd cur(::open("/", kDirFlags));
    std::size_t at = 0;  // path[0, at) is open in `cur`
    while (true) {
        if (!cur) return fault(Fault::open, std::string_view(path).substr(0, at), errno);
        struct stat st{};
        if (::fstat(cur.get(), &st) != 0) return fault(Fault::stat, std::string_view(path).substr(0, at), errno);
        const std::string_view shown = std::string_view(path).substr(0, at);  // "": "/"
        while (at < path.size() && path[at] == '/') ++at;
        const bool last = at == path.size();
        if (!S_ISDIR(st.st_mode)) return fault(Fault::not_dir, shown);
        if (st.st_uid != 0) return fault(Fault::owner, shown, 0, st.st_uid);
        // A sticky directory (/tmp) on the way: nobody but root renames or removes root's entries there.
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) && (last || !(st.st_mode & S_ISVTX))) return fault(Fault::writable, shown);
        if (last) {
            const mode_t want = mode & 07777;
            if ((st.st_mode & want) != want && ::fchmod(cur.get(), (st.st_mode | want) & 07777) != 0)
                return fault(Fault::mode, shown, errno);
            return cur;
        }
        const std::size_t end = std::min(path.find('/', at), path.size());
        char name[256];
        if (end - at >= sizeof name) return fault(Fault::open, std::string_view(path).substr(0, end), ENAMETOOLONG);
        path.copy(name, end - at, at);
        name[end - at] = 0;
        if (!std::strcmp(name, ".") || !std::strcmp(name, "..")) return fault(Fault::name, path);
        const bool tail = path.find_first_not_of('/', end) == std::string::npos;
        Fd next(::openat(cur.get(), name, kDirFlags));
        if (!next && errno == ENOENT && make && tail) {
            if (::mkdirat(cur.get(), name, mode) != 0 && errno != EEXIST) return fault(Fault::make, std::string_view(path).substr(0, end), errno);
            next = Fd(::openat(cur.get(), name, kDirFlags));
            if (next && !set_mode(next.get(), mode, 0, 0)) return fault(Fault::mode, std::string_view(path).substr(0, end), errno);
        }
        at = end;
        cur = std::move(next);
    }
}

Result<Fd> make_dir_at(int at, const std::string& name, mode_t mode, uid_t uid, gid_t gid, bool closed_to_others) {
    const bool made = ::mkdirat(at, name.c_str(), mode) == 0;
    if (!made && errno != EEXIST) return fault(Fault::make, name, errno);
    Fd fd(::openat(at, name.c_str(), kDirFlags));
    if (!fd) return fault(Fault::open, name, errno);
    if (made) {
        if (!set_mode(fd.get(), mode, uid, gid)) return fault(Fault::mode, name, errno);
        return fd;
    }
    struct stat st{};
    if (::fstat(fd.get(), &st) != 0) return fault(Fault::stat, name, errno);
    if (st.st_uid != uid) return fault(Fault::not_theirs, name, 0, uid);
    if (closed_to_others && (st.st_mode & (S_IWGRP | S_IWOTH))) return fault(Fault::writable, name);
    return fd;
}

namespace {

struct Walk {
    const RemoveBounds& b;
    struct timespec end;
    std::size_t entries = 0;
    bool stopped = false;  // a bound was reached

    bool over() {
        if (entries >= b.max_entries) return stopped = true;
        struct timespec now{};
        ::clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)) return stopped = true;
        return false;
    }

    // Empties the directory `fd` (on device `dev`); true when it is empty now.
    // A file system may pass over names while others are removed under the
    // reader: a pass that removed all it saw is followed by one more.
    bool empty(int fd, dev_t dev, unsigned depth) {
        DIR* d = ::fdopendir(::dup(fd));
        if (!d) return false;
        bool all = true, seen = true;
        for (int pass = 0; all && seen && pass < 4; ++pass) {
            ::rewinddir(d);
            seen = false;
            while (const dirent* e = ::readdir(d)) {
                const std::string_view n = e->d_name;
                if (n == "." || n == "..") continue;
                seen = true;
                if (over()) {
                    all = false;
                    break;
                }
                all &= remove_one(fd, e, dev, depth);
            }
        }
        ::closedir(d);
        return all && !seen;
    }

    // One entry of the directory `fd`: a name, or a directory emptied first.
    bool remove_one(int fd, const dirent* e, dev_t dev, unsigned depth) {
        bool dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
            struct stat st{};
            dir = ::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        }
        if (!dir) return ::unlinkat(fd, e->d_name, 0) == 0 && ++entries;
        if (depth >= b.max_depth) return !(stopped = true);
        Fd sub(::openat(fd, e->d_name, kDirFlags));
        struct stat st{};
        if (!sub || ::fstat(sub.get(), &st) != 0 || st.st_dev != dev || !empty(sub.get(), dev, depth + 1)) return false;
        sub.reset();
        return ::unlinkat(fd, e->d_name, AT_REMOVEDIR) == 0 && ++entries;
    }
};

}  // namespace

Removed remove_tree_at(int at, const std::string& name, const RemoveBounds& b) {
    Walk w{b, {}, 0, false};
    ::clock_gettime(CLOCK_MONOTONIC, &w.end);
    const auto ns = static_cast<long long>(b.max_seconds * 1e9);
    w.end.tv_sec += static_cast<time_t>(ns / 1000000000);
    w.end.tv_nsec += static_cast<long>(ns % 1000000000);
    if (w.end.tv_nsec >= 1000000000) ++w.end.tv_sec, w.end.tv_nsec -= 1000000000;
    Removed r;
    Fd top(::openat(at, name.c_str(), kDirFlags));
    struct stat st{};
    if (!top) {
        // Not a directory (a file or a link in its place): the name alone goes.
        if ((errno == ENOTDIR || errno == ELOOP) && ::unlinkat(at, name.c_str(), 0) == 0) r.entries = 1, r.whole = true;
        if (errno == ENOENT) r.whole = true;
        return r;
    }
    if (::fstat(top.get(), &st) != 0) return r;
    const bool all = w.empty(top.get(), st.st_dev, 1);
    top.reset();
    r.entries = w.entries;
    if (all && ::unlinkat(at, name.c_str(), AT_REMOVEDIR) == 0) {
        ++r.entries;
        r.whole = true;
    }
    return r;
}

DirStream::DirStream(int dirfd) {
    const int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    if (DIR* d = ::fdopendir(fd)) d_ = d;
    else ::close(fd);
}

DirStream::~DirStream() {
    if (d_) ::closedir(static_cast<DIR*>(d_));
}

const char* DirStream::next() {
    if (!d_) return nullptr;
    while (const dirent* e = ::readdir(static_cast<DIR*>(d_))) {
        const std::string_view n = e->d_name;
        if (n != "." && n != "..") return e->d_name;
    }
    return nullptr;
}

}  // namespace gangway::sys
