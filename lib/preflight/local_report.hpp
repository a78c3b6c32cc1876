// `gangway gpu-check --local`'s report: this node's GPU and RDMA stages as
// the preflight's report of a single node, so that it renders (and exits)
// as `gangway check` does. Plain data in (each stage's line and findings),
// a Report out; running the stages and adding their per-device records is
// lib/sys/stages', printing is launcher/cmd_gpu_check.cpp's.
#pragma once
#include <string>
#include <vector>

#include "gpu_checks.hpp"
#include "report.hpp"

namespace gangway::preflight {

struct LocalStage {
    StageResult result;
    std::vector<gpu::Finding> findings;
};

// One node, `host`, faulty when a stage failed or was aborted. Each finding
// is a reason of the node and a finding of the report ("host: stage: what:
// problem"); a failed stage without findings is one through its detail.
// Mode "full" or "quick", bootstrap "local"; seconds the stages' sum.
Report local_report(const std::string& host, bool full, const std::vector<LocalStage>& stages);

}  // namespace gangway::preflight
