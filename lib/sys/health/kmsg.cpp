#include "kmsg.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "../net/sock.hpp"  // Fd
#include "../node/sysfs.hpp"

namespace gangway::sys {

Result<std::string> read_kmsg(const std::string& root, std::size_t max_bytes) {
    const std::string path = sysfs_base(root) + "/dev/kmsg";
    Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!fd) return Failure{"cannot read the kernel log (" + path + "): " + std::strerror(errno)};
    std::string out;
    char buf[8192];  // a kmsg record is at most about 1 KiB of text, plus its dictionary
    while (out.size() < max_bytes) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n > 0) {
            out.append(buf, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        // EPIPE: the ring buffer overwrote the record we were at; the next read goes on from
        // the oldest one left. Not passed over in silence: the records' numbers jump, and
        // health::kmsg_lost counts what was lost.
        if (n < 0 && errno == EPIPE) continue;
        break;  // 0 (a plain file's end) or EAGAIN (no newer record)
    }
    return out;
}

}  // namespace gangway::sys
