// `gangway gpu-check --local`'s report of this node alone (lib/preflight/local_report).
#include "catch_compat.hpp"

#include "../../lib/preflight/local_report.hpp"

using namespace gangway::preflight;

TEST_CASE("a node's own stages as a report: faulty when one failed, its findings named") {
    std::vector<LocalStage> stages{
        {{"cuda", StageStatus::ok, "2 GPU(s)", 1.5}, {{"gpu 1 (0000:10:00.0)", "kernel note only"}}},
        {{"nccl", StageStatus::failed, "init failed", 0.25}, {}},
        {{"verbs", StageStatus::skipped, "no RDMA devices", 0}, {}}};
    auto r = local_report("g1", true, stages);
    CHECK(r.mode == "full");
    CHECK(r.bootstrap == "local");
    CHECK(r.seconds == Approx(1.75));
    REQUIRE(r.stages.size() == 3);
    CHECK(r.stages[1].name == "nccl");
    REQUIRE(r.nodes.size() == 1);
    CHECK(r.nodes[0].name == "g1");
    CHECK(r.nodes[0].status == NodeStatus::faulty);
    // A finding of an ok stage is still named; a failed stage without findings speaks through its detail.
    CHECK(r.nodes[0].reasons == std::vector<std::string>{"gpu 1 (0000:10:00.0): kernel note only", "nccl: init failed"});
    CHECK(r.findings == std::vector<std::string>{"g1: cuda: gpu 1 (0000:10:00.0): kernel note only", "g1: nccl: init failed"});
    CHECK(verdict(r) == Verdict::degraded);

    // A failed stage with findings: the findings, not the detail; aborted counts as failed.
    stages = {{{"cuda", StageStatus::aborted, "deadline passed", 60}, {{"gpu 0", "no answer"}}}};
    r = local_report("g2", false, stages);
    CHECK(r.mode == "quick");
    CHECK(r.nodes[0].status == NodeStatus::faulty);
    CHECK(r.nodes[0].reasons == std::vector<std::string>{"gpu 0: no answer"});

    // Skipped everywhere: ok, nothing to say.
    r = local_report("g3", false, {{{"verbs", StageStatus::skipped, "no RDMA devices", 0}, {}}});
    CHECK(r.nodes[0].status == NodeStatus::ok);
    CHECK(r.nodes[0].reasons.empty());
    CHECK(r.findings.empty());
    CHECK(local_report("g4", false, {}).nodes.size() == 1);
}
