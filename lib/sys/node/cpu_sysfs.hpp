// The CPU half of a node's topology (PUs, cores, NUMA nodes, packages) read
// straight from Linux's sysfs lists, for the plugin on nodes where only CPUs
// matter to the plan (no GPU, no NIC named by the site).
//
// Why not hwloc there: hwloc's Linux backend also parses /proc/cpuinfo and,
// for every PU, ten cache index directories, then the DMI, meminfo,
// hugepage and cgroup files, none of which the plan reads: about 70 files on
// a 2-PU VM, several thousand on a 256-PU node, in every slurmstepd of every
// step. This reader opens one file per core and per NUMA node (7 on that VM).
//
// It gives what hwloc gives for the same files (tests/unit/cpu_sysfs_test.cpp
// writes sysfs trees of the fixture machines and reads each with both), and it
// gives nothing where hwloc has rules of its own it would have to copy: a NUMA
// node without CPUs (HBM, CXL, GPU memory), a CPU without a package id, a
// kernel without NUMA in sysfs, an unreadable or inconsistent file. The
// caller then asks hwloc (load_topology does).
#pragma once
#include <optional>
#include <string>

#include "../../pin/topology.hpp"

namespace gangway::sys {

// `root` as sysfs_root(): "/" for this machine, else a tree's top directory.
// Cores come in hwloc's logical order (by package, then by first PU), which
// is the order of SLURM's core ids. No GPUs, NICs or PCI locations are read.
std::optional<Topology> read_cpu_topology(const std::string& root);

}  // namespace gangway::sys
