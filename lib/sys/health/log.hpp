// The node check's own lines: to stderr for whoever runs it by hand, and to
// syslog (LOG_DAEMON, ident gangway-node-check) where admins look, since
// SLURM discards a health check's output.
#pragma once
#include <string>

namespace gangway::sys {

enum class LogLevel { info, warning, error };

// "gangway node-check: LINE" on stderr; LINE in syslog. One line: a newline
// in it becomes a blank.
void tell(LogLevel level, const std::string& line);

}  // namespace gangway::sys
