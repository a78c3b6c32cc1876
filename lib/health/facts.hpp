// What the node check reads from the node, as plain data: its GPUs and
// compute NICs with their PCIe links, its RDMA ports with their error
// counters, what NVML says of each GPU. lib/sys/health/node_facts fills it
// from sysfs (a fixture tree in tests) and NVML; the judges take it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../base/pci_device.hpp"
#include "../preflight/rdma_checks.hpp"  // verbs::Port

namespace gangway::health {

// A GPU's or NIC's PCIe link: plain data below both checks (lib/base/pci_device.hpp).
using gangway::LinkEnd;
using gangway::PciDevice;

struct GpuFacts {
    PciDevice pci;
    std::uint16_t vendor = 0;
    std::string model;                   // the driver's name ("NVIDIA H100 80GB HBM3"), "" unknown
};

struct NicFacts {
    std::string name;                    // mlx5_0
    PciDevice pci;
};

// The link error counters of an RDMA port (sysfs ports/N/counters/) that the check follows.
inline const char* const kErrorCounters[] = {"symbol_error", "link_downed", "link_error_recovery"};

struct PortFacts {
    verbs::Port port;
    std::map<std::string, std::uint64_t> counters;  // counters/symbol_error, link_downed, link_error_recovery
};

// NVML's view (lib/sys/health/nvml_stage). Codes are NVML's nvmlReturn_t.
inline constexpr int kNvmlNoPermission = 4, kNvmlDriverNotLoaded = 9, kNvmlGpuIsLost = 15, kNvmlLibRmVersionMismatch = 18,
                     kNvmlUnknown = 999;
struct NvmlGpu {
    std::string bus_id, name;
    int error = 0;                       // the first call that failed on this GPU, 0 none
    std::string error_text;
    std::optional<bool> pages_pending;   // a page retirement waits for a reset
    std::optional<unsigned> pages_retired;  // single- and double-bit causes together
    std::optional<bool> rows_pending, rows_failed;  // row remapping (A100 and later)
    std::optional<std::uint64_t> ecc_uncorrected;   // volatile: since the driver loaded
    // NVLink: the links NVML answers for, and how many of them are up; unset
    // when NVML has no NVLink call or the GPU has no link (a PCIe card).
    std::optional<unsigned> nvlinks, nvlinks_up;
    bool busy = false;                   // a process computes on it (a job): not to be disturbed
};
struct NvmlFacts {
    bool loaded = false;                 // libnvidia-ml.so.1 opened
    int init_error = 0;                  // nvmlInit_v2's result when it failed
    std::string why;                     // not loaded / init failed: what
    std::vector<NvmlGpu> gpus;
};

// A GPU fault the driver logged in the kernel log: "NVRM: Xid (PCI:0000:17:00): 79, ...".
struct Xid {
    std::uint64_t seq = 0;               // the kernel log record's sequence number
    std::string bus_id;                  // "0000:17:00.0"
    unsigned xid = 0;
    std::string text;                    // the rest of the line
};

}  // namespace gangway::health
