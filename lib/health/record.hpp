// What `gangway node-check` finds on a node, as plain data: one record per
// check and device, with its figure, what was expected and a one-line reason.
// The judges (inventory.hpp, links.hpp, ports.hpp, gpu_health.hpp) make them
// from figures read elsewhere (lib/sys/health); confirm.hpp decides which
// failures are confirmed; report.hpp holds them in a run's Report, render.hpp
// writes them for people and NHC, lib/fleet/report_schema.hpp as JSON.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gangway::health {

// Each check has a name of its own in the records (to_string): a fleet store
// keys on it, so a name never changes meaning.
enum class Check {
    gpu_count,     // compute GPUs on the PCI bus against SLURM's or the site's count
    gpu_driver,    // GPUs the driver (NVML) sees against those on the bus
    gpu_model,     // each GPU's model against the expected one
    nic_count,     // compute RDMA NICs against the site's count
    port_count,    // their ports against the site's count
    pcie_speed,    // a GPU's or NIC's link speed against the link's maximum
    pcie_width,    // its width against the link's maximum
    port_state,    // IB/RoCE port state: ACTIVE
    port_phys,     // physical state: LinkUp
    port_rate,     // rate against the expected rate
    port_errors,   // growth of a link error counter since the last run
    gpu_nvml,      // NVML could not read a GPU (lost, unknown error)
    gpu_pages,     // retired memory pages: pending retirement, or too many
    gpu_rows,      // row remapping: pending or failed
    gpu_ecc,       // uncorrectable ECC errors since the driver loaded
    gpu_nvlink,    // NVLinks up against the site's count or the node's best GPU
    gpu_xid,       // a fatal Xid in the kernel log since the last run
    cuda,          // the CUDA stage: context, memory, computation, copies
    nccl,          // the local NCCL all-reduce (full level)
    rdma,          // an RDMA loopback write per rail (full level)
};
const char* to_string(Check c);
// The check's name in records, reports and the state file -> the check; nullopt for another word.
std::optional<Check> parse_check(std::string_view name);

// Whether a failure of this check can be measured again at once (a re-read of
// sysfs or NVML): the repeat rule then needs no second run. Counter growth,
// kernel log events and the stages' measurements cannot.
bool retestable(Check c);
// An event the kernel or driver recorded (an Xid): evidence in itself, not a
// sample, so it needs no repeat.
bool is_event(Check c);

enum class Status { ok, failed, skipped };
const char* to_string(Status s);

struct Record {
    Check check = Check::gpu_count;
    std::string device;    // "gpu 0000:17:00.0", "mlx5_0/1", "node"
    std::string figure;    // "8", "Polling", "100"; "" when there is none (skipped)
    std::string unit;      // "lanes", "GT/s", "Gb/s", "GPUs", "" for a state
    std::string expected;  // "16", "ACTIVE", "<= 0"; "" when nothing is expected
    Status status = Status::ok;
    std::string reason;    // failed: the one line a drain names ("gpu 0000:17:00.0 PCIe x8 of x16"); skipped: why
    bool confirmed = false;  // failed, and the repeat rule holds (confirm.hpp)
};

// A failure's identity across runs: the check and the device, not the figure
// (a counter that grows by 3, then by 5, fails the same way).
struct Key {
    Check check = Check::gpu_count;
    std::string device;
    auto operator<=>(const Key&) const = default;
};
Key key_of(const Record& r);

bool any_failed(const std::vector<Record>& rs);
std::vector<const Record*> failed(const std::vector<Record>& rs, bool confirmed_only);

}  // namespace gangway::health
