// IP addresses as plain values: parse, print, and test subnet membership, for
// IPv4 and IPv6 alike.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gangway {

struct IpAddr {
    bool v6 = false;
    std::array<std::uint8_t, 16> bytes{};  // IPv4 uses the first 4
    bool operator==(const IpAddr&) const = default;
};

struct IfaceAddr {
    IpAddr addr;
    unsigned prefix_len = 0;
};

// O(n): one copy of the text (inet_pton wants a C string).
std::optional<IpAddr> parse_ip(std::string_view text);
std::string to_string(const IpAddr& a);
// "host:port", with IPv6 in brackets as URLs and torchrun endpoints need.
std::string host_port(const IpAddr& a, unsigned port);
bool in_subnet(const IpAddr& a, const IfaceAddr& net);

}  // namespace gangway
