// Loading gangway's Topology: hwloc discovery (live, or an hwloc v2 XML
// file) and gangway's node-local cache file, which spares each task start
// a full discovery. The only file that includes hwloc.
#pragma once
#include <string>

#include "../../base/result.hpp"

#include "../../pin/topology.hpp"

namespace gangway::sys {

// What a live discovery looks at. Devices: PCI devices from sysfs (GPUs,
// NICs, their bridges). CpusOnly: PUs, cores, NUMA nodes and packages, no
// PCI at all: on a VM each PCI device's config space read traps to the
// hypervisor (2.5 ms a device measured here), the bulk of a discovery.
enum class IoScope { Devices, CpusOnly };

// This machine (hwloc's Linux backend only: no component plugin is loaded
// and the CUDA/NVML/OpenCL/RSMI/LevelZero/GL components are disabled, they
// are slow or hang). PUs the calling process may not use are kept: restrict
// with the step's cpuset. I/O, so each loader here returns a Result
// (lib/base/result.hpp) whose failure is the user's line: what is wrong, what
// to do. Here: hwloc could not discover, or found no CPUs.
Result<Topology> load_live_topology(IoScope io = IoScope::Devices);

// An hwloc XML export (lstopo --of xml, v2 format), or why not: the file is
// missing or not a topology (empty, truncated, hwloc 3's format, ...).
Result<Topology> load_topology_xml(const std::string& path);

// The cache: gangway's own small text format (see topology.hpp). Written by
// write_file_atomic (file.hpp: a private random name created with
// O_EXCL|O_NOFOLLOW, renamed into place, mode 0644), so concurrent readers
// never see half a file and a link planted in the directory is never written
// through. Both fail with the path and what to do.
Result<void> write_topology_cache(const Topology& topo, const std::string& path);
Result<Topology> read_topology_cache(const std::string& path);

// What the plugin and `gangway topo` call: "" -> live discovery (of `io`;
// CpusOnly reads sysfs's CPU lists directly where read_cpu_topology can, see
// cpu_sysfs.hpp, and asks hwloc otherwise); a
// gangway cache file -> read_topology_cache; anything else -> load_topology_xml.
Result<Topology> load_topology(const std::string& path, IoScope io = IoScope::Devices);

}  // namespace gangway::sys
