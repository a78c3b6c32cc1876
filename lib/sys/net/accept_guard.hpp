// Accepting under a descriptor limit (issue 15, item 7): a flood of
// connections must not take the descriptors a server needs for its real peers
// and its own work (outgoing probes, the report). A connection that would
// leave fewer than kReserve descriptors free is taken off the queue and closed
// at once, and told; when the limit is already reached (EMFILE), a spare
// descriptor is given up for an instant to do the same, so the listener does
// not stay readable and the poll loop does not spin.
#pragma once
#include <cstddef>

#include "reject_log.hpp"
#include "sock.hpp"

namespace gangway::sys {

class AcceptGuard {
public:
    static constexpr int kReserve = 16;  // descriptors kept free for this process's own use

    AcceptGuard();  // opens the spare descriptor (/dev/null)
    struct Accepted {
        Fd fd;               // a connection to serve
        bool again = false;  // none to serve, but another may be pending
    };
    // One pending connection; neither when nothing is pending.
    Accepted accept(int listen_fd, RejectLog& log);

private:
    Fd spare_;
};

// RLIMIT_NOFILE's soft limit (1024 when unknown).
long descriptor_limit();
// How many connections may wait for their first frame at once: an eighth of
// the descriptor limit, between 4 and `most`.
std::size_t waiting_cap(std::size_t most);

}  // namespace gangway::sys
