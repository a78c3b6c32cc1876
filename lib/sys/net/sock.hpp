// TCP with deadlines for the preflight: every call takes a deadline and
// returns instead of blocking past it. Sockets are non-blocking throughout.
// The calls that can fail return a Result (lib/base/result.hpp) saying why,
// and never throw; those that answer a question (is something to accept,
// is the socket readable before the deadline) return the answer.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../../base/result.hpp"
#include "../node/fd.hpp"
#include "../node/file.hpp"  // random_bytes: the nonces
#include "../../preflight/wire.hpp"
#include "../run/deadline.hpp"  // Deadline, after_ms, ms_left

namespace gangway::sys {

// Listens on addr ("" = any address) and port (0 = any).
// Listens with TCP_DEFER_ACCEPT: a connection that sends nothing is accepted
// only after kDeferAcceptS seconds.
inline constexpr int kDeferAcceptS = 3;
Result<Fd> tcp_listen(const std::string& addr, unsigned port, int backlog);
unsigned local_port(int fd);  // 0 when unknown
// Non-blocking accept; an invalid Fd when nothing is pending.
Fd tcp_accept(int listen_fd);
// Connects before the deadline.
Result<Fd> tcp_connect(const std::string& addr, unsigned port, Deadline d);
Result<void> send_all(int fd, std::string_view data, Deadline d);
// Reads exactly n bytes; fails with "connection closed" on EOF, "timed out" at the deadline.
Result<std::string> recv_exact(int fd, std::size_t n, Deadline d);
// Whether fd has something to read (or has closed) before the deadline.
bool wait_readable(int fd, Deadline d);

// An authenticated connection: each side sends its nonce first (wire.hpp);
// then frames both ways. recv fails on EOF, timeout or a frame that fails
// authentication, is malformed or is longer than max_body (the caller drops
// the connection).
struct Conn {
    Fd fd;
    std::optional<preflight::Channel> ch;  // on the server, once the client's nonce arrived
    std::string inbuf;  // bytes read but not yet a whole frame (poll-driven servers)
    std::string key, server_nonce;  // on the server until the client's nonce arrived
    // The longest frame body taken: a server sets kMaxFirstFrame until the
    // peer's first frame authenticated it.
    std::size_t max_body = preflight::kMaxFrame;

    struct Got {
        std::uint8_t type;
        preflight::Kv kv;
    };
    // On a server before the client's nonce came, waits for it (until d) first.
    Result<void> send(std::uint8_t type, const preflight::Kv& kv, Deadline d);
    Result<Got> recv(Deadline d);
    // For a poll loop: read what is there; frames that completed are appended
    // to `out`, also when it then fails on EOF or a bad frame.
    Result<void> pump(std::vector<Got>& out);

private:
    // Takes the frames (and, first, the client's nonce) that inbuf holds whole;
    // throws gangway::Error on a bad one.
    void take_frames(std::vector<Got>& out, std::size_t max);
    // Appends what the socket has to inbuf, waiting for it until d.
    Result<void> read_some(Deadline d);
};

// Client side: connect, send a fresh nonce and take the server's.
Result<Conn> connect_conn(const std::string& addr, unsigned port, const std::string& key, Deadline d);
// Server side: send a fresh nonce on an accepted socket; the client's is read
// with its first frame, and until then frames are limited to kMaxFirstFrame.
Result<Conn> accept_conn(Fd fd, const std::string& key, Deadline d);

}  // namespace gangway::sys
