// The node's links, RDMA devices and GPUs against the job's start
// (lib/postmortem/link_signs): a link that lost carrier during the job is a
// sign whether or not it is down at the Epilog; one without carrier from
// before the job is not; an HCA or a GPU gone is; and the verdict takes the
// devices lost as the node's fault.
#include "catch_compat.hpp"

#include <sys/wait.h>

#include <csignal>
#include <string>
#include <vector>

#include "../../lib/base/error.hpp"
#include "../../lib/postmortem/link_signs.hpp"
#include "../../lib/postmortem/resume.hpp"
#include "../../lib/postmortem/verdict.hpp"

using namespace gangway;
using namespace gangway::postmortem;
using Catch::Matchers::ContainsSubstring;

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t T = 1'795'000'000'000'000'000;

// A link as rtnetlink gives it: up with carrier, addressed, the kernel's counters.
LinkFacts link(std::string name, bool carrier, std::uint64_t changes, std::uint64_t ups, std::uint64_t downs) {
    LinkFacts l;
    l.name = std::move(name);
    l.admin_up = true;
    l.carrier = carrier;
    l.addressed = true;
    l.changes = changes, l.ups = ups, l.downs = downs;
    return l;
}
LinkFacts set_down(LinkFacts l) {
    l.admin_up = l.carrier = false;
    return l;
}
LinkFacts without_counters(LinkFacts l, bool keep_changes) {
    if (!keep_changes) l.changes.reset();
    l.ups.reset(), l.downs.reset();
    return l;
}

std::vector<std::string> devices(const std::vector<Evidence>& es) {
    std::vector<std::string> out;
    for (const auto& e : es) out.push_back(e.device);
    return out;
}

}  // namespace

TEST_CASE("link_signs: a link that lost carrier during the job, down at the Epilog or up again", "[postmortem][links]") {
    // eth1 the data link, docker0 a bridge with no container, eth2 an unplugged port with an address.
    const NodeStart start = node_start({link("eth1", true, 1, 1, 0), link("docker0", false, 0, 0, 0), link("eth2", false, 0, 0, 0)},
                                       {}, {});
    REQUIRE(start.links.size() == 3);
    SECTION("set down mid-job and still down: one sign, timed by the reading") {
        const auto s = link_signs(&start, {set_down(link("eth1", false, 2, 1, 1)), link("docker0", false, 0, 0, 0),
                                           link("eth2", false, 0, 0, 0)},
                                  T);
        REQUIRE(s.size() == 1);
        CHECK(s[0].sign == Sign::link_down);
        CHECK(s[0].device == "eth1");
        CHECK(s[0].t_ns == T);
        CHECK(s[0].code == 1);
        CHECK(s[0].text == "eth1 lost carrier once during the job (carrier_down_count 0 -> 1) and is set down at its end");
    }
    SECTION("down and up again before the Epilog: its counter says so") {
        const auto s = link_signs(&start, {link("eth1", true, 5, 3, 2), link("docker0", false, 0, 0, 0)}, T);
        REQUIRE(devices(s) == std::vector<std::string>{"eth1"});
        CHECK(s[0].code == 2);
        CHECK(s[0].text == "eth1 lost carrier 2 times during the job (carrier_down_count 0 -> 2), up again at its end");
    }
    SECTION("a kernel without the up and down counts: carrier_changes") {
        const NodeStart old = node_start({without_counters(link("eth1", true, 1, 1, 0), true),
                                          without_counters(link("eth2", false, 4, 2, 2), true)},
                                         {}, {});
        // From carrier, any change is a loss; eth2, without carrier at the start, is never a sign.
        const auto s = link_signs(&old, {without_counters(link("eth1", true, 3, 0, 0), true),
                                         without_counters(link("eth2", false, 6, 0, 0), true)},
                                  T);
        REQUIRE(devices(s) == std::vector<std::string>{"eth1"});
        CHECK(s[0].text == "eth1 changed carrier during the job (carrier_changes 1 -> 3), up again at its end");
        CHECK(link_signs(&old, {without_counters(link("eth1", true, 1, 0, 0), true)}, T).empty());
    }
    SECTION("no counters at all: carrier at the start, none at the end") {
        const NodeStart bare = node_start({without_counters(link("eth1", true, 0, 0, 0), false)}, {}, {});
        const auto s = link_signs(&bare, {without_counters(set_down(link("eth1", false, 0, 0, 0)), false)}, T);
        REQUIRE(s.size() == 1);
        CHECK(s[0].text == "eth1 had carrier at the job's start and is set down at its end");
        CHECK(link_signs(&bare, {without_counters(link("eth1", true, 0, 0, 0), false)}, T).empty());
    }
    SECTION("an interface gone since the start") {
        const auto s = link_signs(&start, {link("docker0", false, 0, 0, 0)}, T);
        REQUIRE(devices(s) == std::vector<std::string>{"eth1"});
        CHECK(s[0].text == "eth1 had carrier at the job's start and is gone at its end");
    }
    SECTION("the kernel's own line for the link keeps its time: no second sign") {
        std::vector<Evidence> kernel(1);
        kernel[0].sign = Sign::link_down, kernel[0].device = "eth1", kernel[0].t_ns = T - 9000 * kMs;
        CHECK(link_signs(&start, {set_down(link("eth1", false, 2, 1, 1))}, T, kernel).empty());
    }
    SECTION("a healthy job: nothing") {
        CHECK(link_signs(&start, {link("eth1", true, 1, 1, 0), link("docker0", false, 0, 0, 0), link("eth2", false, 0, 0, 0)}, T)
                  .empty());
    }
}

