// What both checks report, stage by stage and device by device: the job
// check's Report (report.hpp) and the node check's (lib/health/report.hpp)
// hold these, and the fleet's schema (lib/fleet/report_schema.hpp) writes
// and reads them once for both. Plain data, no behaviour: a room that
// reports a check includes this, not the other check's report.
#pragma once
#include <optional>
#include <string>

#include "stage_status.hpp"

namespace gangway::preflight {

struct StageResult {
    std::string name;
    StageStatus status = StageStatus::ok;
    std::string detail;
    double seconds = 0;
};

// Each GPU's and compute port's figures from the GPU and RDMA stages, for a
// site's records over time (the verdict is in the nodes and findings).
struct GpuRecord {
    unsigned node = 0;                     // index into nodes
    int index = 0;                         // CUDA ordinal
    std::string name, bus_id, error;
    int pcie_gen = 0, pcie_width = 0;      // the trained link; 0 unknown
    std::optional<double> h2d_gbps, d2h_gbps;
};
struct NcclRecord {
    unsigned node = 0;
    unsigned nranks = 0;                   // the node's GPUs, one rank each
    double bytes = 0;
    std::optional<double> algbw_gbps, busbw_gbps;  // nccl-tests' definitions; none when it failed
    bool data_ok = true;
    std::string error;
};
struct PortRecord {
    unsigned node = 0;
    std::string name;                      // mlx5_0/1
    double rate_gbps = 0;
    bool usable = false;                   // ACTIVE and LinkUp
};

}  // namespace gangway::preflight
