// The TCP rendezvous of a job step's tasks at the coordinator (node 0's first
// task): authenticated hellos in, then frames both ways. Used by `gangway
// run`/`check` and by bench/rendezvous_bench.
#pragma once
#include <string>
#include <vector>

#include "accept_guard.hpp"
#include "reject_log.hpp"
#include "sock.hpp"

namespace gangway::sys {

struct Member {
    unsigned rank = 0, node_rank = 0, local = 0;
    bool speaker = false;
    preflight::Kv hello;
    Conn conn;
    bool alive = true;
    std::string lost_reason;
};

class Coordinator {
public:
    // Connections waiting for their hello at once: at most this, and an eighth
    // of the descriptor limit (waiting_cap). Each holds at most a hello's worth
    // (kMaxFirstFrame), so all of them at most 256 x 64 KiB = 16 MiB.
    static constexpr std::size_t kMaxPending = 256;

    Coordinator(std::string key, Fd listener);
    // Accepts and reads hellos until `expected` distinct ranks checked in or the
    // deadline. A connection that fails authentication, sends garbage, a first
    // frame over kMaxFirstFrame or no hello in 5 s is dropped (counted in
    // rejected() and logged, RejectLog), never trusted; so is the oldest idle
    // one when kMaxPending wait, and one accepted with the descriptors nearly
    // exhausted (AcceptGuard). Fails only when poll() itself does; the
    // members gathered so far stay.
    Result<void> gather(unsigned expected, Deadline d);
    std::vector<Member>& members() { return members_; }
    unsigned rejected() const { return rejects_.total(); }
    // Sends to one member; on failure marks it lost.
    bool send(Member& m, std::uint8_t type, const preflight::Kv& kv, Deadline d);
    struct Event {
        std::size_t member;
        std::uint8_t type = 0;
        preflight::Kv kv;
        bool lost = false;  // the connection closed or misbehaved: the task is gone
    };
    // Waits for frames (or lost connections) from live members until the deadline
    // or until at least one event arrived.
    std::vector<Event> poll(Deadline d);
    void close_listener() { listener_.reset(); }

private:
    std::string key_;
    Fd listener_;
    std::vector<Member> members_;
    RejectLog rejects_{Listener::rendezvous};
    AcceptGuard guard_;
};

// A task joins: tries each address in turn (data network first, then the
// management one) until the deadline, retrying while the coordinator is not yet
// listening, and sends its hello. `used` tells which address worked; the
// failure names each address's last error.
Result<Conn> join(const std::vector<std::string>& addrs, unsigned port, const std::string& key, const preflight::Kv& hello,
                  Deadline d, std::string* used = nullptr);

}  // namespace gangway::sys
