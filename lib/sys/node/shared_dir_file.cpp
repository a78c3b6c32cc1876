#include "shared_dir_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "../../base/text.hpp"
#include "../net/sock.hpp"

namespace gangway::sys {

namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// A name no other process picks: the pid and random bytes, hidden by the dot
// so that the Epilog's glob (gangway-drain.JOB.*) never sees it.
Result<std::string> private_name(const std::string& name) {
    auto r = random_bytes(8);
    if (!r) return Failure{r.error()};
    return "." + name + ".tmp." + std::to_string(::getpid()) + "." + to_hex(*r);
}

}  // namespace

Result<std::string> read_owned_file(const std::string& path, uid_t owner, std::size_t max_bytes) {
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

Result<void> write_file_atomic(const std::string& dir, const std::string& name, const std::string& text, mode_t mode) {
    const auto tmp_name = private_name(name);
    if (!tmp_name) return Failure{tmp_name.error()};
    const std::string tmp = dir + "/" + *tmp_name, path = dir + "/" + name;
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode));
    if (!fd) return Failure{errno_text("cannot write " + path)};
    std::size_t off = 0;
    while (off < text.size()) {
        const ssize_t n = ::write(fd.get(), text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const auto why = errno_text("cannot write " + path);
            ::unlink(tmp.c_str());
            return Failure{why};
        }
        off += static_cast<std::size_t>(n);
    }
    if (::close(fd.release()) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
        const auto why = errno_text("cannot write " + path);
        ::unlink(tmp.c_str());
        return Failure{why};
    }
    return {};
}

Result<void> write_file_atomic(const std::string& path, const std::string& text, mode_t mode) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return write_file_atomic(".", path, text, mode);
    return write_file_atomic(slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1), text, mode);
}

}  // namespace gangway::sys
