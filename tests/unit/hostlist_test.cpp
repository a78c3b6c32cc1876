#include "catch_compat.hpp"

#include "../../lib/base/error.hpp"
#include "../../lib/env/hostlist.hpp"
#include "cost_meter.hpp"

using gangway::expand_hostlist;
using V = std::vector<std::string>;

TEST_CASE("plain names and lists keep their order and duplicates") {
    CHECK(expand_hostlist("login1") == V{"login1"});
    CHECK(expand_hostlist("b,a,b") == V{"b", "a", "b"});
    CHECK(expand_hostlist("a b\tc\nd") == V{"a", "b", "c", "d"});
    CHECK(expand_hostlist("").empty());
}

TEST_CASE("zero padding comes from the low bound, as in SLURM") {
    CHECK(expand_hostlist("node[08-11]") == V{"node08", "node09", "node10", "node11"});
    CHECK(expand_hostlist("n[8-10]") == V{"n8", "n9", "n10"});
    CHECK(expand_hostlist("n[098-101]") == V{"n098", "n099", "n100", "n101"});
    CHECK(expand_hostlist("n[01-100]").size() == 100);
    CHECK(expand_hostlist("n[01-100]").back() == "n100");
}

TEST_CASE("several items in brackets, and commas inside brackets are not separators") {
    CHECK(expand_hostlist("gpu-[001-002,010],login1") == V{"gpu-001", "gpu-002", "gpu-010", "login1"});
    CHECK(expand_hostlist("a[1,3],b[2]") == V{"a1", "a3", "b2"});
}

TEST_CASE("suffixes and several bracket groups") {
    CHECK(expand_hostlist("node[1-2]-ib") == V{"node1-ib", "node2-ib"});
    CHECK(expand_hostlist("rack[1-2]-n[01-02]") == V{"rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"});
}

TEST_CASE("malformed expressions are refused with the reason") {
    CHECK_THROWS_WITH(expand_hostlist("node[1-3"), Catch::Matchers::ContainsSubstring("never closed"));
    CHECK_THROWS_WITH(expand_hostlist("node1-3]"), Catch::Matchers::ContainsSubstring("without '['"));
    CHECK_THROWS_WITH(expand_hostlist("node[3-1]"), Catch::Matchers::ContainsSubstring("backwards"));
    CHECK_THROWS_WITH(expand_hostlist("node[a-b]"), Catch::Matchers::ContainsSubstring("not a number"));
    CHECK_THROWS_WITH(expand_hostlist("node[]"), Catch::Matchers::ContainsSubstring("empty"));
    CHECK_THROWS_WITH(expand_hostlist("node[1,,2]"), Catch::Matchers::ContainsSubstring("empty item"));
    CHECK_THROWS_WITH(expand_hostlist("node[1--2]"), Catch::Matchers::ContainsSubstring("not a number"));
    CHECK_THROWS_WITH(expand_hostlist("n[0-99999999]"), Catch::Matchers::ContainsSubstring("more than"));
    CHECK_THROWS_AS(expand_hostlist("a[1-2]b[3"), gangway::Error);
}

TEST_CASE("a range ending at the largest number ends (it looped forever)") {
    CHECK(expand_hostlist("n[18446744073709551615]") == std::vector<std::string>{"n18446744073709551615"});
    CHECK(expand_hostlist("n[18446744073709551614-18446744073709551615]") ==
          std::vector<std::string>{"n18446744073709551614", "n18446744073709551615"});
}

// Issue 23, item 1: the hosts were counted, not their size. A prefix, a suffix
// or a zero-padded bound was copied into each of up to 65,536 names (8 KB of
// node list took 520 MB), and each bracket group expanded again at every
// level before it (1.8 KB of "[0]" took 5.7 s, growing with the square).
namespace {

std::string repeat(std::string_view s, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
}

// The documented bound (hostlist.hpp): the names, at most kMaxHostlistHosts
// of at most kMaxHostNameLength characters, each in a std::string, their
// vector, and 12 bytes per byte of input (a token's parsed items).
std::size_t hostlist_memory_bound(std::size_t input) {
    return gangway::kMaxHostlistHosts * (sizeof(std::string) + gangway::kMaxHostNameLength + 1) +
           gangway::kMaxHostlistHosts * sizeof(std::string) + 12 * input + 4096;
}

}  // namespace

TEST_CASE("a name longer than a host name can be is refused before any is made") {
    using gangway::test::cost_of;
    for (const std::string& expr : {std::string(8000, 'a') + "[0-65535]", "n[0-65535]" + std::string(8000, 's'),
                                    "n[" + std::string(8000, '0') + "-65535]", std::string(300, 'x')}) {
        const auto c = cost_of([&] { (void)expand_hostlist(expr); });
        CHECK(c.refused);
        CHECK_THAT(c.error, Catch::Matchers::ContainsSubstring("longer than 255 characters"));
        CHECK(c.peak_bytes < 64 * 1024);
    }
    // 255 is allowed, with or without brackets.
    CHECK(expand_hostlist(std::string(255, 'h')).front().size() == 255);
    CHECK(expand_hostlist(std::string(250, 'h') + "[00001-00002]").back() == std::string(250, 'h') + "00002");
}

