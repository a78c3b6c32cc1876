#include "catch_compat.hpp"

#include "../../lib/env/config.hpp"

using namespace gangway;
using W = std::vector<std::string>;

TEST_CASE("site defaults") {
    const Config c = parse_site_args({});
    CHECK(c.mode == Mode::Auto);
    CHECK(c.iface.empty());
    CHECK(c.ports.lo == 61000);
    CHECK(c.ports.hi == 65535);
    CHECK(c.batch);
}

TEST_CASE("every site key") {
    const Config c = parse_site_args(W{"mode=task", "iface=ib0", "addr_template=%h-ib", "port_range=20000-20099", "batch=no"});
    CHECK(c.mode == Mode::Task);
    CHECK(c.iface == "ib0");
    CHECK(c.addr_template == "%h-ib");
    CHECK(c.ports.lo == 20000);
    CHECK(c.ports.hi == 20099);
    CHECK_FALSE(c.batch);
}

TEST_CASE("bad site words name the key and what to do") {
    CHECK_THROWS_WITH(parse_site_args(W{"ifcae=ib0"}), Catch::Matchers::ContainsSubstring("unknown key \"ifcae\"") && Catch::Matchers::ContainsSubstring("known keys"));
    CHECK_THROWS_WITH(parse_site_args(W{"iface"}), Catch::Matchers::ContainsSubstring("not key=value"));
    CHECK_THROWS_WITH(parse_site_args(W{"=x"}), Catch::Matchers::ContainsSubstring("not key=value"));
    CHECK_THROWS_WITH(parse_site_args(W{"mode=fast"}), Catch::Matchers::ContainsSubstring("mode=fast is not a mode"));
    CHECK_THROWS_WITH(parse_site_args(W{"port_range=100-200"}), Catch::Matchers::ContainsSubstring("port_range=100-200"));
    CHECK_THROWS_WITH(parse_site_args(W{"port_range=62000-61000"}), Catch::Matchers::ContainsSubstring("LO-HI"));
    CHECK_THROWS_WITH(parse_site_args(W{"port_range=61000"}), Catch::Matchers::ContainsSubstring("LO-HI"));
    CHECK_THROWS_WITH(parse_site_args(W{"port_range=61000-70000"}), Catch::Matchers::ContainsSubstring("LO-HI"));
    // LO+3 must not wrap round: 4294967295+3 is 2 in 32 bits.
    CHECK_THROWS_WITH(parse_site_args(W{"port_range=4294967295-65535"}), Catch::Matchers::ContainsSubstring("LO-HI"));
    CHECK_THROWS_WITH(parse_site_args(W{"batch=maybe"}), Catch::Matchers::ContainsSubstring("yes/no"));
    CHECK_THROWS_WITH(parse_site_args(W{"iface=a/b"}), Catch::Matchers::ContainsSubstring("not an interface name"));
    CHECK_THROWS_WITH(parse_site_args(W{"iface=averyveryverylongname"}), Catch::Matchers::ContainsSubstring("not an interface name"));
    CHECK_THROWS_WITH(parse_site_args(W{"addr_template=ib-node"}), Catch::Matchers::ContainsSubstring("no %h"));
    CHECK_THROWS_WITH(parse_site_args(W{"addr_template=%h-%x"}), Catch::Matchers::ContainsSubstring("neither %h nor %%"));
    CHECK_THROWS_WITH(parse_site_args(W{"check_key=check.key"}), Catch::Matchers::ContainsSubstring("absolute path"));
}

TEST_CASE("check_key: the key file of the mark of a checked job") {
    CHECK(parse_site_args(W{"check=quick", "check_optout=no", "check_key=/etc/gangway/check.key"}).check_key ==
          "/etc/gangway/check.key");
    CHECK(parse_site_args(W{}).check_key.empty());
}

TEST_CASE("user choices override the site") {
    Config site = parse_site_args(W{"mode=node", "iface=ib0"});
    UserChoice u;
    CHECK(apply_user(site, u).mode == Mode::Node);
    u.mode = Mode::Off;
    u.iface = "eth1";
    const Config c = apply_user(site, u);
    CHECK(c.mode == Mode::Off);
    CHECK(c.iface == "eth1");
}

