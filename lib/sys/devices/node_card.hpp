// Reading what a node is from /sys and /proc, under a root directory so that
// tests read fixture trees: NICs (/sys/class/net, /sys/class/infiniband),
// GPUs (PCI vendor 0x10de, display class), software versions.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "../../preflight/card.hpp"

namespace gangway::sys {

// root "" or "/" is the live system. Addresses are not in sysfs: the caller
// fills Nic::addrs (getifaddrs). Loopback is left out.
std::vector<preflight::Nic> read_nics(const std::string& root);
// The live system's network interfaces as this process's network namespace
// sees them (getifaddrs, SIOCGIFFLAGS, SIOCETHTOOL), with their addresses:
// /sys/class/net shows the namespace that mounted /sys, which need not be ours.
// Sysfs values are used where /sys shows the same interface (same ifindex).
std::vector<preflight::Nic> live_net_nics();
// The NVIDIA GPUs on the PCI bus under `root`: pci_gpus (pci_devices.hpp),
// the same GPUs the pinning and the node check see, NVIDIA's of them.
unsigned count_gpus(const std::string& root);
// driver (NVIDIA kernel module), cuda (toolkit), nccl (libnccl.so.X.Y.Z), kernel;
// "none" where not found.
std::map<std::string, std::string> read_versions(const std::string& root);

}  // namespace gangway::sys
