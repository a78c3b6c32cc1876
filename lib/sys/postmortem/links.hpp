// The post-mortem's reader of the node's links, HCAs and GPUs
// (lib/postmortem/link_signs): each network interface of this network
// namespace with its state and the kernel's carrier counters, through
// rtnetlink (RTM_GETLINK), not /sys/class/net, which shows the namespace
// that mounted sysfs (a container's or a test cluster node's is not the
// host's); its addresses through getifaddrs; the RDMA devices and GPUs from
// the one readers of sysfs (ib_devices, pci_gpus), under a root (a copy of a
// node's /sys in tests, GANGWAY_SYSFS_ROOT).
#pragma once
#include <string>
#include <vector>

#include "../../base/result.hpp"
#include "../../postmortem/link_signs.hpp"

namespace gangway::sys::postmortem {

// Every interface but loopback, at most 4,096, each of rtnetlink's answers
// within 2 s; a Failure when rtnetlink cannot be asked or does not answer.
Result<std::vector<gangway::postmortem::LinkFacts>> read_links();

// The RDMA devices' names and the GPUs' PCI bus ids under `sysfs_root`.
std::vector<std::string> present_hcas(const std::string& sysfs_root);
std::vector<std::string> present_gpus(const std::string& sysfs_root);

}  // namespace gangway::sys::postmortem
