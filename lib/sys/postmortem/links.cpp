#include "links.hpp"

#include <ifaddrs.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "../net/rtnetlink.hpp"
#include "../node/fd.hpp"
#include "../devices/ib_ports.hpp"
#include "../node/pci_devices.hpp"

namespace gangway::sys::postmortem {
namespace pm = gangway::postmortem;
namespace {

constexpr std::size_t kMaxLinks = 4096;

// A link as the dump gives it, with what tells a virtual bridge.
struct Link {
    pm::LinkFacts facts;
    int index = 0;
    std::uint32_t master = 0;  // the bridge (or bond) it is a port of; 0: none
    std::string kind;          // IFLA_INFO_KIND: "bridge", "veth", "tun", ...; "": a NIC
};

// A bridge none of whose ports is a NIC, or a bond, team or VLAN (of one).
void mark_virtual_bridges(std::vector<Link>& links) {
    for (auto& b : links) {
        if (b.kind != "bridge") continue;
        b.facts.virtual_bridge = std::none_of(links.begin(), links.end(), [&](const Link& p) {
            return p.master == static_cast<std::uint32_t>(b.index) &&
                   (p.kind.empty() || p.kind == "bond" || p.kind == "team" || p.kind == "vlan");
        });
    }
}

// One RTM_NEWLINK message's facts.
std::optional<Link> link_of(const nlmsghdr* h) {
    if (h->nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg))) return std::nullopt;
    const auto* ifi = static_cast<const ifinfomsg*>(NLMSG_DATA(h));
    Link out;
    out.index = ifi->ifi_index;
    pm::LinkFacts& l = out.facts;
    l.admin_up = ifi->ifi_flags & IFF_UP;
    l.carrier = (ifi->ifi_flags & IFF_UP) && (ifi->ifi_flags & IFF_RUNNING);
    if (ifi->ifi_flags & IFF_LOOPBACK) return std::nullopt;
    int len = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof(ifinfomsg)));
    for (const rtattr* a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
        const auto* p = static_cast<const char*>(RTA_DATA(a));
        const std::size_t n = RTA_PAYLOAD(a);
        auto u32 = [&]() -> std::optional<std::uint64_t> {
            if (n < 4) return std::nullopt;
            std::uint32_t v;
            std::memcpy(&v, p, 4);
            return v;
        };
        switch (a->rta_type) {
            case IFLA_IFNAME: l.name.assign(p, strnlen(p, std::min<std::size_t>(n, IFNAMSIZ))); break;
            case IFLA_CARRIER_CHANGES: l.changes = u32(); break;
            case IFLA_CARRIER_UP_COUNT: l.ups = u32(); break;
            case IFLA_CARRIER_DOWN_COUNT: l.downs = u32(); break;
            case IFLA_MASTER: out.master = static_cast<std::uint32_t>(u32().value_or(0)); break;
            case IFLA_LINKINFO: {
                int inner = static_cast<int>(n);
                for (const rtattr* i = static_cast<const rtattr*>(RTA_DATA(a)); RTA_OK(i, inner); i = RTA_NEXT(i, inner))
                    if (i->rta_type == IFLA_INFO_KIND) {
                        const auto* k = static_cast<const char*>(RTA_DATA(i));
                        out.kind.assign(k, strnlen(k, std::min<std::size_t>(RTA_PAYLOAD(i), 32)));
                    }
                break;
            }
            default: break;
        }
    }
    if (l.name.empty()) return std::nullopt;
    return out;
}

}  // namespace

Result<std::vector<pm::LinkFacts>> read_links() {
    struct {
        ifinfomsg i;
        rtattr a;
        std::uint32_t mask;
    } req{};
    req.i.ifi_family = AF_UNSPEC;
    // No statistics: the answer stays small (a few hundred bytes a link).
    req.a.rta_type = IFLA_EXT_MASK;
    req.a.rta_len = RTA_LENGTH(sizeof req.mask);
    req.mask = RTEXT_FILTER_SKIP_STATS;
    std::vector<Link> out;
    bool over = false;
    const auto done = rtnetlink_dump(RTM_GETLINK, std::string_view(reinterpret_cast<const char*>(&req), sizeof req), "links",
                                     kMaxLinks * 4, [&](const nlmsghdr* h) {
                                         if (h->nlmsg_type != RTM_NEWLINK) return;
                                         if (auto l = link_of(h)) {
                                             if (out.size() >= kMaxLinks) over = true;
                                             else out.push_back(std::move(*l));
                                         }
                                     });
    if (!done) return Failure{done.error()};
    if (over) return Failure{"more than " + std::to_string(kMaxLinks) + " network interfaces"};
    mark_virtual_bridges(out);
    const auto names = addressed_interfaces();
    std::vector<pm::LinkFacts> facts;
    for (auto& l : out) {
        l.facts.addressed = std::binary_search(names.begin(), names.end(), l.facts.name);
        facts.push_back(std::move(l.facts));
    }
    return facts;
}

std::vector<std::string> present_hcas(const std::string& sysfs_root) { return ib_devices(sysfs_root); }

std::vector<std::string> present_gpus(const std::string& sysfs_root) {
    std::vector<std::string> out;
    for (const auto& f : pci_gpus(sysfs_root)) out.push_back(f.bus_id);
    return out;
}

}  // namespace gangway::sys::postmortem
