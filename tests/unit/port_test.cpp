#include "catch_compat.hpp"

#include <set>

#include "../../lib/env/port.hpp"

using namespace gangway;

TEST_CASE("reserved ports: the first one is used") {
    CHECK(first_reserved_port("12000-12003") == 12000);
    CHECK(first_reserved_port("12005,12007") == 12005);
    CHECK(first_reserved_port("40000") == 40000);
    CHECK_FALSE(first_reserved_port("").has_value());
    CHECK_THROWS_WITH(first_reserved_port("abc"), Catch::Matchers::ContainsSubstring("SLURM_STEP_RESV_PORTS"));
    CHECK_THROWS(first_reserved_port("70000"));
}

TEST_CASE("hashed ports stay in range, on block boundaries, and are deterministic") {
    const PortRange r{61000, 65535};
    for (std::uint32_t job = 1; job < 3000; job += 7)
        for (std::uint32_t step : {0u, 1u, 2u, 0xfffffffbu}) {
            const auto p = hashed_port(job, step, r);
            CHECK(p >= r.lo);
            CHECK(p + kPortBlock - 1 <= r.hi);
            CHECK((p - r.lo) % kPortBlock == 0);
            CHECK(p == hashed_port(job, step, r));
        }
}

TEST_CASE("steps of one job never share a port block") {
    const PortRange r{61000, 65535};
    for (std::uint32_t job : {1u, 4242u, 123456789u}) {
        std::set<std::uint16_t> seen;
        for (std::uint32_t step = 0; step < 1000; ++step) seen.insert(hashed_port(job, step, r));
        CHECK(seen.size() == 1000);
    }
}

TEST_CASE("neighbouring jobs spread over the range") {
    const PortRange r{61000, 65535};
    std::set<std::uint16_t> seen;
    for (std::uint32_t job = 1000; job < 1100; ++job) seen.insert(hashed_port(job, 0, r));
    CHECK(seen.size() > 90);  // 100 jobs into 1134 blocks: a few birthday collisions at most
}

TEST_CASE("a tiny range still yields a valid port") {
    CHECK(hashed_port(5, 3, PortRange{2000, 2003}) == 2000);
}

// Issue 15, item 14: the launcher binds only ports the step owns.
TEST_CASE("the launcher's ports stay inside the step's reservation") {
    CHECK(reserved_ports("12000-12002,12010") == std::set<std::uint16_t>{12000, 12001, 12002, 12010});
    CHECK(reserved_ports("").empty());
    CHECK_THROWS_WITH(reserved_ports("12003-12000"), Catch::Matchers::ContainsSubstring("MpiParams=ports"));
    CHECK_THROWS(reserved_ports("x"));
    // No reservation: PRIMARY_PORT+1 (every task computes it alone), a free data port.
    CHECK(rendezvous_port(29500, "") == 29501);
    CHECK(data_listen_port(29500, "") == 0);
    // Reserved: PORT+1 must be one; PORT+2 is used only when it is one.
    CHECK(rendezvous_port(12000, "12000-12001") == 12001);
    CHECK(data_listen_port(12000, "12000-12001") == 0);
    CHECK(data_listen_port(12000, "12000-12003") == 12002);
    CHECK_THROWS_WITH(rendezvous_port(12000, "12000"),
                      Catch::Matchers::ContainsSubstring("PRIMARY_PORT+1 (12001)") &&
                          Catch::Matchers::ContainsSubstring("--resv-ports"));
    CHECK_THROWS(rendezvous_port(29500, "12000-12001"));  // a port of the user's own, outside the reservation
}
