#include "catch_compat.hpp"

#include <map>

#include "../../lib/base/error.hpp"
#include "../../lib/env/data_addr.hpp"

using namespace gangway;

namespace {

IpAddr ip(const char* s) { return *parse_ip(s); }

// The test cluster's layout: names resolve to the management network (198.18),
// "-data" names to the data network (198.19).
Resolver fixture_dns() {
    static const std::map<std::string, std::vector<IpAddr>> table = {
        {"node08", {ip("198.18.0.11")}},      {"node09", {ip("198.18.0.12")}},
        {"node08-data", {ip("198.19.0.11")}}, {"node09-data", {ip("198.19.0.12")}},
        {"dual08", {ip("198.18.0.11"), ip("198.19.0.11")}}, {"dual09", {ip("198.18.0.12"), ip("198.19.0.12")}},
    };
    return [](const std::string& n) {
        auto it = table.find(n);
        return it == table.end() ? std::vector<IpAddr>{} : it->second;
    };
}

const std::vector<IfaceAddr> eth1_on_node08 = {{ip("198.19.0.11"), 24}};

}  // namespace

TEST_CASE("with no iface the node name's first address is used") {
    const NodeAddrs a = find_node_addrs(Config{}, {"node08", "node09"}, 1, {}, fixture_dns());
    CHECK(a.every == std::vector<IpAddr>{ip("198.18.0.11"), ip("198.18.0.12")});
    CHECK(a.primary == ip("198.18.0.11"));
    CHECK(a.self == ip("198.18.0.12"));
}

TEST_CASE("the address inside the data interface's subnet wins") {
    Config c;
    c.iface = "eth1";
    const NodeAddrs a = find_node_addrs(c, {"dual08", "dual09"}, 0, eth1_on_node08, fixture_dns());
    CHECK(a.every == std::vector<IpAddr>{ip("198.19.0.11"), ip("198.19.0.12")});
}

TEST_CASE("a template names the data address") {
    Config c;
    c.iface = "eth1";
    c.addr_template = "%h-data";
    const NodeAddrs a = find_node_addrs(c, {"node08", "node09"}, 0, eth1_on_node08, fixture_dns());
    CHECK(a.every == std::vector<IpAddr>{ip("198.19.0.11"), ip("198.19.0.12")});
}

TEST_CASE("management-only names are refused with advice, never used") {
    Config c;
    c.iface = "eth1";
    CHECK_THROWS_WITH(find_node_addrs(c, {"node08", "node09"}, 0, eth1_on_node08, fixture_dns()),
                      Catch::Matchers::ContainsSubstring("node08 resolves to 198.18.0.11, none on the network of eth1") &&
                          Catch::Matchers::ContainsSubstring("addr_template"));
}

TEST_CASE("missing interface, unresolvable names and foreign self address") {
    Config c;
    c.iface = "eth1";
    CHECK_THROWS_WITH(find_node_addrs(c, {"node08"}, 0, {}, fixture_dns()), Catch::Matchers::ContainsSubstring("eth1 has no IP address"));
    c.addr_template = "%h-ib";
    CHECK_THROWS_WITH(find_node_addrs(c, {"node08"}, 0, eth1_on_node08, fixture_dns()),
                      Catch::Matchers::ContainsSubstring("cannot resolve node08-ib"));
    c.addr_template = "%h-data";
    // node09's data name resolves, but not to an address this node (node08's eth1) holds.
    CHECK_THROWS_WITH(find_node_addrs(c, {"node08", "node09"}, 1, eth1_on_node08, fixture_dns()),
                      Catch::Matchers::ContainsSubstring("node09's data address 198.19.0.12 is not an address of eth1"));
}

namespace {

// Synthetic nodes n0000..; n<i> resolves to 10.<i/256>.<i%256>.1 on 10.0.0.0/8.
// Counts every lookup and remembers which names it was asked for.
struct CountingDns {
    unsigned lookups = 0;
    std::vector<std::string> asked;
    Resolver resolver() {
        return [this](const std::string& name) {
            ++lookups;
            asked.push_back(name);
            const unsigned i = static_cast<unsigned>(std::stoul(name.substr(1, 4)));
            return std::vector<IpAddr>{ip(("10." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ".1").c_str())};
        };
    }
};

std::vector<std::string> names(unsigned n) {
    std::vector<std::string> v;
    for (unsigned i = 0; i < n; ++i) {
        std::string s = std::to_string(i);
        v.push_back("n" + std::string(4 - s.size(), '0') + s);
    }
    return v;
}

}  // namespace

