// The node check's judgement: figures in (facts.hpp), records out
// (record.hpp), each failure with the one line that names the device and its
// figure. Defaults come from the hardware (each link's maximum, the best rate
// among the node's ports); the site file and SLURM's configuration add
// expectations. Pure: no I/O, nothing thrown for any input.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../preflight/gpu_checks.hpp"  // gpu::Finding, GpuResult
#include "../preflight/report.hpp"      // StageResult
#include "facts.hpp"
#include "gres.hpp"
#include "kmsg_record.hpp"  // KmsgLoss
#include "record.hpp"
#include "site_conf.hpp"

namespace gangway::health {

// What the node should have, and who said so ("node-check.conf", "gres.conf", ...).
struct Expected {
    std::optional<unsigned> gpus;
    std::string gpus_source;
    std::string model, model_source;
    std::optional<unsigned> nics, ports;
};
// The site file first, then slurm.conf's Gres=, then gres.conf.
Expected expected_from(const SiteConf& c, const GresGpus& slurm_conf, const GresGpus& gres_conf);

// gpu-count (fewer GPUs than expected fails; more does not), gpu-model per
// GPU whose model is known, nic-count and port-count where the site gave a count.
std::vector<Record> judge_inventory(const std::vector<GpuFacts>& gpus, const std::vector<NicFacts>& nics,
                                    const std::vector<PortFacts>& ports, const Expected& e);

// pcie-width and pcie-speed of one device (`label`: "gpu 0000:17:00.0",
// "nic mlx5_0"), each against the link's maximum: the smaller of the
// device's and the upstream port's. `speed_skip` non-empty: the speed is not
// judged, and that is why (an idle GPU slows its link down).
std::vector<Record> judge_link(const std::string& label, const PciDevice& d, const std::string& speed_skip);

// port-state, port-phys, and port-rate of each port that is up, against the
// site's rate, else the best rate among these ports.
std::vector<Record> judge_ports(const std::vector<PortFacts>& ports, std::optional<double> site_rate_gbps);

// port-errors: each counter's growth since `previous` ("mlx5_0/1 link_downed"
// -> value), at most the site's allowance. Without a previous run, or where a
// counter went back (a reset), the reading is only the next run's baseline.
std::vector<Record> judge_counters(const std::vector<PortFacts>& ports, const std::map<std::string, std::uint64_t>* previous,
                                   const SiteConf& c);
// The counters as the state file keeps them: "mlx5_0/1 link_downed" -> value.
std::map<std::string, std::uint64_t> counter_values(const std::vector<PortFacts>& ports);

// NVML: GPUs on the bus the driver does not see, lost GPUs, pending or too
// many retired pages, pending or failed row remapping, uncorrectable ECC
// errors. `nvidia_on_bus`: the NVIDIA GPUs' bus ids from sysfs.
std::vector<Record> judge_nvml(const NvmlFacts& n, const std::vector<std::string>& nvidia_on_bus, const SiteConf& c);

// Xids the driver logged since the last run (xid.hpp): a failed record for
// each one in the site's list on an NVIDIA GPU of this node (`node_gpus`:
// their bus ids, from sysfs and NVML). The driver names only its own GPUs,
// so Xids naming any other bus id get one skipped record, and records the
// ring buffer lost since the last run (`lost`: a flood, which any user can
// cause, may have erased an Xid) one more: a line for the logs, never a drain.
std::vector<Record> judge_xids(const std::vector<Xid>& xids, const std::vector<unsigned>& fatal,
                               const std::vector<std::string>& node_gpus, const KmsgLoss& lost);

// A stage of the preflight run here (cuda, nccl, rdma): a failed record per
// finding, one for a failure without findings, one skipped record when it
// could not run; for cuda a record per GPU (its slower copy direction as the
// figure when measured). An aborted stage gives none: it is inconclusive.
std::vector<Record> stage_records(Check c, const preflight::StageResult& r, const std::vector<gpu::Finding>& findings,
                                  const std::vector<gpu::GpuResult>& gpus = {});

}  // namespace gangway::health
