#include "catch_compat.hpp"

#include "../../lib/env/tasks_per_node.hpp"

using gangway::expand_counts;
using V = std::vector<unsigned>;

TEST_CASE("compressed per-node counts expand in node order") {
    CHECK(expand_counts("2(x3),1") == V{2, 2, 2, 1});
    CHECK(expand_counts("1(x4)") == V{1, 1, 1, 1});
    CHECK(expand_counts("8") == V{8});
    CHECK(expand_counts("72(x2),36") == V{72, 72, 36});
    CHECK(expand_counts("1,2,3") == V{1, 2, 3});
}

TEST_CASE("malformed counts are refused") {
    CHECK_THROWS_WITH(expand_counts(""), Catch::Matchers::ContainsSubstring("empty"));
    CHECK_THROWS_WITH(expand_counts("2(3)"), Catch::Matchers::ContainsSubstring("N(xM)"));
    CHECK_THROWS_WITH(expand_counts("2(x)"), Catch::Matchers::ContainsSubstring("N(xM)"));
    CHECK_THROWS_WITH(expand_counts("x,1"), Catch::Matchers::ContainsSubstring("not a count"));
    CHECK_THROWS_WITH(expand_counts("2(x0)"), Catch::Matchers::ContainsSubstring("repeat"));
    CHECK_THROWS(expand_counts("2,,1"));
}
