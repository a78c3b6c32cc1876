// Links from the answers of their ends (TCP streams, RDMA writes, NCCL pairs)
// and naming the node to blame without a confirmation round: the NCCL
// all-reduce across nodes localised by two-node pairs (lib/preflight/nccl_job)
// and the RDMA rails (lib/preflight/rdma_rail), on localize's blame_ring.
#include "catch_compat.hpp"

#include <algorithm>
#include <functional>
#include <optional>

#include "../../lib/base/error.hpp"
#include "../../lib/preflight/nccl_job.hpp"
#include "../../lib/preflight/rdma_rail.hpp"
#include "../../lib/preflight/stream_link.hpp"

using namespace gangway;
using namespace gangway::preflight;

namespace {

constexpr double G = 1e9 / 8;  // bytes per second in one Gb/s

std::vector<std::string> names(unsigned n) {
    std::vector<std::string> out;
    for (unsigned i = 0; i < n; ++i) out.push_back("n" + std::to_string(i));
    return out;
}

// Ring shift 1 over n nodes at `fast` Gb/s, except the links listed at `slow`.
std::vector<Measurement> ring(unsigned n, double fast, double slow, const std::vector<Flow>& slow_links) {
    std::vector<Measurement> out;
    for (const auto& f : ring_round(n, 1)) {
        const bool s = std::find(slow_links.begin(), slow_links.end(), f) != slow_links.end();
        out.push_back({f.from, f.to, (s ? slow : fast) * G, true, ""});
    }
    return out;
}

Kv answer(double seconds, bool data_ok = true) {
    return {{"ok", "1"}, {"error", ""}, {"seconds", std::to_string(seconds)}, {"data_ok", data_ok ? "1" : "0"}};
}
Kv failure(const std::string& error) { return {{"ok", "0"}, {"error", error}}; }

// Seconds of one all-reduce of `bytes` on 4 ranks (two nodes of 2 GPUs) at a busbw of `busbw` GB/s.
double seconds_for(double busbw, double bytes = 1e9) { return bytes * 1.5 / (busbw * 1e9); }

// Every pair of pair_rounds(n), each at the busbw given (GB/s), or failing with an error.
std::vector<NcclPair> pairs(unsigned n, const std::function<std::optional<double>(Flow)>& busbw) {
    std::vector<NcclPair> out;
    for (const auto& round : pair_rounds(n))
        for (const auto& f : round) {
            NcclPair p{f.from, f.to, 4, true, 0, ""};
            if (auto b = busbw(f)) p.seconds = seconds_for(*b);
            else p.ok = false, p.error = "n" + std::to_string(f.to) + ": unhandled system error";
            out.push_back(p);
        }
    return out;
}

}  // namespace

TEST_CASE("blame without confirmation: slow both ways, and never when nothing is good") {
    // Node 2 of 4 is slow sending and receiving.
    auto b = blame_ring(4, ring(4, 100, 10, {{1, 2}, {2, 3}}), 0.5, std::nullopt);
    CHECK(b.some_good);
    CHECK(b.blamed == std::vector<unsigned>{2});
    // Slow one way only: its neighbour might be the cause, nobody is blamed.
    CHECK(blame_ring(4, ring(4, 100, 10, {{1, 2}}), 0.5, std::nullopt).blamed.empty());
    // Everything below the expected rate: the network or the figure, not a node.
    b = blame_ring(4, ring(4, 100, 100, {}), 0.5, 400 * G);
    CHECK_FALSE(b.some_good);
    CHECK(b.blamed.empty());
    CHECK(b.analysis.expected_bps == Approx(400 * G));
}

TEST_CASE("a node's links described for its reason") {
    auto r = ring(3, 100, 100, {});
    r[0].ok = false;
    r[0].error = "reset";
    CHECK(describe_links(1, r, names(3), fmt_gbit) == "from n0: reset; to n2: 100.00 Gb/s");
    CHECK_THROWS_AS(describe_links(1, r, {"n0", "n1"}, fmt_gbit), Error);
    CHECK(fmt_gbit(1.25e9) == "10.00 Gb/s");
}

