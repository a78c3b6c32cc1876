#include "catch_compat.hpp"

#include <set>

#include "../../lib/env/port.hpp"
#include "cost_meter.hpp"

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
    for (unsigned p : {12000u, 12001u, 12002u, 12010u}) CHECK(is_reserved_port("12000-12002,12010", p));
    for (unsigned p : {0u, 11999u, 12003u, 12009u, 12011u, 65536u}) CHECK_FALSE(is_reserved_port("12000-12002,12010", p));
    CHECK_FALSE(is_reserved_port("", 12000));
    CHECK(is_reserved_port(",12000,,", 12000));
    CHECK_THROWS_WITH(is_reserved_port("12003-12000", 12000), Catch::Matchers::ContainsSubstring("MpiParams=ports"));
    CHECK_THROWS(is_reserved_port("x", 1));
    CHECK_THROWS(is_reserved_port("12000,x", 12000));  // the whole list is checked, past the port found
    CHECK_THROWS(is_reserved_port("12000-", 12000));
    CHECK_THROWS(is_reserved_port("0-5", 3));
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

// Issue 23, item 3: SLURM_STEP_RESV_PORTS was turned into a std::set item by
// item, each range anew: 64 KB of "12000-65535," took minutes. A port is now
// looked up in one pass over the list, which is validated whole.
TEST_CASE("a 64 KB reserved port list costs one pass over it") {
    using gangway::test::cost_of;
    std::string many;
    while (many.size() < 65536 - 12) many += "12000-65535,";
    many += "12001";
    unsigned port = 0;
    auto c = cost_of([&] { port = rendezvous_port(12000, many); });
    CHECK_FALSE(c.refused);
    CHECK(port == 12001);
    CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    CHECK(c.peak_bytes <= 4 * many.size() + 4096);
    c = cost_of([&] { port = data_listen_port(12000, many); });
    CHECK(port == 12002);
    CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    CHECK(c.peak_bytes <= 4 * many.size() + 4096);
    // Refused for a bad item at the end, the message on one short line.
    c = cost_of([&] { port = rendezvous_port(12000, many + ",65536"); });
    CHECK(c.refused);
    CHECK_THAT(c.error, Catch::Matchers::ContainsSubstring("MpiParams=ports"));
    CHECK(c.error.size() < 400);
    CHECK(c.peak_bytes <= 4 * many.size() + 4096);
    // Single ports and ranges of one port, 64 KB of them.
    std::string singles;
    for (unsigned p = 1; singles.size() < 65000; p = p % 65535 + 1) singles += std::to_string(p) + ",";
    singles += "29501";
    c = cost_of([&] { port = rendezvous_port(29500, singles); });
    CHECK(port == 29501);
    CHECK(c.peak_bytes <= 4 * singles.size() + 4096);
}
