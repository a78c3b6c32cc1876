#include "data_addr.hpp"

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway {
namespace {

std::string list(const std::vector<IpAddr>& v) {
    return v.empty() ? "nothing" : join(v, ", ", [](const IpAddr& a) { return to_string(a); });
}

std::string nets(const std::vector<IfaceAddr>& v) {
    return join(v, ", ", [](const IfaceAddr& n) { return to_string(n.addr) + "/" + std::to_string(n.prefix_len); });
}

}  // namespace

NodeAddrs find_node_addrs(const Config& cfg, const std::vector<std::string>& nodes, unsigned self,
                          const std::vector<IfaceAddr>& local_nets, const Resolver& resolve) {
    if (!cfg.iface.empty() && local_nets.empty())
        throw Error("data interface " + cfg.iface +
                    " has no IP address on this node; bring it up, or name the right one with iface= in plugstack.conf "
                    "or --gangway-iface");
    NodeAddrs out;
    out.self = self;
    for (const auto& node : nodes) {
        const std::string name = cfg.addr_template.empty() ? node : expand_addr_template(cfg.addr_template, node);
        const std::vector<IpAddr> cands = resolve(name);
        if (cands.empty())
            throw Error("cannot resolve " + name + (cfg.addr_template.empty() ? "" : " (from addr_template=" + cfg.addr_template + ")") +
                        "; add it to DNS or /etc/hosts on every node");
        const IpAddr* pick = nullptr;
        if (cfg.iface.empty()) pick = &cands.front();
        for (const auto& c : cands) {
            if (pick) break;
            for (const auto& n : local_nets)
                if (in_subnet(c, n)) {
                    pick = &c;
                    break;
                }
        }
        if (!pick && !cfg.addr_template.empty()) pick = &cands.front();
        if (!pick)
            throw Error(name + " resolves to " + list(cands) + ", none on the network of " + cfg.iface + " (" +
                        nets(local_nets) + "); set addr_template= in plugstack.conf to a name that resolves to the "
                        "data address (for example addr_template=%h-ib)");
        out.nodes.push_back(*pick);
    }
    if (!cfg.iface.empty()) {
        // The address others will use for this node must really be ours, or every peer dials the wrong host.
        const IpAddr& mine = out.nodes.at(self);
        bool ours = false;
        for (const auto& n : local_nets) ours = ours || n.addr == mine;
        if (!ours)
            throw Error(nodes.at(self) + "'s data address " + to_string(mine) + " is not an address of " + cfg.iface +
                        " on this node (" + nets(local_nets) + "); fix DNS, /etc/hosts or addr_template=");
    }
    return out;
}

}  // namespace gangway