TEST_CASE("a suspect is explained by confirmed slow peers only when all its slow links go to them") {
    const auto r = ring(4, 100, 10, {{1, 2}, {2, 3}, {3, 0}});
    std::vector<bool> slow;
    for (const auto& m : r) slow.push_back(m.bps < 50 * G);
    CHECK_FALSE(explained_by(3, r, slow, {}));    // nothing confirmed yet
    CHECK_FALSE(explained_by(3, r, slow, {2}));   // its slow link to 0 is not explained
    CHECK(explained_by(1, r, slow, {2}));         // its only slow link is to 2
    CHECK(explained_by(3, r, slow, {0, 2}));
}

TEST_CASE("the job's all-reduce from every node's answer") {
    const Kv a = answer(0.02), b = answer(0.05), wrong = answer(0.01, false), bad = failure("NCCL WARN timeout");
    auto r = job_allreduce({{"n0", 8, &a}, {"n1", 8, &b}, {"n2", 4, &wrong}}, 1e9);
    CHECK(r.scope == "job");
    CHECK(r.nranks == 20);
    CHECK(r.bytes == 1e9);
    CHECK(r.seconds == Approx(0.05));  // the slowest node's time
    CHECK_FALSE(r.data_ok);
    CHECK(r.error.empty());
    r = job_allreduce({{"n0", 8, &a}, {"n1", 8, &bad}, {"n2", 8, nullptr}}, 1e9);
    CHECK(r.error == "n1: NCCL WARN timeout");  // a failure says more than the silence
    CHECK(r.seconds == Approx(0.02));
    CHECK(job_allreduce({{"n0", 8, &a}, {"n1", 8, nullptr}}, 1e9).error == "not every node answered");
    const Kv garbled{{"ok", "1"}, {"data_ok", "1"}};
    CHECK_THROWS_AS(job_allreduce({{"n0", 8, &garbled}}, 1e9), Error);
}

TEST_CASE("a two-node pair from its ends' answers, and as a link") {
    const Kv fast = answer(0.01), slow = answer(0.03), wrong = answer(0.01, false), bad = failure("boom");
    auto p = nccl_pair({2, 3}, {"n2", 2, &fast}, {"n3", 2, &slow});
    CHECK(p.ok);
    CHECK(p.from == 2);
    CHECK(p.to == 3);
    CHECK(p.nranks == 4);
    CHECK(p.seconds == Approx(0.03));
    // busbw = bytes / t x 2(n-1)/n: 1e9 B in 0.03 s on 4 ranks is 50 GB/s.
    const auto link = pair_link(p, 1e9);
    CHECK(link.ok);
    CHECK(link.bps == Approx(50e9));
    CHECK(nccl_pair({0, 1}, {"n0", 2, nullptr}, {"n1", 2, &fast}).error == "n0 did not answer");
    CHECK(nccl_pair({0, 1}, {"n0", 2, &fast}, {"n1", 2, &wrong}).error == "the all-reduce returned wrong values");
    p = nccl_pair({0, 1}, {"n0", 2, &bad}, {"n1", 2, nullptr});
    CHECK_FALSE(p.ok);
    CHECK(p.error == "n1 did not answer");  // both failed: the second end's words
    CHECK(pair_link(p, 1e9).bps == 0);
    CHECK(pair_link(p, 1e9).error == "n1 did not answer");
    CHECK(pair_link(NcclPair{0, 1, 4, true, 0, ""}, 1e9).bps == 0);  // no time measured
}

