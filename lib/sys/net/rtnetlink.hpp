// One rtnetlink dump (RTM_GETLINK, RTM_GETQDISC, ...) of this network
// namespace: the request sent, each answer's messages handed to `on` until
// NLMSG_DONE, each wait for an answer at most 2 s, at most `max_messages`.
// The post-mortem's links and the watch's link queues read through it.
// (And which interfaces have an address, which both ask.)
#pragma once
#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "../../base/result.hpp"

namespace gangway::sys {

// `request`: the family header after the nlmsghdr (an ifinfomsg, a tcmsg)
// and any attributes; `what` names the list in a Failure ("the links").
Result<void> rtnetlink_dump(std::uint16_t type, std::string_view request, std::string_view what, std::size_t max_messages,
                            const std::function<void(const nlmsghdr*)>& on);

// The names of this namespace's interfaces with an IPv4 or a non-link-local
// IPv6 address (getifaddrs), sorted, each once: the node's own links.
std::vector<std::string> addressed_interfaces();

}  // namespace gangway::sys
