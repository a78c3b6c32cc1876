#include "addrs.hpp"

#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/utsname.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace gangway::sys {
namespace {

IpAddr from_sockaddr(const sockaddr* sa) {
    IpAddr a;
    if (sa->sa_family == AF_INET) {
        std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, 4);
    } else {
        a.v6 = true;
        std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, 16);
    }
    return a;
}

unsigned prefix_of(const sockaddr* mask) {
    if (!mask) return 0;
    const auto* b = mask->sa_family == AF_INET
                        ? reinterpret_cast<const unsigned char*>(&reinterpret_cast<const sockaddr_in*>(mask)->sin_addr)
                        : reinterpret_cast<const unsigned char*>(&reinterpret_cast<const sockaddr_in6*>(mask)->sin6_addr);
    const int n = mask->sa_family == AF_INET ? 4 : 16;
    unsigned bits = 0;
    for (int i = 0; i < n; ++i) bits += std::popcount(static_cast<unsigned>(b[i]));
    return bits;
}

}  // namespace

std::vector<IpAddr> resolve_host(const std::string& name) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    std::vector<IpAddr> v4, v6;
    if (getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0) return {};
    for (addrinfo* p = res; p; p = p->ai_next) {
        if (p->ai_family != AF_INET && p->ai_family != AF_INET6) continue;
        IpAddr a = from_sockaddr(p->ai_addr);
        auto& dst = a.v6 ? v6 : v4;
        if (std::find(dst.begin(), dst.end(), a) == dst.end()) dst.push_back(a);
    }
    freeaddrinfo(res);
    v4.insert(v4.end(), v6.begin(), v6.end());
    return v4;
}

std::vector<IfaceAddr> iface_addrs(const std::string& iface) {
    ifaddrs* list = nullptr;
    std::vector<IfaceAddr> v4, v6;
    if (getifaddrs(&list) != 0) return {};
    for (ifaddrs* p = list; p; p = p->ifa_next) {
        if (!p->ifa_addr || iface != p->ifa_name) continue;
        if (p->ifa_addr->sa_family != AF_INET && p->ifa_addr->sa_family != AF_INET6) continue;
        IfaceAddr a{from_sockaddr(p->ifa_addr), prefix_of(p->ifa_netmask)};
        // Link-local IPv6 needs a scope id that no peer knows: never a data address.
        if (a.addr.v6 && a.addr.bytes[0] == 0xfe && (a.addr.bytes[1] & 0xc0) == 0x80) continue;
        (a.addr.v6 ? v6 : v4).push_back(a);
    }
    freeifaddrs(list);
    v4.insert(v4.end(), v6.begin(), v6.end());
    return v4;
}

std::string short_host_name() {
    struct utsname u{};
    if (::uname(&u) != 0) return {};
    const std::string_view n = u.nodename;
    return std::string(n.substr(0, n.find('.')));
}

}  // namespace gangway::sys
