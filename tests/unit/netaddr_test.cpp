#include "catch_compat.hpp"

#include "../../lib/env/netaddr.hpp"

using namespace gangway;

TEST_CASE("parse and print IPv4 and IPv6") {
    CHECK(to_string(*parse_ip("198.19.0.11")) == "198.19.0.11");
    CHECK(to_string(*parse_ip("fd00::0001")) == "fd00::1");
    CHECK_FALSE(parse_ip("node08").has_value());
    CHECK_FALSE(parse_ip("1.2.3.400").has_value());
}

TEST_CASE("host:port brackets IPv6 only") {
    CHECK(host_port(*parse_ip("198.19.0.11"), 61000) == "198.19.0.11:61000");
    CHECK(host_port(*parse_ip("fd00::1"), 61000) == "[fd00::1]:61000");
}

TEST_CASE("subnet membership") {
    const IfaceAddr net{*parse_ip("198.19.0.1"), 24};
    CHECK(in_subnet(*parse_ip("198.19.0.200"), net));
    CHECK_FALSE(in_subnet(*parse_ip("198.18.0.200"), net));
    CHECK_FALSE(in_subnet(*parse_ip("fd00::1"), net));
    const IfaceAddr n6{*parse_ip("fd00:1::5"), 64};
    CHECK(in_subnet(*parse_ip("fd00:1::9"), n6));
    CHECK_FALSE(in_subnet(*parse_ip("fd00:2::9"), n6));
    CHECK(in_subnet(*parse_ip("10.1.2.3"), IfaceAddr{*parse_ip("10.9.9.9"), 8}));
    CHECK_FALSE(in_subnet(*parse_ip("10.1.2.3"), IfaceAddr{*parse_ip("10.1.2.4"), 32}));
}