TEST_CASE("bracket groups are expanded once each: many of them cost their length, not its square") {
    using gangway::test::cost_of;
    // 600 groups of one number (1.8 KB): 5.7 s before.
    const auto many = cost_of([&] { (void)expand_hostlist("n" + repeat("[0]", 600)); });
    CHECK(many.refused);
    CHECK_THAT(many.error, Catch::Matchers::ContainsSubstring("longer than 255"));
    CHECK(many.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    // 64 KB of them, in one token and in 255-group tokens that are valid names.
    const auto huge = cost_of([&] { (void)expand_hostlist("n" + repeat("[0]", 21000)); });
    CHECK(huge.refused);
    CHECK(huge.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    const std::string token = repeat("[0]", 254);
    const std::string list = repeat(token + ",", 85);
    std::vector<std::string> names;
    const auto valid = cost_of([&] { names = expand_hostlist(list); });
    CHECK_FALSE(valid.refused);
    REQUIRE(names.size() == 85);
    CHECK(names[84] == std::string(254, '0'));
    CHECK(valid.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    // Groups before the last keep SLURM's order: the last one varies fastest.
    CHECK(expand_hostlist("a[1-2]b[1-2]c[8,9]") ==
          V{"a1b1c8", "a1b1c9", "a1b2c8", "a1b2c9", "a2b1c8", "a2b1c9", "a2b2c8", "a2b2c9"});
}

TEST_CASE("the worst node lists of 64 KB stay within the documented bound") {
    using gangway::test::cost_of;
    const std::string longest(gangway::kMaxHostNameLength - 5, 'n');
    std::vector<std::string> names;
    // 65,536 names of the longest length: the most a node list can expand to.
    const std::string most = longest + "[00000-65535]";
    auto c = cost_of([&] { names = expand_hostlist(most); });
    CHECK_FALSE(c.refused);
    CHECK(names.size() == 65536);
    CHECK(names.back().size() == gangway::kMaxHostNameLength);
    CHECK(c.peak_bytes <= hostlist_memory_bound(most.size()));
    CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    // The same hosts split into many groups and tokens.
    const std::string groups = std::string(200, 'g') + "[0-15][0-15][0-15][0-15]" + repeat("[7]", 40);
    c = cost_of([&] { names = expand_hostlist(groups); });
    CHECK_FALSE(c.refused);
    CHECK(names.size() == 65536);
    CHECK(c.peak_bytes <= hostlist_memory_bound(groups.size()));
    // 16 groups that turn, then 238 of one value each: 65,536 names of 255 characters
    // whose every group would be rewritten for each name, were they kept as groups.
    const std::string turning = "n" + repeat("[0-1]", 16) + repeat("[0]", 238);
    c = cost_of([&] { names = expand_hostlist(turning); });
    CHECK(names.size() == 65536);
    CHECK(names.back() == "n" + std::string(16, '1') + std::string(238, '0'));
    CHECK(c.peak_bytes <= hostlist_memory_bound(turning.size()));
    CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    // One group of 32,768 items (64 KB): each item is kept parsed while its token expands.
    const std::string items = "n[" + repeat("0,", 32767) + "0]";
    c = cost_of([&] { names = expand_hostlist(items); });
    CHECK(names.size() == 32768);
    CHECK(c.peak_bytes <= hostlist_memory_bound(items.size()));
    CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    // One more host is refused, whichever token brings it.
    const auto over = cost_of([&] { (void)expand_hostlist(most + ",x"); });
    CHECK(over.refused);
    CHECK_THAT(over.error, Catch::Matchers::ContainsSubstring("more than 65536 hosts"));
    CHECK(over.peak_bytes <= hostlist_memory_bound(most.size()));
    // Plain names up to 64 KB: commas, blanks.
    for (const std::string& plain : {repeat("a,", 32768), repeat(" ", 65536), repeat(std::string(254, 'p') + ",", 256)}) {
        c = cost_of([&] { (void)expand_hostlist(plain); });
        CHECK(c.peak_bytes <= hostlist_memory_bound(plain.size()));
        CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    }
}

TEST_CASE("a refusal quotes the node list on one short line") {
    const std::string expr = repeat("n[1-2]\n", 5000) + "bad[";
    try {
        (void)expand_hostlist(expr);
        FAIL("not refused");
    } catch (const gangway::Error& e) {
        const std::string what = e.what();
        CHECK(what.find('\n') == std::string::npos);
        CHECK(what.size() < 300);
        CHECK_THAT(what, Catch::Matchers::ContainsSubstring("never closed"));
    }
}
