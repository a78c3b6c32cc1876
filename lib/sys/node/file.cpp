#include "file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "../../base/text.hpp"
#include "fd.hpp"

namespace gangway::sys {

namespace {

// n bytes from getrandom(2) into p: 0, or the errno.
int fill_random(void* p, std::size_t n) {
    std::size_t off = 0;
    while (off < n) {
        const ssize_t r = ::getrandom(static_cast<char*>(p) + off, n - off, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return errno;
        off += static_cast<std::size_t>(r);
    }
    return 0;
}

// What to do about errno `e` when writing `path` in `dir`.
[[gnu::cold]] std::string advice(int e, const std::string& dir) {
    switch (e) {
        case ENOENT:
        case ENOTDIR:
            return "create the directory " + dir + " or choose a path in one that exists";
        case EACCES:
        case EPERM:
        case EROFS:
            return "choose a path in a directory you can write (the node's local disk), or run as its owner";
        case ENOSPC:
        case EDQUOT:
        case EFBIG:
        case EIO:
            return "free space on that file system (or raise the quota) and write it again";
        case EISDIR:
        case ENOTEMPTY:
        case EEXIST:
            return "that name is a directory: give a file name";
        default:
            return "check the directory's permissions and the disk, and write it again";
    }
}

}  // namespace

Result<std::string> random_bytes(std::size_t n) {
    std::string s(n, '\0');
    if (const int e = fill_random(s.data(), n)) return Failure{std::string("getrandom: ") + std::strerror(e)};
    return s;
}

namespace {

// The reading itself: the problem, with errno in r.err where there is one.
// One function that returns a code, and one place below that clears the
// text: the plugin carries this, so it is kept small.
constexpr std::size_t kPage = 4096;

ReadProblem read_into(FileRead& r, int dirfd, const std::string& name, const ReadOptions& o) {
    // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
    Fd fd(::openat(dirfd, name.c_str(),
                   O_RDONLY | O_CLOEXEC | O_NOCTTY | (o.follow_links ? 0 : O_NOFOLLOW) | (o.may_block ? 0 : O_NONBLOCK)));
    if (!fd) {
        r.err = errno;
        // What is there, for a caller that names its owner (the fleet's rejections).
        if (::fstatat(dirfd, name.c_str(), &r.st, AT_SYMLINK_NOFOLLOW) != 0) r.st = {};
        return !o.follow_links && r.err == ELOOP ? ReadProblem::link : ReadProblem::open;
    }
    if (::fstat(fd.get(), &r.st) != 0) {
        r.err = errno;
        return ReadProblem::stat;
    }
    const bool regular = S_ISREG(r.st.st_mode);
    if (o.regular_only && !regular) return ReadProblem::not_regular;
    if (o.owner && r.st.st_uid != *o.owner) return ReadProblem::owner;
    if (o.closed_to_others && (r.st.st_mode & 077) != 0) return ReadProblem::open_to_others;
    // "The owner is the writer" holds only for a file nobody else could have
    // written: a second name (a hard link to a file someone else may write)
    // or a group or other write bit breaks it.
    if (o.written_by_owner_only && r.st.st_nlink != 1) return ReadProblem::hard_links;
    if (o.written_by_owner_only && (r.st.st_mode & (S_IWGRP | S_IWOTH))) return ReadProblem::written_by_others;
    const std::size_t cap = o.max_bytes + 1;  // one byte past the limit: to know there is more
    if (regular && o.over == ReadOptions::Over::Refuse &&
        (r.st.st_size < 0 || static_cast<unsigned long long>(r.st.st_size) > o.max_bytes))
        return ReadProblem::too_large;
    // The file's size and one byte (to see it grew), not the limit: a 16 MiB
    // buffer zeroed in every step cost each node's slurmstepd some 60 ms.
    // sysfs and /proc give 4096 or 0 as the size: read those a page at a time.
    const std::size_t size = regular && r.st.st_size > 0 ? static_cast<std::size_t>(r.st.st_size) : 0;
    // One read, EINTR retried; -1 with r.err set on a failure.
    const auto read_some = [&](char* to, std::size_t n) {
        ssize_t k;
        do k = ::read(fd.get(), to, n);
        while (k < 0 && errno == EINTR);
        if (k < 0) r.err = errno;
        return k;
    };
    std::size_t got = 0;
    if (size <= kPage) {
        // An attribute (sysfs says 4096), a /proc file (0) or a small file:
        // most reads in a step's start. Through a page on the stack, so that
        // no page of the string is zeroed first.
        char page[kPage];
        for (std::size_t room; (room = std::min(sizeof page, cap - r.text.size())) > 0;) {
            const ssize_t n = read_some(page, room);
            if (n < 0) return ReadProblem::read;
            if (n == 0) break;
            r.text.append(page, static_cast<std::size_t>(n));
        }
        got = r.text.size();
    } else {
        r.text.resize(std::min(size + 1, cap));
    }
    while (got < r.text.size()) {
        const ssize_t n = read_some(r.text.data() + got, r.text.size() - got);
        if (n < 0) return ReadProblem::read;
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
        // Grown since fstat (or a file whose size the kernel does not say): read on, up to the limit.
        if (got == r.text.size() && r.text.size() < cap) r.text.resize(std::min(r.text.size() * 2, cap));
    }
    r.text.resize(got);
    if (got > o.max_bytes) {
        if (o.over == ReadOptions::Over::Refuse) return ReadProblem::too_large;
        r.text.resize(o.max_bytes);
        r.truncated = true;
    }
    return ReadProblem::none;
}

}  // namespace

FileRead read_file_at(int dirfd, const std::string& name, const ReadOptions& o) {
    FileRead r;
    r.problem = read_into(r, dirfd, name, o);
    if (r.problem != ReadProblem::none) std::string().swap(r.text);
    return r;
}

// Cold: only a failure reaches it (smaller code in the plugin).
[[gnu::cold]] std::string describe(const std::string& path, const FileRead& r, const ReadOptions& o) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(r.st.st_mode & 07777));
    switch (r.problem) {
        case ReadProblem::none:
            return {};
        case ReadProblem::link:
            return path + " is a symbolic link";
        case ReadProblem::open:
        case ReadProblem::stat:
        case ReadProblem::read:
            return path + ": " + std::strerror(r.err);
        case ReadProblem::not_regular:
            return path + " is not a regular file";
        case ReadProblem::owner:
            return path + " is owned by uid " + std::to_string(r.st.st_uid) + ", not " +
                   std::to_string(o.owner.value_or(0));
        case ReadProblem::open_to_others:
            return path + " has mode " + mode + ": others may read it (chmod 0400 it)";
        case ReadProblem::written_by_others:
            return path + " has mode " + mode + ": others than its owner may write it";
        case ReadProblem::hard_links:
            return path + " has " + std::to_string(r.st.st_nlink) + " hard links: it must have one name";
        case ReadProblem::too_large:
            return path + " is larger than " + std::to_string(o.max_bytes) + " bytes";
    }
    return path + ": cannot be read";
}

