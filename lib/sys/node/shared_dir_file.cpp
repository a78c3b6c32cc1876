#include "shared_dir_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "../../base/text.hpp"
#include "../fd.hpp"

namespace gangway::sys {

namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// A name no other process picks or guesses: the pid and 8 bytes from
// getrandom, hidden by the dot so that the Epilog's glob
// (gangway-drain.JOB.*) never sees it.
Result<std::string> private_name(const std::string& name) {
    unsigned char r[8];
    std::size_t off = 0;
    while (off < sizeof r) {
        const ssize_t n = ::getrandom(r + off, sizeof r - off, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Failure{std::string("getrandom: ") + std::strerror(errno)};
        off += static_cast<std::size_t>(n);
    }
    return "." + name + ".tmp." + std::to_string(::getpid()) + "." +
           to_hex(std::string_view(reinterpret_cast<const char*>(r), sizeof r));
}

// What to do about errno `e` when writing `path` in `dir`.
std::string advice(int e, const std::string& dir) {
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

Result<std::string> read_owned_file(const std::string& path, uid_t owner, std::size_t max_bytes, FileAccess access) {
    // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
    Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!fd) {
        if (errno == ELOOP) return Failure{path + " is a symbolic link"};
        return Failure{errno_text(path)};
    }
    struct stat st{};
    if (::fstat(fd.get(), &st) != 0) return Failure{errno_text(path)};
    if (!S_ISREG(st.st_mode)) return Failure{path + " is not a regular file"};
    if (st.st_uid != owner)
        return Failure{path + " is owned by uid " + std::to_string(st.st_uid) + ", not " + std::to_string(owner)};
    if (access == FileAccess::Private && (st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return Failure{path + " has mode " + mode + ": others may read it (chmod 0400 it)"};
    }
    if (st.st_size < 0 || static_cast<unsigned long long>(st.st_size) > max_bytes)
        return Failure{path + " is larger than " + std::to_string(max_bytes) + " bytes"};
    // The size may change after fstat: read at most one byte past the limit.
    std::string out(max_bytes + 1, '\0');
    std::size_t got = 0;
    while (got < out.size()) {
        const ssize_t n = ::read(fd.get(), out.data() + got, out.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Failure{errno_text(path)};
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    if (got > max_bytes) return Failure{path + " is larger than " + std::to_string(max_bytes) + " bytes"};
    out.resize(got);
    return out;
}

Result<void> write_file_atomic(const std::string& dir, const std::string& name, const std::string& text, mode_t mode,
                               std::string_view what) {
    const std::string path = dir == "." ? name : (dir == "/" ? "" : dir) + "/" + name;
    const std::string label = "cannot write " + (what.empty() ? std::string() : std::string(what) + " ") + path;
    const auto fail = [&](int e) {
        return Failure{label + " (" + std::strerror(e) + "); " + advice(e, dir)};
    };
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
        return Failure{label + ": not a file name; give a path that ends in a file name"};
    const auto tmp = private_name(name);
    if (!tmp) return Failure{label + " (" + tmp.error() + ")"};
    // O_PATH: the drain spool is 1733, which users may write and search but not
    // read; a path descriptor needs neither, and serves every *at call here.
    Fd dfd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dfd) return fail(errno);
    Fd fd(::openat(dfd.get(), tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode));
    if (!fd) return fail(errno);
    // From here on, a failure removes the private name before it returns.
    const auto undo = [&](int e) {
        if (fd) ::close(fd.release());
        ::unlinkat(dfd.get(), tmp->c_str(), 0);
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
    if (::fsync(fd.get()) != 0 && errno != EINVAL) return undo(errno);
    if (::close(fd.release()) != 0) return undo(errno);
    if (::renameat(dfd.get(), tmp->c_str(), dfd.get(), name.c_str()) != 0) return undo(errno);
    return {};
}

Result<void> write_file_atomic(const std::string& path, const std::string& text, mode_t mode, std::string_view what) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return write_file_atomic(".", path, text, mode, what);
    return write_file_atomic(slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1), text, mode, what);
}

}  // namespace gangway::sys
