#include "catch_compat.hpp"

#include "../../lib/base/error.hpp"
#include "../../lib/env/hostlist.hpp"

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