Result<std::string> read_file(const std::string& path, const ReadOptions& o) {
    auto r = read_file_at(AT_FDCWD, path, o);
    if (!r.ok()) return Failure{describe(path, r, o)};
    return std::move(r.text);
}

Result<std::string> read_config_file(const std::string& path) { return read_file(path, ReadOptions{kMaxConfigBytes}); }

Result<std::string> read_owned_file(const std::string& path, uid_t owner, std::size_t max_bytes, FileAccess access) {
    ReadOptions o{max_bytes};
    o.follow_links = false;
    o.owner = owner;
    o.closed_to_others = access == FileAccess::Private;
    return read_file(path, o);
}

namespace {

enum class WriteProblem { not_a_name, getrandom, sys };

// Every failure's line, out of line: the plugin writes a task's end with
// write_file_atomic in slurmstepd, and the path and the label are built only
// when something went wrong (issue 32 item 6: the plugin's size).
[[gnu::cold, gnu::noinline]] Failure write_failure(const std::string& dir, const std::string& name,
                                                   std::string_view what, WriteProblem p, int e) {
    const std::string path = dir == "." ? name : (dir == "/" ? "" : dir) + "/" + name;
    std::string label = "cannot write " + (what.empty() ? std::string() : std::string(what) + " ") + path;
    switch (p) {
        case WriteProblem::not_a_name:
            return Failure{label + ": not a file name; give a path that ends in a file name"};
        case WriteProblem::getrandom:
            return Failure{label + " (getrandom: " + std::strerror(e) + ")"};
        case WriteProblem::sys:
            break;
    }
    return Failure{label + " (" + std::strerror(e) + "); " + advice(e, dir)};
}

}  // namespace

