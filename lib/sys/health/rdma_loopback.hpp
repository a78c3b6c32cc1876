// The node check's RDMA test at the full level: on each compute port that is
// up, one queue pair writes into another on the same port for a moment (the
// preflight's RdmaEndpoint, both ends here). It exercises the HCA, its
// firmware and its PCIe path, not the cable (the HCA loops the writes back
// inside); the job check's rdma stage tests the fabric between nodes.
#pragma once
#include <vector>

#include "../stages/stage.hpp"

namespace gangway::sys {

struct LoopbackOptions {
    long ms = 500;              // of writing, per port
    gpu::Thresholds t;          // rdma_ratio, gid_index, ib_rate_gbps
};
// "rdma": a finding per port that fails to connect or write, or writes below
// rdma_ratio x its rate; skipped when no port is up.
StageOutcome run_rdma_loopback(const std::vector<verbs::Port>& ports, const LoopbackOptions& o);

}  // namespace gangway::sys
