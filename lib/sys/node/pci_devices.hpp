// The PCI functions sysfs lists, read from the kernel's own attribute files
// under a root directory (a copy of a node's /sys in tests,
// GANGWAY_SYSFS_ROOT): vendor, device and class, no config space (a
// discovery's config-space reads cost milliseconds, a VM traps each one).
// The one place that walks <root>/sys/bus/pci/devices for GPUs: the plugin
// (does this node have a GPU?), the job check's node card (how many NVIDIA
// GPUs?) and the node check (which GPUs, with their links) ask it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gangway::sys {

struct PciFunction {
    std::string bus_id;            // 0000:17:00.0, the directory's name
    std::uint16_t vendor = 0;      // 0x10de NVIDIA, 0x1002 AMD
    std::uint16_t device = 0;      // 0 when the file is missing
    std::uint32_t pci_class = 0;   // 0x030200: class, subclass, programming interface
};

// <root>/sys/bus/pci/devices: each function's directory, by bus id.
std::string pci_devices_dir(const std::string& root);

// The functions that are GPUs by the pinning's rule (is_gpu_pci, lib/pin/
// topology.hpp), in bus-id order.
std::vector<PciFunction> pci_gpus(const std::string& root);

// The walk itself: `visit` for each GPU in the directory's order, until it
// returns false.
void each_pci_gpu(const std::string& root, const std::function<bool(const PciFunction&)>& visit);

// Whether the PCI bus under `root` holds a GPU: a few microseconds, so the
// plugin asks it before choosing a discovery with or without PCI.
bool pci_has_gpu(const std::string& root);

}  // namespace gangway::sys