TEST_CASE("a broken all-reduce is localised by the pairs that fail, whatever their speed") {
    gpu::NcclResult job;
    job.bytes = 1e9;
    job.error = "n2: unhandled system error";
    job.expected_busbw = 100;
    // Node 2's pairs fail; the others run, one of them far below the figure.
    const auto ps = pairs(4, [](Flow f) -> std::optional<double> {
        if (f.from == 2 || f.to == 2) return std::nullopt;
        return f.from == 3 ? 5 : 100;
    });
    const auto b = blame_pairs(4, ps, names(4), job, 0.8, 0.5);
    REQUIRE(b.faulty.size() == 1);
    CHECK(b.faulty[0].first == 2);
    CHECK(b.faulty[0].second ==
          "nccl-job: its two-node all-reduces with both ring neighbours fail or are slow (to n3: n3: unhandled system error; "
          "from n1: n2: unhandled system error)");
    CHECK(b.findings == std::vector<std::string>{"nccl pair n2 + n3: n3: unhandled system error",
                                                 "nccl pair n1 + n2: n2: unhandled system error"});
}

TEST_CASE("a slow all-reduce is localised against the figure, else against the other pairs") {
    gpu::NcclResult job;
    job.bytes = 1e9;
    job.expected_busbw = 100;
    // Pairs with node 1: 60 GB/s, below 0.8 x 100; the others at 100.
    const auto ps = pairs(4, [](Flow f) -> std::optional<double> { return f.from == 1 || f.to == 1 ? 60 : 100; });
    auto b = blame_pairs(4, ps, names(4), job, 0.8, 0.5);
    REQUIRE(b.faulty.size() == 1);
    CHECK(b.faulty[0].first == 1);
    CHECK_THAT(b.faulty[0].second, Catch::Matchers::EndsWith("(from n0: busbw 60.0 GB/s; to n2: busbw 60.0 GB/s)"));
    CHECK(b.findings == std::vector<std::string>{"nccl pair n0 + n1: busbw 60.0 GB/s", "nccl pair n1 + n2: busbw 60.0 GB/s"});
    // Without a figure, the pairs' 75th percentile (100) and the looser ratio: 60 is not below 0.5 x 100.
    job.expected_busbw.reset();
    b = blame_pairs(4, ps, names(4), job, 0.8, 0.5);
    CHECK(b.faulty.empty());
    CHECK(b.findings.empty());
    // ... but 40 is.
    b = blame_pairs(4, pairs(4, [](Flow f) -> std::optional<double> { return f.from == 1 || f.to == 1 ? 40 : 100; }), names(4),
                    job, 0.8, 0.5);
    REQUIRE(b.faulty.size() == 1);
    CHECK(b.faulty[0].first == 1);
}

TEST_CASE("every pair bad: the network or the figure, no node named") {
    gpu::NcclResult job;
    job.bytes = 1e9;
    job.expected_busbw = 400;
    const auto b = blame_pairs(5, pairs(5, [](Flow) -> std::optional<double> { return 100; }), names(5), job, 0.8, 0.5);
    CHECK(b.faulty.empty());
    REQUIRE(b.findings.size() == 6);  // the note, then the 5 ring pairs
    CHECK(b.findings[0] ==
          "nccl: every two-node pair fails or is slow: the network between the nodes (or the expected figure, "
          "GANGWAY_NCCL_BUSBW_GBPS) rather than one node");
    CHECK_THROWS_AS(blame_pairs(5, pairs(5, [](Flow) -> std::optional<double> { return 100; }), names(4), job, 0.8, 0.5), Error);
    CHECK_THROWS_AS(blame_pairs(2, pairs(5, [](Flow) -> std::optional<double> { return 100; }), names(5), job, 0.8, 0.5), Error);
}