TEST_CASE("link_signs: a link without carrier from before the job is no sign (docker0, an unplugged port)", "[postmortem][links]") {
    const NodeStart start = node_start({link("docker0", false, 2, 1, 1), link("eth2", false, 0, 0, 0)}, {}, {});
    // Up without carrier at the Epilog, as at the Prolog: the rule of the end alone blamed them.
    CHECK(link_signs(&start, {link("docker0", false, 2, 1, 1), link("eth2", false, 0, 0, 0)}, T).empty());
    // A container came and went on docker0 during the job (up and down again), the port was plugged: no loss of the job's.
    CHECK(link_signs(&start, {link("docker0", false, 4, 2, 2), link("eth2", true, 1, 1, 0)}, T).empty());
    // Set down by an admin during the job, without carrier before: no loss either.
    CHECK(link_signs(&start, {set_down(link("docker0", false, 2, 1, 1))}, T).empty());
    // Without a snapshot (no Prolog): the end's state, but never a link that never had carrier.
    const auto s = link_signs(nullptr, {link("docker0", false, 2, 1, 1), link("eth2", false, 0, 0, 0), link("eth1", true, 1, 1, 0)}, T);
    REQUIRE(devices(s) == std::vector<std::string>{"docker0"});
    CHECK(s[0].text == "docker0 is up with no carrier at the job's end");
    // A bridge of containers' ports alone (docker0 with a container at the start, gone since) is never judged.
    LinkFacts docker = link("docker0", true, 2, 1, 1);
    docker.virtual_bridge = true;
    CHECK(node_start({docker}, {}, {}).empty());
    docker.carrier = false, docker.downs = 2;
    CHECK(link_signs(nullptr, {docker}, T).empty());
    // Nor one without an address, nor one set down (an admin's choice the end alone cannot tell from a fault).
    LinkFacts bare = link("eth3", false, 2, 1, 1);
    bare.addressed = false;
    CHECK(link_signs(nullptr, {bare, set_down(link("eth4", false, 2, 1, 1))}, T).empty());
    // A kernel that does not say whether it ever had carrier: as before, a sign.
    CHECK(link_signs(nullptr, {without_counters(link("eth2", false, 0, 0, 0), false)}, T).size() == 1);
}

TEST_CASE("node_start: only the addressed links; the text round-trips and anything else is refused naming the line",
          "[postmortem][links]") {
    LinkFacts unaddressed = link("eth9", true, 1, 1, 0);
    unaddressed.addressed = false;
    const NodeStart s = node_start({link("ib0", true, 7, 4, 3), unaddressed, without_counters(link("eth1", false, 0, 0, 0), false)},
                                   {"mlx5_0", "mlx5_1"}, {"0000:17:00.0"});
    CHECK(s.links.count("eth9") == 0);
    const std::string text = render_node_start(s);
    CHECK(text ==
          "link eth1 admin=1 carrier=0\n"
          "link ib0 admin=1 carrier=1 changes=7 ups=4 downs=3\n"
          "hca mlx5_0\nhca mlx5_1\ngpu 0000:17:00.0\n");
    CHECK(parse_node_start(text) == s);
    CHECK(parse_node_start("").empty());
    CHECK_THROWS_WITH(parse_node_start("hca mlx5_0\nlink eth1 admin=1\n"), ContainsSubstring("line 2 lacks admin= or carrier="));
    CHECK_THROWS_WITH(parse_node_start("nic eth1\n"), ContainsSubstring("line 1 starts with \"nic\""));
    CHECK_THROWS_WITH(parse_node_start("link eth1 admin=1 carrier=2\n"), ContainsSubstring("line 1"));
    CHECK_THROWS_WITH(parse_node_start("link eth1 admin=1 carrier=1 changes=x\n"), ContainsSubstring("not KEY=NUMBER"));
    CHECK_THROWS_WITH(parse_node_start("link eth1 admin=1 carrier=1 colour=1\n"), ContainsSubstring("the key \"colour\""));
    CHECK_THROWS_WITH(parse_node_start("link eth1 admin=1 carrier=1\nlink eth1 admin=1 carrier=1\n"), ContainsSubstring("twice"));
    CHECK_THROWS_WITH(parse_node_start("gpu 0000:17:00.0 extra\n"), ContainsSubstring("words after"));
    CHECK_THROWS_WITH(parse_node_start("gpu \x01\n"), ContainsSubstring("line 1 is not"));
    std::string many;
    for (int i = 0; i <= 4096; ++i) many += "hca h" + std::to_string(i) + "\n";
    CHECK_THROWS_WITH(parse_node_start(many), ContainsSubstring("more than 4096 lines"));
}

