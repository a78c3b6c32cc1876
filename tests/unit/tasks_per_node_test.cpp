#include "catch_compat.hpp"

#include "../../lib/base/error.hpp"
#include "../../lib/env/tasks_per_node.hpp"
#include "cost_meter.hpp"

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

// Issue 23, item 2: a count is a number of tasks on one node, which SLURM
// bounds by MaxTasksPerNode (at most 65533); any larger count is not SLURM's.
TEST_CASE("a per-node count above SLURM's MaxTasksPerNode ceiling is refused, naming it") {
    CHECK(expand_counts("65533(x2)") == V{65533, 65533});
    CHECK_THROWS_WITH(expand_counts("65534"), Catch::Matchers::ContainsSubstring("65533") &&
                                                  Catch::Matchers::ContainsSubstring("MaxTasksPerNode"));
    CHECK_THROWS_WITH(expand_counts("1,4000000"), Catch::Matchers::ContainsSubstring("MaxTasksPerNode"));
    CHECK_THROWS_WITH(expand_counts("4294967295,3"), Catch::Matchers::ContainsSubstring("MaxTasksPerNode"));
    CHECK_THROWS_AS(expand_counts("99999999999999999999"), gangway::Error);
}

TEST_CASE("per-node counts of 64 KB cost their length") {
    using gangway::test::cost_of;
    std::string many;
    for (int i = 0; i < 6000; ++i) many += "65533(x10),";
    many += "1";
    std::vector<unsigned> got;
    auto c = cost_of([&] { got = expand_counts(many); });
    CHECK_FALSE(c.refused);
    CHECK(got.size() == 60001);
    // Bound (tasks_per_node.hpp): the expanded counts and a few copies of the input.
    CHECK(c.peak_bytes <= 2 * 65536 * sizeof(unsigned) + 4 * many.size() + 4096);
    CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    std::string ones;  // 64 KB of one-task nodes
    for (int i = 0; i < 32768; ++i) ones += "1,";
    ones += "1";
    c = cost_of([&] { got = expand_counts(ones); });
    CHECK_FALSE(c.refused);
    CHECK(got.size() == 32769);
    CHECK(c.peak_bytes <= 2 * 65536 * sizeof(unsigned) + 4 * ones.size() + 4096);
    CHECK_THROWS_WITH(expand_counts("1(x65536),1"), Catch::Matchers::ContainsSubstring("65536"));
}
