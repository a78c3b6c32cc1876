// Choosing each node's address on the data network from name resolution
// results. Pure: the resolver and the interface list are passed in, so tests
// feed fixtures and the plugin feeds getaddrinfo/getifaddrs.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cluster_env.hpp"
#include "config.hpp"
#include "netaddr.hpp"

namespace gangway {

using Resolver = std::function<std::vector<IpAddr>(const std::string& name)>;

// For each node: the name to resolve is addr_template applied to it, or the
// node name itself. Of its addresses, the first on the data interface's
// networks (`local_nets`, this node's addresses on cfg.iface) is taken; with a
// template and no match the first address is taken (the admin named the data
// name explicitly); with no iface configured the first address is taken.
// Throws gangway::Error naming the node and what to configure.
NodeAddrs find_node_addrs(const Config& cfg, const std::vector<std::string>& nodes, unsigned self,
                          const std::vector<IfaceAddr>& local_nets, const Resolver& resolve);

}  // namespace gangway
