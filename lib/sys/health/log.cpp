#include "log.hpp"

#include <syslog.h>

#include <cstdio>
#include <mutex>

namespace gangway::sys {

void tell(LogLevel level, const std::string& line) {
    static std::once_flag once;
    std::call_once(once, [] { ::openlog("gangway-node-check", LOG_PID, LOG_DAEMON); });
    std::string l = line;
    for (auto& c : l)
        if (c == '\n' || c == '\r') c = ' ';
    std::fprintf(stderr, "gangway node-check: %s\n", l.c_str());
    const int prio = level == LogLevel::error ? LOG_ERR : level == LogLevel::warning ? LOG_WARNING : LOG_INFO;
    ::syslog(prio, "%s", l.c_str());
}

}  // namespace gangway::sys
