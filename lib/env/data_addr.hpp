// Choosing each node's address on the data network from name resolution
// results. Pure: the resolver and the interface list are passed in, so tests
// feed fixtures and the plugin feeds getaddrinfo/getifaddrs.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "cluster_env.hpp"
#include "config.hpp"
#include "netaddr.hpp"

namespace gangway {

using Resolver = std::function<std::vector<IpAddr>(const std::string& name)>;

// The data address of each node in `which` (indexes into `nodes`), in that
// order, one lookup each. The name to resolve is addr_template applied to the
// node, or the node name itself. Of its addresses, the first on the data
// interface's networks (`local_nets`, this node's addresses on cfg.iface) is
// taken; with a template and no match the first address is taken (the admin
// named the data name explicitly); with no iface configured the first address
// is taken. Throws gangway::Error naming the node and what to configure.
std::vector<IpAddr> resolve_data_addrs(const Config& cfg, const std::vector<std::string>& nodes,
                                       const std::vector<unsigned>& which, const std::vector<IfaceAddr>& local_nets,
                                       const Resolver& resolve);

// Whether a step of `nnodes` nodes gets NODE_ADDRS (at most cfg.node_addrs_max).
bool sets_node_addrs(const Config& cfg, std::size_t nnodes);

// What this node's tasks need: node 0's and this node's address (two lookups,
// one on node 0), and every node's when the step gets NODE_ADDRS (one lookup
// per node). With an iface, this node's address must be one of its own there.
// Throws gangway::Error as resolve_data_addrs, and when cfg.iface has no
// address here or this node's address is not on it.
NodeAddrs find_node_addrs(const Config& cfg, const std::vector<std::string>& nodes, unsigned self,
                          const std::vector<IfaceAddr>& local_nets, const Resolver& resolve);

}  // namespace gangway
