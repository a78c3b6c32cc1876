// A Placement for people (a table) and for programs (compact JSON).
#pragma once
#include <string>

#include "placement.hpp"

namespace gangway {

// Columns: task, GPU, NIC (name:port), netdev, NUMA node, cores (compact cpu
// list, "0-13,112-125"), PCIe distance, why this NIC (nic_reason); then the
// node-wide NCCL_IB_HCA line.
std::string format_placement_table(const Placement& plan);

// Why a task got its NICs: on its GPU's switch, the nearest compute NIC, or
// the fallback (no NIC on any GPU's switch); "-" without a NIC.
const char* nic_reason(const TaskPlacement& t);

// What the table cannot say: the GPU index order SLURM uses here (and whether
// it is known), and for each NIC no task got, why not. One line each.
std::string format_placement_notes(const Topology& topo, const NicFilter& filter, const Placement& plan);

// {"tasks":[{"local_rank":0,"gpus":["0000:18:00.0"],"nics":["mlx5_0"],
//   "cpus":[0,1,2],"numa":0,"distance":"switch"}],"nccl_ib_hca":"=mlx5_0:1"}
// numa is null for a task spanning NUMA nodes, distance null without a NIC.
// One line, no spaces, no trailing newline.
std::string format_placement_json(const Placement& plan);

}  // namespace gangway
