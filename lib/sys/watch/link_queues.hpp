// Root's view of the node's links while a job runs (issue 43): for each
// addressed interface of this network namespace (the node's data links; not
// loopback), what it sent and what its root queueing discipline held back:
// the kernel's counters through rtnetlink (RTM_GETLINK's IFLA_STATS64,
// RTM_GETQDISC's TCA_STATS2), not /sys/class/net, which shows the namespace
// that mounted sysfs. A link slower than the job's traffic (a degraded port,
// a shaped or congested one) queues past its rate: its qdisc's overlimits
// and drops grow, and the judgement compares them between nodes.
#pragma once
#include <vector>

#include "../../base/result.hpp"
#include "../../watch/pace.hpp"

namespace gangway::sys::watch {

// At most kMaxLinkQueues interfaces; each of rtnetlink's answers within 2 s.
Result<std::vector<gangway::watch::LinkQueue>> read_link_queues();

}  // namespace gangway::sys::watch
