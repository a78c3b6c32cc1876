// Loading gangway's Topology: hwloc discovery (live, or an hwloc v2 XML
// file) and gangway's node-local cache file, which spares each task start
// a full discovery. The only file that includes hwloc.
#pragma once
#include <string>

#include "../topology.hpp"

namespace gangway::sys {

// This machine, I/O devices included (PCI + sysfs only: the CUDA/NVML/OpenCL/
// RSMI/LevelZero/GL components are disabled, they are slow or hang). PUs the
// calling process may not use are kept: restrict with the step's cpuset.
// Throws gangway::Error if hwloc fails.
Topology load_live_topology();

// An hwloc XML export (lstopo --of xml, v2 format). Throws gangway::Error when
// the file is missing or not a topology.
Topology load_topology_xml(const std::string& path);

// The cache: gangway's own small text format (see topology.hpp). Written
// atomically (temporary file + rename), so concurrent readers never see half
// a file. Both throw gangway::Error with the path and what to do.
void write_topology_cache(const Topology& topo, const std::string& path);
Topology read_topology_cache(const std::string& path);

// What the plugin and `gangway topo` call: "" -> live discovery; a gangway
// cache file -> read_topology_cache; anything else -> load_topology_xml.
Topology load_topology(const std::string& path);

}  // namespace gangway::sys
