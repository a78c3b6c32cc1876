#include "reject_log.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <syslog.h>

#include <cstdio>

namespace gangway::sys {

std::string peer_address(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "an unknown peer";
    char host[INET6_ADDRSTRLEN] = "";
    if (ss.ss_family == AF_INET) {
        const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
        ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        return std::string(host) + ":" + std::to_string(ntohs(a->sin_port));
    }
    if (ss.ss_family == AF_INET6) {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
        ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        return "[" + std::string(host) + "]:" + std::to_string(ntohs(a->sin6_port));
    }
    return "an unknown peer";
}

const char* to_string(Listener l) {
    switch (l) {
        case Listener::rendezvous: return "rendezvous";
        case Listener::data: return "data port";
    }
    return "?";
}

void RejectLog::say(const std::string& line) {
    std::fprintf(stderr, "gangway: %s\n", line.c_str());
    ::syslog(LOG_AUTH | LOG_WARNING, "%s", line.c_str());
}

void RejectLog::tell_unsaid() {
    if (unsaid_ == 0) return;
    say(std::to_string(unsaid_) + " more connection(s) to the " + to_string(where_) + " rejected, not shown one by one");
    unsaid_ = 0;
}

void RejectLog::note(int fd, std::string_view why) {
    const auto peer = peer_address(fd);
    const std::lock_guard lock(mu_);
    ++total_;
    const auto now = std::chrono::steady_clock::now();
    if (now - window_start_ >= kWindow) {
        tell_unsaid();
        window_start_ = now;
        in_window_ = 0;
    }
    if (in_window_ >= kBurst) {
        ++unsaid_;
        return;
    }
    ++in_window_;
    say("rejected a connection from " + peer + " to the " + to_string(where_) + ": " + std::string(why));
}

unsigned RejectLog::total() const {
    const std::lock_guard lock(mu_);
    return total_;
}

RejectLog::~RejectLog() {
    const std::lock_guard lock(mu_);
    tell_unsaid();
}

}  // namespace gangway::sys