TEST_CASE("at or below node_addrs_max every node is resolved, once, for NODE_ADDRS") {
    Config c;
    c.node_addrs_max = 64;
    for (unsigned n : {1u, 2u, 63u, 64u}) {
        CountingDns dns;
        const NodeAddrs a = find_node_addrs(c, names(n), n - 1, {}, dns.resolver());
        CHECK(dns.lookups == n);
        REQUIRE(a.every.size() == n);
        CHECK(a.primary == ip("10.0.0.1"));
        CHECK(a.self == a.every.back());
    }
}

TEST_CASE("above node_addrs_max a node resolves node 0 and itself only: 2 lookups, 1 on node 0") {
    Config c;
    c.iface = "ib0";
    c.node_addrs_max = 64;
    const std::vector<IfaceAddr> mine = {{ip("10.7.208.1"), 8}};  // node 2000's address on ib0
    CountingDns dns;
    const NodeAddrs a = find_node_addrs(c, names(10000), 2000, mine, dns.resolver());
    CHECK(dns.lookups == 2);
    CHECK(dns.asked == std::vector<std::string>{"n0000", "n2000"});
    CHECK(a.primary == ip("10.0.0.1"));
    CHECK(a.self == ip("10.7.208.1"));
    CHECK(a.every.empty());  // NODE_ADDRS is not set

    CountingDns dns0;
    const NodeAddrs a0 = find_node_addrs(Config{}, names(65), 0, {}, dns0.resolver());
    CHECK(dns0.lookups == 1);
    CHECK(a0.primary == a0.self);
    CHECK(a0.every.empty());

    c.node_addrs_max = 0;  // never
    CountingDns dns2;
    CHECK(find_node_addrs(c, names(2), 1, {{ip("10.0.1.1"), 8}}, dns2.resolver()).every.empty());
    CHECK(dns2.lookups == 2);
}

TEST_CASE("above node_addrs_max the same checks and messages hold") {
    Config c;
    c.iface = "eth1";
    c.node_addrs_max = 1;
    // Node 0's name is resolved on every node: a management-only name is refused with the advice.
    CHECK_THROWS_WITH(find_node_addrs(c, {"node08", "node09"}, 1, eth1_on_node08, fixture_dns()),
                      Catch::Matchers::ContainsSubstring("node08 resolves to 198.18.0.11, none on the network of eth1"));
    c.addr_template = "%h-data";
    CHECK_THROWS_WITH(find_node_addrs(c, {"node08", "node09"}, 1, eth1_on_node08, fixture_dns()),
                      Catch::Matchers::ContainsSubstring("node09's data address 198.19.0.12 is not an address of eth1"));
    CHECK_THROWS_WITH(find_node_addrs(c, {"node08", "nodeXX"}, 1, eth1_on_node08, fixture_dns()),
                      Catch::Matchers::ContainsSubstring("cannot resolve nodeXX-data (from addr_template=%h-data)"));
}

TEST_CASE("resolve_data_addrs resolves the chosen nodes, in the order asked") {
    CountingDns dns;
    const auto got = resolve_data_addrs(Config{}, names(300), {299, 0, 256}, {}, dns.resolver());
    CHECK(dns.lookups == 3);
    CHECK(got == std::vector<IpAddr>{ip("10.1.43.1"), ip("10.0.0.1"), ip("10.1.0.1")});
    CHECK(resolve_data_addrs(Config{}, names(3), {}, {}, dns.resolver()).empty());
}

TEST_CASE("a node index outside the step is an error, not a crash") {
    CHECK_THROWS_AS(find_node_addrs(Config{}, {"node08"}, 1, {}, fixture_dns()), Error);
    CHECK_THROWS_AS(find_node_addrs(Config{}, {}, 0, {}, fixture_dns()), Error);
    CHECK_THROWS_AS(resolve_data_addrs(Config{}, {"node08"}, {1}, {}, fixture_dns()), Error);
}
