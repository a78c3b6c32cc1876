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
#include <vector>

namespace gangway::sys {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

Failure cannot(const char* what, const std::string& path, int e) {
    return Failure{std::string(what) + path + ": " + (e == ELOOP ? "it is a symbolic link (name the real path)" : std::strerror(e))};
}

// Why `st` is not a directory root may keep things in, or "".
std::string not_roots(const struct stat& st, const std::string& path, bool last) {
    if (!S_ISDIR(st.st_mode)) return path + " is not a directory";
    if (st.st_uid != 0)
        return path + " is owned by uid " + std::to_string(st.st_uid) + ", not root: that user could move root's files under it";
    // A sticky directory (/tmp): nobody but root renames or removes root's entries there.
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && (last || !(st.st_mode & S_ISVTX)))
        return path + " is writable by group or others: any user could move root's files under it";
    return {};
}

}  // namespace

Result<Fd> open_root_tree(const std::string& path, mode_t mode, bool make) {
    if (path.empty() || path[0] != '/') return Failure{"\"" + path + "\" is not an absolute path"};
    std::vector<std::string> names;
    for (std::size_t at = 0; at < path.size();) {
        const std::size_t end = std::min(path.find('/', at), path.size());
        if (end > at) names.push_back(path.substr(at, end - at));
        at = end + 1;
    }
    Fd cur(::open("/", kDirFlags));
    if (!cur) return cannot("cannot open ", "/", errno);
    std::string shown;
    for (std::size_t i = 0;; ++i) {
        const bool last = i == names.size();
        struct stat st{};
        if (::fstat(cur.get(), &st) != 0) return cannot("cannot stat ", shown.empty() ? "/" : shown, errno);
        if (auto why = not_roots(st, shown.empty() ? "/" : shown, last && !shown.empty()); !why.empty()) return Failure{why};
        if (last) {
            const mode_t want = mode & 07777;
            if ((st.st_mode & want) != want && ::fchmod(cur.get(), (st.st_mode | want) & 07777) != 0)
                return cannot("cannot set the mode of ", shown, errno);
            return cur;
        }
        const std::string& name = names[i];
        if (name == "." || name == "..") return Failure{"\"" + path + "\" holds a \".\" or \"..\": name the directory itself"};
        shown += "/" + name;
        Fd next(::openat(cur.get(), name.c_str(), kDirFlags));
        if (!next && errno == ENOENT && make && i + 1 == names.size()) {
            if (::mkdirat(cur.get(), name.c_str(), mode) != 0 && errno != EEXIST) return cannot("cannot make ", shown, errno);
            next = Fd(::openat(cur.get(), name.c_str(), kDirFlags));
            // mkdir applies the umask: the mode meant.
            if (next && ::fchmod(next.get(), mode) != 0) return cannot("cannot set the mode of ", shown, errno);
        }
        if (!next) return cannot("cannot open ", shown, errno);
        cur = std::move(next);
    }
}

Result<Fd> make_dir_at(int at, const std::string& name, mode_t mode, uid_t uid, gid_t gid, bool closed_to_others) {
    const bool made = ::mkdirat(at, name.c_str(), mode) == 0;
    if (!made && errno != EEXIST) return cannot("cannot make ", name, errno);
    Fd fd(::openat(at, name.c_str(), kDirFlags));
    if (!fd) return cannot("cannot open ", name, errno);
    if (made) {
        // mkdir applies the umask: the mode meant, and the owner, on the directory made.
        if (::fchown(fd.get(), uid, gid) != 0 || ::fchmod(fd.get(), mode) != 0)
            return cannot("cannot set the owner or mode of ", name, errno);
        return fd;
    }
    struct stat st{};
    if (::fstat(fd.get(), &st) != 0) return cannot("cannot stat ", name, errno);
    if (st.st_uid != uid || (closed_to_others && (st.st_mode & (S_IWGRP | S_IWOTH))))
        return Failure{name + " is there but is not a directory of uid " + std::to_string(uid) +
                       (closed_to_others ? " closed to others' writes" : "")};
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
    bool empty(int fd, dev_t dev, unsigned depth) {
        DIR* d = ::fdopendir(::dup(fd));
        if (!d) return false;
        bool all = true;
        while (const dirent* e = ::readdir(d)) {
            const std::string_view n = e->d_name;
            if (n == "." || n == "..") continue;
            if (over()) {
                all = false;
                break;
            }
            bool dir = e->d_type == DT_DIR;
            if (e->d_type == DT_UNKNOWN) {
                struct stat st{};
                dir = ::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
            }
            if (!dir) {
                if (::unlinkat(fd, e->d_name, 0) == 0) ++entries;
                else all = false;
                continue;
            }
            if (depth >= b.max_depth) {
                all = false;
                stopped = true;
                continue;
            }
            Fd sub(::openat(fd, e->d_name, kDirFlags));
            struct stat st{};
            if (!sub || ::fstat(sub.get(), &st) != 0 || st.st_dev != dev || !empty(sub.get(), dev, depth + 1) ||
                ::unlinkat(fd, e->d_name, AT_REMOVEDIR) != 0) {
                all = false;
                continue;
            }
            ++entries;
        }
        ::closedir(d);
        return all;
    }
};

}  // namespace

Removed remove_tree_at(int at, const std::string& name, const RemoveBounds& b) {
    Walk w{b, {}};
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

}  // namespace gangway::sys
