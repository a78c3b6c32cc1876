#include "netaddr.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace gangway {

std::optional<IpAddr> parse_ip(std::string_view text) {
    const std::string s(text);
    IpAddr a;
    if (inet_pton(AF_INET, s.c_str(), a.bytes.data()) == 1) return a;
    a.v6 = true;
    if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) == 1) return a;
    return std::nullopt;
}

std::string to_string(const IpAddr& a) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(a.v6 ? AF_INET6 : AF_INET, a.bytes.data(), buf, sizeof buf);
    return buf;
}

std::string host_port(const IpAddr& a, unsigned port) {
    return a.v6 ? "[" + to_string(a) + "]:" + std::to_string(port) : to_string(a) + ":" + std::to_string(port);
}

bool in_subnet(const IpAddr& a, const IfaceAddr& net) {
    if (a.v6 != net.addr.v6) return false;
    const unsigned bits = a.v6 ? 128 : 32;
    const unsigned len = net.prefix_len > bits ? bits : net.prefix_len;
    for (unsigned i = 0; i < len; ++i) {
        const unsigned byte = i / 8, mask = 0x80u >> (i % 8);
        if ((a.bytes[byte] & mask) != (net.addr.bytes[byte] & mask)) return false;
    }
    return true;
}

}  // namespace gangway
