#include "sock.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "../../base/error.hpp"
#include "../../preflight/crypto.hpp"

namespace gangway::sys {

namespace {

bool make_addr(const std::string& addr, unsigned port, sockaddr_storage& ss, socklen_t& len) {
    std::memset(&ss, 0, sizeof ss);
    auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (addr.empty()) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(static_cast<std::uint16_t>(port));
        v4->sin_addr.s_addr = htonl(INADDR_ANY);
        len = sizeof *v4;
        return true;
    }
    if (inet_pton(AF_INET, addr.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(static_cast<std::uint16_t>(port));
        len = sizeof *v4;
        return true;
    }
    if (inet_pton(AF_INET6, addr.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(static_cast<std::uint16_t>(port));
        len = sizeof *v6;
        return true;
    }
    return false;
}

}  // namespace

Result<Fd> tcp_listen(const std::string& addr, unsigned port, int backlog) {
    sockaddr_storage ss;
    socklen_t len;
    if (!make_addr(addr, port, ss, len)) return Failure{"\"" + addr + "\" is not an IP address"};
    Fd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return Failure{std::string("socket: ") + std::strerror(errno)};
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0)
        return Failure{"cannot listen on " + (addr.empty() ? std::string("*") : addr) + ":" + std::to_string(port) + ": " +
                       std::strerror(errno)};
    if (::listen(fd.get(), backlog) != 0) return Failure{std::string("listen: ") + std::strerror(errno)};
    // A connection reaches accept() only once its first bytes came (or after
    // kDeferAcceptS): every client of these servers sends its nonce at once,
    // so a flood of connections that send nothing waits in the kernel and
    // takes neither a descriptor nor a place from the real ones (issue 15, item 7).
    const int defer = kDeferAcceptS;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof defer);
    return fd;
}

unsigned local_port(int fd) {
    sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
    if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

Fd tcp_accept(int listen_fd) {
    Fd fd(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (fd) {
        int one = 1;
        ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

Result<Fd> tcp_connect(const std::string& addr, unsigned port, Deadline d) {
    sockaddr_storage ss;
    socklen_t len;
    if (!make_addr(addr, port, ss, len) || addr.empty()) return Failure{"\"" + addr + "\" is not an IP address"};
    Fd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return Failure{std::string("socket: ") + std::strerror(errno)};
    int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) {
        if (errno != EINPROGRESS) return Failure{std::strerror(errno)};
        pollfd p{fd.get(), POLLOUT, 0};
        int r;
        do r = ::poll(&p, 1, ms_left(d));
        while (r < 0 && errno == EINTR);
        if (r == 0) return Failure{"connect timed out"};
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &soerr, &sl);
        if (soerr != 0) return Failure{std::strerror(soerr)};
    }
    return fd;
}

bool wait_readable(int fd, Deadline d) {
    pollfd p{fd, POLLIN, 0};
    int r;
    do r = ::poll(&p, 1, ms_left(d));
    while (r < 0 && errno == EINTR);
    return r > 0;
}

Result<void> send_all(int fd, std::string_view data, Deadline d) {
    std::size_t off = 0;
    while (off < data.size()) {
        const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
        if (n > 0) {
            off += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd p{fd, POLLOUT, 0};
            if (::poll(&p, 1, ms_left(d)) == 0) return Failure{"timed out sending"};
            continue;
        }
        return Failure{std::string("send: ") + std::strerror(errno)};
    }
    return {};
}

Result<std::string> recv_exact(int fd, std::size_t n, Deadline d) {
    std::string out;
    char buf[65536];
    while (out.size() < n) {
        const ssize_t r = ::recv(fd, buf, std::min(sizeof buf, n - out.size()), 0);
        if (r > 0) {
            out.append(buf, static_cast<std::size_t>(r));
            continue;
        }
        if (r == 0) return Failure{"connection closed"};
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!wait_readable(fd, d)) return Failure{"timed out"};
            continue;
        }
        return Failure{std::string("recv: ") + std::strerror(errno)};
    }
    return out;
}

// Sealing and opening frames is pure and throws gangway::Error on a frame
// that is too large, malformed or fails authentication: the Conn calls turn
// that into their failure, as they do the socket's.
Result<void> Conn::send(std::uint8_t type, const preflight::Kv& kv, Deadline d) {
    try {
        // A server that speaks first has no channel until the client's nonce came.
        while (!ch) {
            if (server_nonce.empty()) return Failure{"internal: a connection with no channel"};
            std::vector<Got> none;
            take_frames(none, 0);
            if (ch) break;
            if (auto got = read_some(d); !got) return got;
        }
        return send_all(fd.get(), ch->seal(type, preflight::encode_kv(kv)), d);
    } catch (const Error& e) {
        return Failure{e.what()};
    }
}

