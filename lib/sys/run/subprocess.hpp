// Running a command with a deadline: its output (stdout and stderr together,
// up to a limit) and exit status, or why not. The command runs in a process
// group of its own, stopped whole at the deadline, so that a client that hangs
// (scontrol before slurmctld answers) never holds up its caller. This is the
// one way gangway runs another program and waits for it (scontrol, ldconfig,
// doctor's version probes): argv, never a shell.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "../../base/result.hpp"

namespace gangway::sys {

struct CommandOutput {
    int status = -1;     // the exit status; -1 when it ended by a signal
    std::string output;  // stdout and stderr, at most max_bytes
};

// argv[0] is looked up in PATH when it has no '/'. Stdin is /dev/null.
// Output past `max_bytes` is read and dropped, so that a chatty command never
// blocks on a full pipe.
// Failure: it could not start (named, with errno's words), or it did not end
// within `timeout_s` seconds. Then its process group gets SIGTERM, so that a
// client can let go cleanly (scontrol closes its connection), and SIGKILL
// `grace_s` seconds later if the command is still there; the call returns
// within about timeout_s + grace_s.
Result<CommandOutput> run_command(const std::vector<std::string>& argv, double timeout_s, std::size_t max_bytes = 64 * 1024,
                                  double grace_s = 1);

}  // namespace gangway::sys
