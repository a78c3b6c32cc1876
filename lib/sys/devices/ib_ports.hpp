// The RDMA devices and their ports as sysfs shows them, under a root
// directory (a copy of a node's /sys in tests, GANGWAY_SYSFS_ROOT). The one
// reader of <root>/sys/class/infiniband: the job check's node card, its verbs
// stage and the node check read their ports here.
#pragma once
#include <string>
#include <vector>

#include "../../preflight/rdma_checks.hpp"  // verbs::Port

namespace gangway::sys {

// <root>/sys/class/infiniband: a directory per RDMA device (mlx5_0, ...).
std::string ib_class_dir(const std::string& root);

// The RDMA devices' names in natural order (mlx5_2 < mlx5_10).
std::vector<std::string> ib_devices(const std::string& root);

// What read_ib_ports reads of each port. Brief: state and rate (what the
// node card compares between nodes). Full: also phys_state, link_layer, the
// non-zero GIDs with their types and netdevs, and a RoCE netdev's MTU (what
// the verbs stage and the node check judge).
enum class PortDetail { brief, full };

// Each port under <root>/sys/class/infiniband/<hca>/ports/<p>/ of the HCAs
// named in `hcas` (empty: every HCA), in natural order of HCA then port.
std::vector<verbs::Port> read_ib_ports(const std::string& root, const std::vector<std::string>& hcas = {},
                                       PortDetail detail = PortDetail::full);

// <root>/sys/class/infiniband/<hca>/ports/<port>: its counters/ are there.
std::string ib_port_dir(const std::string& root, const std::string& hca, unsigned port);

}  // namespace gangway::sys
