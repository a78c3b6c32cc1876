#include "owned_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gangway::sys {
namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

struct OpenFile {
    int fd;
    ~OpenFile() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

Result<std::string> read_owned_file(const std::string& path, uid_t owner, std::size_t max_bytes, FileAccess access) {
    // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
    const OpenFile f{::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
    if (f.fd < 0) {
        if (errno == ELOOP) return Failure{path + " is a symbolic link"};
        return Failure{errno_text(path)};
    }
    struct stat st{};
    if (::fstat(f.fd, &st) != 0) return Failure{errno_text(path)};
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
        const ssize_t n = ::read(f.fd, out.data() + got, out.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Failure{errno_text(path)};
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    if (got > max_bytes) return Failure{path + " is larger than " + std::to_string(max_bytes) + " bytes"};
    out.resize(got);
    return out;
}

}  // namespace gangway::sys
