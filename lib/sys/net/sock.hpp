// TCP with deadlines for the preflight: every call takes a deadline and
// returns instead of blocking past it. Sockets are non-blocking throughout.
#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../../preflight/wire.hpp"

namespace gangway::sys {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline Deadline after_ms(long ms) { return Clock::now() + std::chrono::milliseconds(ms); }
int ms_left(Deadline d);  // >= 0
double seconds_since(Clock::time_point t);

class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& o) noexcept : fd_(o.release()) {}
    Fd& operator=(Fd&& o) noexcept;
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd();
    int get() const { return fd_; }
    int release();
    explicit operator bool() const { return fd_ >= 0; }
    void reset();

private:
    int fd_ = -1;
};

// Listens on addr ("" = any address) and port (0 = any); throws gangway::Error.
Fd tcp_listen(const std::string& addr, unsigned port, int backlog);
unsigned local_port(int fd);
// Non-blocking accept; an invalid Fd when nothing is pending.
Fd tcp_accept(int listen_fd);
// Connects before the deadline; on failure an invalid Fd and `err` says why.
Fd tcp_connect(const std::string& addr, unsigned port, Deadline d, std::string& err);
bool send_all(int fd, std::string_view data, Deadline d, std::string& err);
// Reads exactly n bytes; false with err "connection closed" on EOF, "timed out" at the deadline.
bool recv_exact(int fd, std::size_t n, std::string& out, Deadline d, std::string& err);
bool wait_readable(int fd, Deadline d);
std::string random_bytes(std::size_t n);

// An authenticated connection: the server sends its nonce first; then frames
// both ways. recv returns nullopt with err set on EOF, timeout or a frame
// that fails authentication or is malformed (the caller drops the connection).
struct Conn {
    Fd fd;
    std::optional<preflight::Channel> ch;
    std::string inbuf;  // bytes read but not yet a whole frame (poll-driven servers)

    bool send(std::uint8_t type, const preflight::Kv& kv, Deadline d, std::string& err);
    std::optional<preflight::Kv> recv(std::uint8_t& type, Deadline d, std::string& err);
    // For a poll loop: read what is there; frames that completed are appended to `out`.
    // false on EOF or a bad frame (err says which).
    struct Got {
        std::uint8_t type;
        preflight::Kv kv;
    };
    bool pump(std::vector<Got>& out, std::string& err);
};

// Client side: connect and take the server's nonce.
std::optional<Conn> connect_conn(const std::string& addr, unsigned port, const std::string& key, Deadline d, std::string& err);
// Server side: send a fresh nonce on an accepted socket.
std::optional<Conn> accept_conn(Fd fd, const std::string& key, Deadline d, std::string& err);

}  // namespace gangway::sys
