// The node check's reading of sysfs, under a root directory (a copy of a
// node's /sys in tests, GANGWAY_SYSFS_ROOT): the compute GPUs on the PCI bus
// with their links, the compute RDMA NICs with their links, their ports with
// the link error counters. Cheap: attribute files only, no PCI config space.
#pragma once
#include <string>
#include <vector>

#include "../../health/facts.hpp"
#include "../../pin/placement.hpp"  // NicFilter

namespace gangway::sys {

// PCI functions that are compute GPUs (the pinning's rule, is_gpu_pci), by bus id.
std::vector<health::GpuFacts> read_pci_gpus(const std::string& root);

// The compute RDMA NICs: on the live system ("/") those the pinning would
// use were all their ports up (placement's compute_nics over the live
// topology, so a NIC whose port is down is still checked); under a fixture
// root, or when the topology cannot be read, every RDMA device; `filter`
// (the site's nic_include / nic_exclude) applies either way.
std::vector<std::string> compute_rdma_nics(const std::string& root, const NicFilter& filter);

// Each NIC's PCI device (<root>/sys/class/infiniband/<nic>/device) and link.
std::vector<health::NicFacts> read_nic_facts(const std::string& root, const std::vector<std::string>& nics);

// Their ports (read_ib_ports) with counters/{symbol_error,link_downed,link_error_recovery}.
std::vector<health::PortFacts> read_ports(const std::string& root, const std::vector<std::string>& nics);

}  // namespace gangway::sys
