#include "accept_guard.hpp"

#include <fcntl.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace gangway::sys {

namespace {
Fd open_spare() { return Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC)); }
}  // namespace

long descriptor_limit() {
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 1024;
    return static_cast<long>(std::min<rlim_t>(rl.rlim_cur, 1 << 30));
}

std::size_t waiting_cap(std::size_t most) {
    return std::clamp<std::size_t>(static_cast<std::size_t>(descriptor_limit() / 8), 4, std::max<std::size_t>(most, 4));
}

AcceptGuard::AcceptGuard() : spare_(open_spare()) {}

AcceptGuard::Accepted AcceptGuard::accept(int listen_fd, RejectLog& log) {
    Fd fd = tcp_accept(listen_fd);
    if (!fd) {
        const int err = errno;
        if (err == ECONNABORTED || err == EINTR || err == EPROTO) return {Fd(), true};
        if (err != EMFILE && err != ENFILE) return {};
        // Out of descriptors: take the connection off the queue with the spare's.
        spare_.reset();
        Fd victim = tcp_accept(listen_fd);
        if (victim) log.note(victim.get(), "no descriptor left to serve it (ulimit -n): closed at once");
        victim.reset();
        spare_ = open_spare();
        return {Fd(), true};
    }
    const long limit = descriptor_limit();
    if (fd.get() >= limit - kReserve) {
        // Descriptors are allocated lowest first: all those below this one are in use.
        log.note(fd.get(), "fewer than " + std::to_string(kReserve) + " descriptors left (ulimit -n " + std::to_string(limit) +
                               "): closed at once");
        return {Fd(), true};
    }
    return {std::move(fd), false};
}

}  // namespace gangway::sys
