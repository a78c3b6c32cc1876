// A PCI device's link as sysfs gives it, as plain data: the node check judges
// it (lib/health/judge_links) and the job check's cuda stage reports a GPU's,
// both from the one reader, lib/sys/devices/pci_link. Here, below both, so
// that the reader returns it without including either check.
#pragma once
#include <optional>
#include <string>

namespace gangway {

// One end of a PCIe link as sysfs gives it: current_link_speed/_width and
// max_link_speed/_width. Generations from the speed (gpu::pcie_gen_from_speed).
struct LinkEnd {
    int cur_gen = 0, max_gen = 0;        // 0: unknown
    int cur_width = -1, max_width = -1;  // -1: unknown; 0: the link is down
};

struct PciDevice {
    std::string bus_id;                  // "0000:17:00.0"; "" when sysfs does not say
    LinkEnd link;                        // the device's own attributes
    std::optional<LinkEnd> upstream;     // the bridge port above it: the link's other end
};

}  // namespace gangway
