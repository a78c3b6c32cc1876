#include "catch_compat.hpp"

#include <map>

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
    CHECK(a.nodes == std::vector<IpAddr>{ip("198.18.0.11"), ip("198.18.0.12")});
    CHECK(a.self == 1);
}

TEST_CASE("the address inside the data interface's subnet wins") {
    Config c;
    c.iface = "eth1";
    const NodeAddrs a = find_node_addrs(c, {"dual08", "dual09"}, 0, eth1_on_node08, fixture_dns());
    CHECK(a.nodes == std::vector<IpAddr>{ip("198.19.0.11"), ip("198.19.0.12")});
}

TEST_CASE("a template names the data address") {
    Config c;
    c.iface = "eth1";
    c.addr_template = "%h-data";
    const NodeAddrs a = find_node_addrs(c, {"node08", "node09"}, 0, eth1_on_node08, fixture_dns());
    CHECK(a.nodes == std::vector<IpAddr>{ip("198.19.0.11"), ip("198.19.0.12")});
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
