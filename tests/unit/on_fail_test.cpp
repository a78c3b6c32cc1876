// What `gangway run/check` does with bad nodes after the verdict: drain
// requests for the admins' Epilog (lib/preflight/drain) and the nodes a
// requeued job excludes (lib/slurm/requeue).
#include "catch_compat.hpp"

#include "../../lib/base/error.hpp"
#include "../../lib/preflight/drain.hpp"
#include "../../lib/slurm/requeue.hpp"

using namespace gangway::preflight;
using gangway::slurm::requeue_exclusions;

namespace {

NodeResult node(const std::string& name, NodeStatus s, std::vector<std::string> reasons = {}) {
    NodeResult n;
    n.name = name;
    n.status = s;
    n.reasons = std::move(reasons);
    return n;
}

}  // namespace

TEST_CASE("drain requests: one per node the checks found bad, reasons safe for the Epilog") {
    Report r;
    r.job_id = "42";
    r.nodes = {node("node08", NodeStatus::ok),
               node("node09", NodeStatus::missing, {"never checked in"}),
               node("node10", NodeStatus::slow, {"sending 0.4 Gb/s; $(rm -rf /) `x`", "second reason"}),
               node("node11", NodeStatus::lost, {"task 3 exited"}),
               node("node12", NodeStatus::unreachable),
               node("node13", NodeStatus::mismatch, {"gpus 7 (others 8)"}),
               node("node14", NodeStatus::faulty, {std::string(200, 'x') + "\"'\\\n"})};
    const auto d = drain_requests(r, {});
    REQUIRE(d.size() == 4);
    CHECK(d[0].node == "node10");
    CHECK(d[0].file == "gangway-drain.42.node10");
    CHECK(d[0].text == "node=node10\njob=42\nreason=slow sending 0.4 Gb/s;  (rm -rf /)  x \n");
    CHECK(d[1].text == "node=node12\njob=42\nreason=unreachable\n");
    CHECK(d[2].node == "node13");
    CHECK(d[3].node == "node14");
    CHECK(d[3].text == "node=node14\njob=42\nreason=faulty " + std::string(113, 'x') + "\n");  // 120 characters
    CHECK(drain_requests(Report{}, {}).empty());
}

TEST_CASE("a user's own threshold drains nothing: --expect-gbps=100000 made every node slow") {
    Report r;
    r.job_id = "42";
    r.nodes = {node("node08", NodeStatus::slow, {"sending 9 Gb/s, expected 100000"}),
               node("node09", NodeStatus::slow, {"sending 9 Gb/s, expected 100000"})};
    CHECK(drain_requests(r, {"--expect-gbps"}).empty());
    CHECK(drain_requests(r, {}).size() == 2);
    CHECK(threshold_vars_set({{"GANGWAY_NCCL_BUSBW_GBPS", "900"}, {"GANGWAY_CHECK", "full"}, {"GANGWAY_SLOW_RATIO", ""}}) ==
          std::vector<std::string>{"GANGWAY_NCCL_BUSBW_GBPS"});
    CHECK(threshold_vars_set({{"GANGWAY_EXPECT_GBPS", "1"}, {"GANGWAY_OUTLIER_Z", "9"}}).size() == 2);
}

TEST_CASE("the job's first node, whose Epilog alone decides its drains") {
    CHECK(drain_deciding_node("node[08-10]") == "node08");
    CHECK(drain_deciding_node("gpu-b[1-2],gpu-a7") == "gpu-b1");  // SLURM's order, not sorted
    CHECK(drain_deciding_node("").empty());
    CHECK_THROWS_AS(drain_deciding_node("node[08-"), gangway::Error);
}

TEST_CASE("a requeued job keeps its own exclusions and adds the bad nodes once") {
    // The ExcNodeList field (squeue's %x, lib/slurm/job_view.hpp).
    CHECK(requeue_exclusions("node[01-02]", {"node02", "node05", "node05"}) == std::vector<std::string>{"node01", "node02", "node05"});
    CHECK(requeue_exclusions("(null)", {"node05"}) == std::vector<std::string>{"node05"});
    CHECK(requeue_exclusions("", {"node05"}) == std::vector<std::string>{"node05"});
    CHECK(requeue_exclusions("node03", {"node05"}) == std::vector<std::string>{"node03", "node05"});
    CHECK(requeue_exclusions("node03", {}) == std::vector<std::string>{"node03"});
    // A list that does not expand is dropped rather than passed on to scontrol.
    CHECK(requeue_exclusions("node[0 ", {"node05"}) == std::vector<std::string>{"node05"});
}
