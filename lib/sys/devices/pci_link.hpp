// A PCI device's link as sysfs shows it, and its upstream bridge port's:
// <root>/sys/bus/pci/devices/<bus_id>/{current,max}_link_{speed,width} and
// those of the bridge above it (its parent directory in /sys/devices). The
// node check reads its GPUs' and NICs' links here, the cuda stage a GPU's
// right after its copies. Cheap: attribute files only.
#pragma once
#include <filesystem>
#include <string>

#include "../../base/pci_device.hpp"  // PciDevice, LinkEnd: plain data

namespace gangway::sys {

PciDevice read_pci_link(const std::string& root, const std::string& bus_id);

// The device a sysfs link names (/sys/class/infiniband/<nic>/device): its
// bus id from the link's target ("" when that is no bus id), its link.
PciDevice read_pci_link_at(const std::filesystem::path& device_link);

}  // namespace gangway::sys
