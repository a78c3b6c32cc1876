#include "catch_compat.hpp"

#include "../../lib/base/error.hpp"
#include "../../lib/preflight/bootstrap.hpp"

using namespace gangway;
using namespace gangway::preflight;

TEST_CASE("bootstrap: --bootstrap values") {
    CHECK(parse_bootstrap_mode("auto") == BootstrapMode::automatic);
    CHECK(parse_bootstrap_mode("pmix") == BootstrapMode::pmix);
    CHECK(parse_bootstrap_mode("tcp") == BootstrapMode::tcp);
    CHECK_THROWS_AS(parse_bootstrap_mode("PMIx"), Error);
    CHECK_THROWS_AS(parse_bootstrap_mode(""), Error);
    for (auto m : {BootstrapMode::automatic, BootstrapMode::pmix, BootstrapMode::tcp})
        CHECK(parse_bootstrap_mode(to_string(m)) == m);
    CHECK_THROWS_WITH(parse_bootstrap_mode("udp"), "--bootstrap must be auto, pmix or tcp, not \"udp\"");
}

TEST_CASE("bootstrap: auto uses PMIx only when built with it and the step has it") {
    CHECK(choose_bootstrap(BootstrapMode::automatic, true, true).try_pmix);
    for (auto [built, env] : {std::pair{false, true}, {true, false}, {false, false}}) {
        CHECK_FALSE(choose_bootstrap(BootstrapMode::automatic, built, env).try_pmix);
    }
}

TEST_CASE("bootstrap: tcp never touches PMIx; pmix without it cannot check, saying why") {
    CHECK_FALSE(choose_bootstrap(BootstrapMode::tcp, true, true).try_pmix);
    CHECK_FALSE(choose_bootstrap(BootstrapMode::tcp, false, false).try_pmix);
    CHECK(choose_bootstrap(BootstrapMode::pmix, true, true).try_pmix);
    // gangway run leaves the task's PMIx session to its command unless told otherwise.
    CHECK_FALSE(choose_bootstrap(BootstrapMode::automatic, true, true, true).try_pmix);
    CHECK(choose_bootstrap(BootstrapMode::pmix, true, true, true).try_pmix);
    CHECK_THROWS_WITH(choose_bootstrap(BootstrapMode::pmix, true, false), Catch::Matchers::ContainsSubstring("srun --mpi=pmix"));
    CHECK_THROWS_WITH(choose_bootstrap(BootstrapMode::pmix, false, true), Catch::Matchers::ContainsSubstring("built without PMIx"));
}

TEST_CASE("bootstrap: the PMIx namespace must be the step") {
    CHECK(pmix_step_mismatch(3, 8, 3, 8).empty());
    CHECK(pmix_step_mismatch(3, 16, 3, 8) == "the PMIx namespace has 16 processes, the step 8 tasks");
    CHECK(pmix_step_mismatch(0, 8, 3, 8) == "PMIx rank 0 is not SLURM_PROCID 3");
}

TEST_CASE("bootstrap: fence timeouts") {
    CHECK(fence1_timeout_s(10) == 5);
    CHECK(fence1_timeout_s(0.4) == 0.5);
    CHECK(pmix_timeout_arg(0.2) == 1);
    CHECK(pmix_timeout_arg(1) == 1);
    CHECK(pmix_timeout_arg(1.01) == 2);
    CHECK(pmix_timeout_arg(20) == 20);
    CHECK(pmix_timeout_arg(1e9) == 86400);
}