Result<void> write_file_atomic(const std::string& dir, const std::string& name, std::string_view text, mode_t mode,
                               std::string_view what, Durability durability) {
    const auto fail = [&](int e) { return write_failure(dir, name, what, WriteProblem::sys, e); };
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
        return write_failure(dir, name, what, WriteProblem::not_a_name, 0);
    // The private name, ".NAME.tmp.PID.<16 hex digits>": the pid and 8 bytes
    // from getrandom, which no other process picks or guesses, hidden by the
    // dot so that the Epilog's glob (gangway-drain.JOB.*) never sees it.
    // Built in place: no allocation on the plugin's path.
    unsigned char rnd[8];
    if (const int e = fill_random(rnd, sizeof rnd)) return write_failure(dir, name, what, WriteProblem::getrandom, e);
    // O_PATH: the drain spool is 1733, which users may write and search but not
    // read; a path descriptor needs neither, and serves every *at call here.
    Fd dfd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dfd) return fail(errno);
    // A name longer than a file name may be: what openat would say of the
    // private name, which is longer still (the buffer holds any other).
    constexpr std::string_view kTmp = ".tmp.";
    if (name.size() > NAME_MAX) return fail(ENAMETOOLONG);
    char tmp[1 + NAME_MAX + kTmp.size() + 11 + 1 + 2 * sizeof rnd + 1];
    char* p = tmp;
    *p++ = '.';
    p = std::copy(name.begin(), name.end(), p);
    p = std::copy(kTmp.begin(), kTmp.end(), p);
    p = std::to_chars(p, tmp + sizeof tmp, static_cast<long>(::getpid())).ptr;
    *p++ = '.';
    static constexpr char digits[] = "0123456789abcdef";
    for (unsigned char c : rnd) {
        *p++ = digits[c >> 4];
        *p++ = digits[c & 15];
    }
    *p = '\0';
    Fd fd(::openat(dfd.get(), tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode));
    if (!fd) return fail(errno);
    // From here on, a failure removes the private name before it returns.
    const auto undo = [&](int e) {
        if (fd) ::close(fd.release());
        ::unlinkat(dfd.get(), tmp, 0);
        return fail(e);
    };
    std::size_t off = 0;
    while (off < text.size()) {
        const ssize_t n = ::write(fd.get(), text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return undo(errno);
        off += static_cast<std::size_t>(n);
    }
    // On disk before it takes the name: a crash never leaves an empty file
    // there (EINVAL: a file system without fsync, such as some FUSE ones).
    if (durability == Durability::fsync && ::fsync(fd.get()) != 0 && errno != EINVAL) return undo(errno);
    if (::close(fd.release()) != 0) return undo(errno);
    if (::renameat(dfd.get(), tmp, dfd.get(), name.c_str()) != 0) return undo(errno);
    return {};
}

Result<void> write_file_atomic(const std::string& path, const std::string& text, mode_t mode, std::string_view what) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return write_file_atomic(".", path, text, mode, what);
    return write_file_atomic(slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1), text, mode, what);
}

}  // namespace gangway::sys
