// One rtnetlink dump (rtnetlink.hpp).
#include "rtnetlink.hpp"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "../node/fd.hpp"

namespace gangway::sys {

Result<void> rtnetlink_dump(std::uint16_t type, std::string_view request, std::string_view what, std::size_t max_messages,
                            const std::function<void(const nlmsghdr*)>& on) {
    const std::string list(what);
    Fd s(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (!s) return Failure{std::string("cannot open a netlink socket: ") + std::strerror(errno)};
    const timeval tv{2, 0};
    ::setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::vector<char> req(NLMSG_LENGTH(request.size()), 0);
    auto* h = reinterpret_cast<nlmsghdr*>(req.data());
    h->nlmsg_len = std::uint32_t(req.size());
    h->nlmsg_type = type;
    h->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    h->nlmsg_seq = 1;
    std::memcpy(NLMSG_DATA(h), request.data(), request.size());
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(s.get(), req.data(), req.size(), 0, reinterpret_cast<const sockaddr*>(&kernel), sizeof kernel) < 0)
        return Failure{"cannot ask rtnetlink for " + list + ": " + std::strerror(errno)};
    std::vector<char> buf(std::size_t(64) << 10);  // new's alignment: a nlmsghdr's
    std::size_t seen = 0;
    for (;;) {
        const ssize_t got = ::recv(s.get(), buf.data(), buf.size(), 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return Failure{"rtnetlink's list of " + list + ": " + std::strerror(errno)};
        }
        if (got == 0) return Failure{"rtnetlink's list of " + list + " ended early"};
        int len = static_cast<int>(got);
        for (const auto* m = reinterpret_cast<const nlmsghdr*>(buf.data()); NLMSG_OK(m, len); m = NLMSG_NEXT(m, len)) {
            if (m->nlmsg_seq != 1) continue;
            if (m->nlmsg_type == NLMSG_DONE) return {};
            if (m->nlmsg_type == NLMSG_ERROR) {
                const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(m));
                return Failure{"rtnetlink refused the list of " + list + ": " + std::strerror(-e->error)};
            }
            if (++seen > max_messages) return Failure{"more than " + std::to_string(max_messages) + " " + list};
            on(m);
        }
    }
}

std::vector<std::string> addressed_interfaces() {
    std::vector<std::string> out;
    ifaddrs* all = nullptr;
    if (::getifaddrs(&all) != 0) return out;
    for (const ifaddrs* a = all; a; a = a->ifa_next) {
        if (!a->ifa_name || !a->ifa_addr) continue;
        const int family = a->ifa_addr->sa_family;
        if (family == AF_INET ||
            (family == AF_INET6 && !IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr)))
            out.emplace_back(a->ifa_name);
    }
    ::freeifaddrs(all);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace gangway::sys