TEST_CASE("mode words") {
    CHECK(parse_mode("auto", "--gangway") == Mode::Auto);
    CHECK(parse_mode("on", "--gangway") == Mode::Auto);
    CHECK(parse_mode("node", "--gangway") == Mode::Node);
    CHECK(parse_mode("task", "--gangway") == Mode::Task);
    CHECK(parse_mode("off", "--gangway") == Mode::Off);
    CHECK_THROWS_WITH(parse_mode("nodes", "--gangway"), Catch::Matchers::StartsWith("--gangway=nodes is not a mode"));
    CHECK_THROWS_WITH(parse_mode("", "GANGWAY_MODE"), Catch::Matchers::StartsWith("GANGWAY_MODE= is not a mode"));
}

TEST_CASE("address templates") {
    CHECK(expand_addr_template("%h-ib", "gpu01") == "gpu01-ib");
    CHECK(expand_addr_template("ib-%h.cluster", "n1") == "ib-n1.cluster");
    CHECK(expand_addr_template("%h%%", "n1") == "n1%");
}

TEST_CASE("torch_hook: an absolute directory, else refused with what to give") {
    CHECK(parse_site_args({}).torch_hook.empty());
    CHECK(parse_site_args(W{"torch_hook=/usr/lib/gangway/torch-hook"}).torch_hook == "/usr/lib/gangway/torch-hook");
    for (const char* bad : {"torch_hook=", "torch_hook=torch-hook", "torch_hook=/a:/b"}) {
        INFO(bad);
        CHECK_THROWS_WITH(parse_site_args(W{bad}), Catch::Matchers::ContainsSubstring("not an absolute directory") &&
                                                       Catch::Matchers::ContainsSubstring("torch_hook=/usr/lib/x86_64-linux-gnu/gangway"));
    }
}

TEST_CASE("node_addrs_max: a node count whose NODE_ADDRS stays below 100 KiB") {
    CHECK(parse_site_args({}).node_addrs_max == 64);
    CHECK(parse_site_args(W{"node_addrs_max=0"}).node_addrs_max == 0);
    CHECK(parse_site_args(W{"node_addrs_max=512"}).node_addrs_max == 512);
    // The bound: IPv6 text at its longest, 39 characters and a comma per node, within 100 KiB.
    CHECK(kNodeAddrsMaxLimit * kAddrTextMax <= 100 * 1024);
    CHECK((kNodeAddrsMaxLimit + 1) * kAddrTextMax > 100 * 1024);
    CHECK(parse_site_args(W{"node_addrs_max=2560"}).node_addrs_max == 2560);
    CHECK_THROWS_WITH(parse_site_args(W{"node_addrs_max=2561"}),
                      Catch::Matchers::ContainsSubstring("node_addrs_max=2561 lets NODE_ADDRS reach 102440 bytes") &&
                          Catch::Matchers::ContainsSubstring("128 KiB") && Catch::Matchers::ContainsSubstring("at most 2560"));
    CHECK_THROWS_WITH(parse_site_args(W{"node_addrs_max=11000"}), Catch::Matchers::ContainsSubstring("reach 440000 bytes"));
    CHECK_THROWS_WITH(parse_site_args(W{"node_addrs_max=4294967295"}), Catch::Matchers::ContainsSubstring("at most 2560"));
    for (const char* bad : {"node_addrs_max=", "node_addrs_max=-1", "node_addrs_max=lots", "node_addrs_max=99999999999"}) {
        INFO(bad);
        CHECK_THROWS_WITH(parse_site_args(W{bad}), Catch::Matchers::ContainsSubstring("is not a node count") &&
                                                       Catch::Matchers::ContainsSubstring("node_addrs_max=64"));
    }
    // A message is one line.
    try {
        parse_site_args(W{"node_addrs_max=9000"});
    } catch (const std::exception& e) {
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
}