void Conn::take_frames(std::vector<Got>& out, std::size_t max) {
    if (!ch) {
        if (inbuf.size() < preflight::kNonceBytes) return;
        ch.emplace(key, server_nonce, std::string_view(inbuf).substr(0, preflight::kNonceBytes), preflight::Role::server);
        wipe(key);
        inbuf.erase(0, preflight::kNonceBytes);
    }
    while (out.size() < max && inbuf.size() >= 4) {
        const auto len = preflight::Channel::body_length(std::string_view(inbuf).substr(0, 4), max_body);
        if (inbuf.size() < 4 + len) break;
        auto f = ch->open(std::string_view(inbuf).substr(4, len));
        inbuf.erase(0, 4 + len);
        out.push_back({f.type, preflight::decode_kv(f.payload)});
    }
}

Result<Conn::Got> Conn::recv(Deadline d) {
    try {
        // Frames that pump() already buffered come first.
        for (;;) {
            std::vector<Got> one;
            take_frames(one, 1);
            if (!one.empty()) return std::move(one[0]);
            if (auto got = read_some(d); !got) return Failure{got.error()};
        }
    } catch (const Error& e) {
        return Failure{e.what()};
    }
}

Result<void> Conn::read_some(Deadline d) {
    char buf[65536];
    for (;;) {
        const ssize_t r = ::recv(fd.get(), buf, sizeof buf, 0);
        if (r > 0) {
            inbuf.append(buf, static_cast<std::size_t>(r));
            return {};
        }
        if (r == 0) return Failure{"connection closed"};
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return Failure{std::string("recv: ") + std::strerror(errno)};
        if (!wait_readable(fd.get(), d)) return Failure{"timed out"};
    }
}

Result<void> Conn::pump(std::vector<Got>& out) {
    char buf[65536];
    bool eof = false;
    for (;;) {
        const ssize_t r = ::recv(fd.get(), buf, sizeof buf, 0);
        if (r > 0) {
            inbuf.append(buf, static_cast<std::size_t>(r));
            // Never more than a whole frame and what starts the next: the rest waits in the socket.
            if (inbuf.size() > preflight::kNonceBytes + 4 + max_body) break;
            continue;
        }
        if (r == 0) eof = true;
        else if (errno == EINTR) continue;
        else if (errno != EAGAIN && errno != EWOULDBLOCK) return Failure{std::string("recv: ") + std::strerror(errno)};
        break;
    }
    try {
        take_frames(out, static_cast<std::size_t>(-1));
    } catch (const Error& e) {
        return Failure{e.what()};
    }
    if (eof) return Failure{"connection closed"};
    return {};
}

Result<Conn> connect_conn(const std::string& addr, unsigned port, const std::string& key, Deadline d) {
    auto fd = tcp_connect(addr, port, d);
    if (!fd) return Failure{fd.error()};
    auto mine = random_bytes(preflight::kNonceBytes);
    if (!mine) return Failure{mine.error()};
    if (auto sent = send_all(fd->get(), *mine, d); !sent) return Failure{sent.error()};
    auto nonce = recv_exact(fd->get(), preflight::kNonceBytes, d);
    if (!nonce) return Failure{"no greeting from " + addr + ":" + std::to_string(port) + " (" + nonce.error() + ")"};
    Conn c;
    c.fd = std::move(*fd);
    try {
        c.ch.emplace(key, *nonce, *mine, preflight::Role::client);
    } catch (const Error& e) {
        return Failure{e.what()};
    }
    return c;
}

Result<Conn> accept_conn(Fd fd, const std::string& key, Deadline d) {
    auto nonce = random_bytes(preflight::kNonceBytes);
    if (!nonce) return Failure{nonce.error()};
    if (auto sent = send_all(fd.get(), *nonce, d); !sent) return Failure{sent.error()};
    Conn c;
    c.fd = std::move(fd);
    c.key = key;
    c.server_nonce = std::move(*nonce);
    c.max_body = preflight::kMaxFirstFrame;
    return c;
}

}  // namespace gangway::sys
