// What the plugin asks of the network: name resolution and this node's
// interface addresses, no traffic. (The launcher's sockets are lib/sys/net.)
#pragma once
#include <string>
#include <vector>

#include "../../env/netaddr.hpp"

namespace gangway::sys {

// getaddrinfo(name); IPv4 first, then IPv6, duplicates removed. Empty on failure.
std::vector<IpAddr> resolve_host(const std::string& name);

// Addresses of interface `iface` (getifaddrs); empty if it has none or does not exist.
std::vector<IfaceAddr> iface_addrs(const std::string& iface);

// The kernel's host name up to its first dot (uname): only root sets it,
// unlike the job's environment. postmortem_dir='s %n, on both its sides
// (slurmstepd's plugin and the Epilog's collector); "" when uname fails.
std::string short_host_name();

}  // namespace gangway::sys