TEST_CASE("an RDMA rail: the node slow both ways against the best port's rate") {
    const std::vector<RailPort> ports{{"n0", "mlx5_0/1", 200}, {"n1", "mlx5_1/1", 200}, {"n2", "mlx5_2/1", 100}};
    // Held to 0.9 x 200 Gb/s: node 2's links at 96 Gb/s are slow, and so is node 2.
    const auto b = blame_rail(1, ports, ring(3, 190, 96, {{1, 2}, {2, 0}}), std::nullopt, 0.9);
    CHECK(b.port_rate_gbps == 200);
    CHECK(b.failed);
    REQUIRE(b.faulty.size() == 1);
    CHECK(b.faulty[0].first == 2);
    CHECK(b.faulty[0].second ==
          "rdma rail 1 (mlx5_2/1): its writes to and from its ring neighbours fail or are slow (from n1: 96.00 Gb/s; to n0: 96.00 Gb/s)");
    CHECK(b.findings == std::vector<std::string>{"rdma n1 -> n2 rail 1: 96.00 Gb/s on a 200.00 Gb/s port",
                                                 "rdma n2 -> n0 rail 1: 96.00 Gb/s on a 200.00 Gb/s port"});
    // All at 190 of 200: fine.
    const auto ok = blame_rail(0, ports, ring(3, 190, 190, {}), std::nullopt, 0.9);
    CHECK_FALSE(ok.failed);
    CHECK(ok.faulty.empty());
    CHECK(ok.findings.empty());
}

TEST_CASE("an RDMA rail held to the site's rate, where every link falls short") {
    const std::vector<RailPort> ports{{"n0", "mlx5_0/1", 100}, {"n1", "mlx5_0/1", 100}, {"n2", "mlx5_0/1", 100}};
    auto r = ring(3, 97, 97, {});
    r[1].ok = false;
    r[1].error = "n2: prep: no GID";
    const auto b = blame_rail(0, ports, r, 400.0, 0.9);
    CHECK(b.port_rate_gbps == 400);
    CHECK(b.failed);
    CHECK(b.faulty.empty());
    REQUIRE(b.findings.size() == 4);
    CHECK(b.findings[0] ==
          "rdma rail 0: every link fails or is below 360.00 Gb/s: the fabric, a site-wide setting (GID, MTU, permissions) "
          "or the expected rate (GANGWAY_IB_RATE_GBPS) rather than one node");
    CHECK(b.findings[2] == "rdma n1 -> n2 rail 0: n2: prep: no GID");
    CHECK_THROWS_AS(blame_rail(0, {ports[0], ports[1]}, r, std::nullopt, 0.9), Error);
}

TEST_CASE("an RDMA write from its ends' answers: the first phase either end did not pass") {
    const Kv pass{{"ok", "1"}, {"error", ""}}, fail{{"ok", "0"}, {"error", "no RoCE v2 GID"}};
    const Kv wrote{{"ok", "1"}, {"error", ""}, {"bps", "12500000000"}};
    auto m = rdma_link({0, 1}, {"n0", &pass, &pass, &wrote}, {"n1", &pass, &pass, nullptr});
    CHECK(m.ok);
    CHECK(m.bps == Approx(12.5e9));  // the writer's figure; the reader's go answer is not needed
    CHECK(m.from == 0);
    CHECK(m.to == 1);
    m = rdma_link({0, 1}, {"n0", &pass, nullptr, nullptr}, {"n1", &fail, nullptr, nullptr});
    CHECK_FALSE(m.ok);
    CHECK(m.error == "n1: no RoCE v2 GID");  // prep on both ends comes before connect on either
    CHECK(rdma_link({0, 1}, {"n0", &pass, nullptr, nullptr}, {"n1", &pass, &pass, nullptr}).error == "n0: no answer");
    CHECK(rdma_link({0, 1}, {"n0", &pass, &pass, &fail}, {"n1", &pass, &pass, nullptr}).error == "n0: no RoCE v2 GID");
    const Kv garbled{{"ok", "1"}};
    CHECK_THROWS_AS(rdma_link({0, 1}, {"n0", &pass, &pass, &garbled}, {"n1", &pass, &pass, nullptr}), Error);
}

