// Root's view of the node's links while a job runs (link_queues.hpp).
#include "link_queues.hpp"

#include <linux/gen_stats.h>
#include <linux/if_link.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "../net/rtnetlink.hpp"

namespace gangway::sys::watch {
namespace gw = gangway::watch;

Result<std::vector<gw::LinkQueue>> read_link_queues() {
    // The node's own links (a bridge's ports and an unplugged NIC carry no job traffic).
    const auto names = addressed_interfaces();
    std::map<int, gw::LinkQueue> by_index;
    ifinfomsg li{};
    li.ifi_family = AF_UNSPEC;
    auto links = rtnetlink_dump(RTM_GETLINK, std::string_view(reinterpret_cast<const char*>(&li), sizeof li), "links", 4096,
                                [&](const nlmsghdr* h) {
                                    if (h->nlmsg_type != RTM_NEWLINK || h->nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg))) return;
                                    const auto* ifi = static_cast<const ifinfomsg*>(NLMSG_DATA(h));
                                    gw::LinkQueue q;
                                    bool stats = false;
                                    int len = int(h->nlmsg_len - NLMSG_LENGTH(sizeof(ifinfomsg)));
                                    for (const rtattr* a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
                                        const auto* p = static_cast<const char*>(RTA_DATA(a));
                                        if (a->rta_type == IFLA_IFNAME)
                                            q.name.assign(p, strnlen(p, std::min<std::size_t>(RTA_PAYLOAD(a), IFNAMSIZ)));
                                        if (a->rta_type == IFLA_STATS64 && RTA_PAYLOAD(a) >= sizeof(rtnl_link_stats64)) {
                                            rtnl_link_stats64 st;
                                            std::memcpy(&st, p, sizeof st);
                                            q.tx_bytes = st.tx_bytes, q.tx_errors = st.tx_errors, q.tx_dropped = st.tx_dropped;
                                            stats = true;
                                        }
                                    }
                                    if (stats && !(ifi->ifi_flags & IFF_LOOPBACK) && std::binary_search(names.begin(), names.end(), q.name) &&
                                        by_index.size() < gw::kMaxLinkQueues)
                                        by_index[ifi->ifi_index] = std::move(q);
                                });
    if (!links) return Failure{links.error()};
    tcmsg tm{};
    tm.tcm_family = AF_UNSPEC;
    auto qdiscs = rtnetlink_dump(RTM_GETQDISC, std::string_view(reinterpret_cast<const char*>(&tm), sizeof tm), "queueing disciplines",
                                 65536, [&](const nlmsghdr* h) {
                                     if (h->nlmsg_type != RTM_NEWQDISC || h->nlmsg_len < NLMSG_LENGTH(sizeof(tcmsg))) return;
                                     const auto* t = static_cast<const tcmsg*>(NLMSG_DATA(h));
                                     // The root qdisc holds every packet the link sends (an mq's counts its children's).
                                     if (t->tcm_parent != TC_H_ROOT) return;
                                     const auto it = by_index.find(t->tcm_ifindex);
                                     if (it == by_index.end()) return;
                                     int len = int(h->nlmsg_len - NLMSG_LENGTH(sizeof(tcmsg)));
                                     for (const rtattr* a = reinterpret_cast<const rtattr*>(reinterpret_cast<const char*>(t) + NLMSG_ALIGN(sizeof(tcmsg)));
                                          RTA_OK(a, len); a = RTA_NEXT(a, len)) {
                                         if (a->rta_type != TCA_STATS2) continue;
                                         int inner = int(RTA_PAYLOAD(a));
                                         for (const rtattr* s = static_cast<const rtattr*>(RTA_DATA(a)); RTA_OK(s, inner); s = RTA_NEXT(s, inner))
                                             if (s->rta_type == TCA_STATS_QUEUE && RTA_PAYLOAD(s) >= sizeof(gnet_stats_queue)) {
                                                 gnet_stats_queue q;
                                                 std::memcpy(&q, RTA_DATA(s), sizeof q);
                                                 it->second.qdisc_drops = q.drops, it->second.qdisc_overlimits = q.overlimits;
                                             }
                                     }
                                 });
    if (!qdiscs) return Failure{qdiscs.error()};
    std::vector<gw::LinkQueue> out;
    for (auto& [index, q] : by_index) out.push_back(std::move(q));
    return out;
}

}  // namespace gangway::sys::watch
