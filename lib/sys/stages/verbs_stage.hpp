// The verbs stage: this node's RDMA ports from sysfs, judged by
// verbs::judge_ports; and RdmaEndpoint, the RDMA write data path of the
// coordinator's rdma stage (lib/sys/preflight/coordinator_gpu.cpp): on each
// rail, every speaker opens an endpoint to send and one to receive, their
// QpInfo travels through the coordinator (verbs::qp_info_to_kv), each
// connect()s with its peer's, then the sender calls write_for().
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "../../base/result.hpp"
#include "stage.hpp"

namespace gangway::sys {

// The ports themselves come from the one sysfs reader, read_ib_ports
// (lib/sys/devices/ib_ports.hpp).

struct VerbsStageOptions {
    std::string root = "/";
    std::vector<std::string> hcas;  // the compute HCAs (placement's compute_nics); empty: every HCA
    bool query_mtu = true;          // ask libibverbs for the active MTU (live system only)
    gpu::Thresholds t;
};
// Ports of the compute HCAs judged from sysfs (verbs::judge_ports).
StageOutcome run_verbs_stage_local(const VerbsStageOptions& o, std::vector<verbs::Port>* ports = nullptr);

// The compute HCAs of this node: placement's compute_nics() over the live
// topology, under the site/user filter GANGWAY_NIC_INCLUDE / _EXCLUDE
// (comma lists); every HCA when the topology cannot be read.
std::vector<std::string> compute_hcas(const EnvMap& env);

// One RC queue pair on one HCA port with a registered buffer, for RDMA write
// bandwidth between two nodes. Without RDMA hardware, the test double of
// libibverbs in tests/fakes (RDMA writes over TCP) exercises it: see
// tests/preflight_gpu.sh and tests/integration/preflight_gpu.sh.
class RdmaEndpoint {
public:
    // An endpoint on `port`, or why not (no libibverbs, no such HCA, no
    // locked memory, ...). I/O, so a Result (lib/base/result.hpp).
    static Result<std::unique_ptr<RdmaEndpoint>> open(const verbs::Port& port, unsigned gid_index, std::size_t buffer_bytes);
    ~RdmaEndpoint();
    RdmaEndpoint(const RdmaEndpoint&) = delete;
    RdmaEndpoint& operator=(const RdmaEndpoint&) = delete;
    const verbs::QpInfo& local() const;
    // INIT -> RTR -> RTS with verbs::choose_qp_attrs, or which step failed.
    Result<void> connect(const verbs::QpInfo& remote);
    // RDMA writes of `msg_bytes` into the peer's buffer for `ms`; payload
    // bytes per second as completed (RC: acknowledged by the peer), or why
    // not: a completion error (12: retry exceeded, the peer is unreachable
    // on this path), or a stalled path.
    Result<double> write_for(long ms, std::size_t msg_bytes = std::size_t(8) << 20);

private:
    RdmaEndpoint();
    struct Impl;
    std::unique_ptr<Impl> p_;
};

}  // namespace gangway::sys