TEST_CASE("a TCP stream's link: the receiver's count unless the sender failed") {
    const Kv rx{{"rx_ok", "1"}, {"rx_bps", "1.25e9"}, {"rx_error", ""}, {"tx_ok", "1"}, {"tx_error", ""}};
    const Kv tx_failed{{"rx_ok", "1"}, {"rx_bps", "0"}, {"rx_error", ""}, {"tx_ok", "0"}, {"tx_error", "connect refused"}};
    Kv rx_short = rx;
    rx_short["rx_ok"] = "0";
    rx_short["rx_error"] = "stream ended early";
    auto m = stream_link({2, 3}, {"n2", &rx}, {"n3", &rx});
    CHECK(m.ok);
    CHECK(m.bps == Approx(1.25e9));
    CHECK(m.from == 2);
    CHECK(m.to == 3);
    m = stream_link({2, 3}, {"n2", &tx_failed}, {"n3", &rx_short});
    CHECK_FALSE(m.ok);
    CHECK(m.error == "sender: connect refused; receiver: stream ended early");
    CHECK(stream_link({2, 3}, {"n2", &tx_failed}, {"n3", &rx}).error == "sender: connect refused");
    CHECK(stream_link({2, 3}, {"n2", nullptr}, {"n3", &rx_short}).error == "stream ended early");
    m = stream_link({2, 3}, {"n2", &rx}, {"n3", nullptr});
    CHECK_FALSE(m.ok);
    CHECK(m.error == "no answer from n3");
    const Kv garbled{{"rx_ok", "1"}};
    m = stream_link({2, 3}, {"n2", &rx}, {"n3", &garbled});
    CHECK_FALSE(m.ok);
    CHECK_THAT(m.error, Catch::Matchers::ContainsSubstring("rx_bps"));
}

TEST_CASE("an RDMA rail measured again: only what both measurements say stands") {
    const std::vector<RailPort> ports{{"n0", "mlx5_0/1", 200}, {"n1", "mlx5_0/1", 200}, {"n2", "mlx5_0/1", 200}};
    const auto slow2 = blame_rail(0, ports, ring(3, 190, 60, {{1, 2}, {2, 0}}), std::nullopt, 0.9);
    const auto fine = blame_rail(0, ports, ring(3, 190, 190, {}), std::nullopt, 0.9);
    REQUIRE(slow2.faulty.size() == 1);
    SECTION("slow twice: named, with the second's findings") {
        const auto c = confirm_rail(slow2, slow2, ports);
        REQUIRE(c.blame.faulty.size() == 1);
        CHECK(c.blame.faulty[0].first == 2);
        CHECK(c.blame.failed);
        CHECK(c.blame.findings.size() == 2);
        CHECK(c.notes.empty());
    }
    SECTION("slow once (a loaded host), fine again: nobody named, no finding, a note") {
        const auto c = confirm_rail(slow2, fine, ports);
        CHECK(c.blame.faulty.empty());
        CHECK_FALSE(c.blame.failed);
        CHECK(c.blame.findings.empty());
        REQUIRE(c.notes.size() == 2);
        CHECK(c.notes[0].rfind("n2: rdma rail 0 (mlx5_0/1): its writes", 0) == 0);
        CHECK_THAT(c.notes[0], Catch::Matchers::ContainsSubstring("fine when measured again, not named"));
    }
    SECTION("another node slow the second time: neither named") {
        const auto slow1 = blame_rail(0, ports, ring(3, 190, 60, {{0, 1}, {1, 2}}), std::nullopt, 0.9);
        REQUIRE(slow1.faulty.size() == 1);
        CHECK(slow1.faulty[0].first == 1);
        CHECK(confirm_rail(slow2, slow1, ports).blame.faulty.empty());
    }
    SECTION("no time to measure again: the first stands") {
        CHECK(confirm_rail(slow2, std::nullopt, ports).blame.faulty.size() == 1);
    }
}