TEST_CASE("device_signs: an RDMA device or a GPU present at the start and gone at the end", "[postmortem][links]") {
    const NodeStart start = node_start({}, {"mlx5_0", "mlx5_1"}, {"0000:17:00.0", "0000:65:00.0"});
    CHECK(device_signs(start, {"mlx5_0", "mlx5_1"}, {"0000:17:00.0", "0000:65:00.0"}, T).empty());
    const auto s = device_signs(start, {"mlx5_0", "mlx5_2"}, {"0000:17:00.0"}, T);
    REQUIRE(s.size() == 2);
    CHECK(s[0].sign == Sign::hca_lost);
    CHECK(s[0].device == "mlx5_1");
    CHECK(s[0].text == "RDMA device mlx5_1 present at the job's start is gone at its end");
    CHECK(s[1].sign == Sign::gpu_lost);
    CHECK(s[1].device == "0000:65:00.0");
    CHECK(s[1].t_ns == T);
    // A device that appeared during the job is nothing.
    CHECK(device_signs(node_start({}, {}, {}), {"mlx5_0"}, {"0000:17:00.0"}, T).empty());
}

namespace {
// Two nodes of 2 ranks, run with requeue; rank 3 (n02, local 1) ends with `ws` at T, the rest exit 1 a second later.
std::vector<NodeRecord> job(int ws) {
    std::vector<NodeRecord> recs;
    for (std::uint32_t n = 0; n < 2; ++n) {
        NodeRecord r;
        r.node = "n0" + std::to_string(n + 1), r.job = 7, r.job_nodes = {"n01", "n02"};
        for (std::uint32_t l = 0; l < 2; ++l) {
            TaskEnd t;
            t.node = r.node, t.job = 7, t.rank = n * 2 + l, t.local_rank = l, t.pid = std::int32_t(100 + t.rank);
            t.wait_status = 1 << 8, t.t_ns = T + 1000 * kMs, t.requeue_on_fail = true;
            r.tasks.push_back(t);
        }
        recs.push_back(std::move(r));
    }
    recs[1].tasks[1].wait_status = ws, recs[1].tasks[1].t_ns = T;
    return recs;
}
Evidence sign(Sign s, std::string device, std::int64_t t = T + 500 * kMs) {
    Evidence e;
    e.sign = s, e.device = std::move(device), e.t_ns = t, e.text = "x";
    return e;
}
}  // namespace

TEST_CASE("verdict: a GPU or an RDMA device lost is the node's fault, and requeues the job without it", "[postmortem][links]") {
    SECTION("a GPU gone: the node, above an OOM") {
        auto recs = job(SIGKILL);
        recs[1].tasks[1].oom_kills = 1;
        recs[1].evidence.push_back(sign(Sign::gpu_lost, "0000:17:00.0"));
        const Verdict v = judge(recs, {});
        CHECK(v.cause == Cause::gpu_lost);
        CHECK(v.node == "n02");
        CHECK(v.rank == 3u);
        CHECK(v.node_class);
        CHECK(v.detail == "GPU 0000:17:00.0 gone from the PCI bus since the job's start");
        CHECK_THAT(render_line(v), ContainsSubstring("stopped by n02 (rank 3, local 1): GPU 0000:17:00.0 gone from the PCI bus"));
        CHECK(std::string(to_string(v.cause)) == "gpu-lost");
        CHECK(should_requeue(v, recs));
    }
    SECTION("an RDMA device gone: the node, above its links' echo") {
        auto recs = job(1 << 8);
        recs[1].evidence.push_back(sign(Sign::link_down, "ib0", T + 100 * kMs));
        recs[1].evidence.push_back(sign(Sign::hca_lost, "mlx5_0"));
        const Verdict v = judge(recs, {});
        CHECK(v.cause == Cause::hca_lost);
        CHECK(v.node == "n02");
        CHECK(v.detail == "RDMA device mlx5_0 gone since the job's start");
        CHECK(std::string(to_string(v.cause)) == "hca-lost");
        CHECK(should_requeue(v, recs));
    }
    SECTION("a peer's link that flapped before the first failure moves the failure there") {
        auto recs = job(1 << 8);
        recs[0].evidence.push_back(sign(Sign::link_down, "eth1", T - 100 * kMs));
        const Verdict v = judge(recs, {});
        CHECK(v.cause == Cause::link_down);
        CHECK(v.node == "n01");
    }
}
