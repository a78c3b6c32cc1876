// The node check's state file (health::State) on disk: root's, in a
// directory only its owner can write, replaced whole through a private name
// (sys::write_file_atomic: O_CREAT|O_EXCL|O_NOFOLLOW, then rename), so a run
// killed half-way leaves the previous file, and no link planted in its place
// is ever written through.
#pragma once
#include <string>

#include "../../base/result.hpp"
#include "../../health/state.hpp"

namespace gangway::sys {

// A missing file is a first run: an empty State. Failure: the file cannot be
// read (a link, not ours, too large) or is not a state file.
Result<health::State> load_state(const std::string& path);

// Creates the directory (0700) when missing; refuses one that others can
// write or that is not this user's.
Result<void> save_state(const std::string& path, const health::State& s);

// One run at a time per state file: HealthCheckProgram, a Prolog and an
// Epilog may start the check together, and each would write over the other's
// counters and failures. An flock on PATH.lock (created 0600, never through a
// link), held until destroyed.
class StateLock {
public:
    StateLock() = default;
    StateLock(StateLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    StateLock& operator=(StateLock&&) = delete;
    StateLock(const StateLock&) = delete;
    ~StateLock();

private:
    friend Result<StateLock> lock_state(const std::string& path, double wait_s);
    int fd_ = -1;
};
// Waits up to `wait_s` for another run to end; Failure says who holds it or why not.
Result<StateLock> lock_state(const std::string& path, double wait_s);

}  // namespace gangway::sys
