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

std::vector<IpAddr> resolve_data_addrs(const Config& cfg, const std::vector<std::string>& nodes,
                                       const std::vector<unsigned>& which, const std::vector<IfaceAddr>& local_nets,
                                       const Resolver& resolve) {
    std::vector<IpAddr> out;
    out.reserve(which.size());
    for (const unsigned i : which) {
        if (i >= nodes.size())
            throw Error("node index " + std::to_string(i) + " is outside the step's " + std::to_string(nodes.size()) +
                        " nodes");
        const std::string& node = nodes[i];
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
        out.push_back(*pick);
    }
    return out;
}

bool sets_node_addrs(const Config& cfg, std::size_t nnodes) { return nnodes <= cfg.node_addrs_max; }

NodeAddrs find_node_addrs(const Config& cfg, const std::vector<std::string>& nodes, unsigned self,
                          const std::vector<IfaceAddr>& local_nets, const Resolver& resolve) {
    if (!cfg.iface.empty() && local_nets.empty())
        throw Error("data interface " + cfg.iface +
                    " has no IP address on this node; bring it up, or name the right one with iface= in plugstack.conf "
                    "or --gangway-iface");
    if (self >= nodes.size())
        throw Error("this node's index " + std::to_string(self) + " is outside the step's " +
                    std::to_string(nodes.size()) + " nodes; SLURM_NODEID and SLURM_STEP_NODELIST disagree");
    NodeAddrs out;
    if (sets_node_addrs(cfg, nodes.size())) {
        std::vector<unsigned> all(nodes.size());
        for (unsigned i = 0; i < all.size(); ++i) all[i] = i;
        out.every = resolve_data_addrs(cfg, nodes, all, local_nets, resolve);
        out.primary = out.every.front();
        out.self = out.every[self];
    } else {
        // Node 0's first: the message for a bad name is the same on every node.
        const std::vector<unsigned> which = self == 0 ? std::vector<unsigned>{0} : std::vector<unsigned>{0, self};
        const std::vector<IpAddr> got = resolve_data_addrs(cfg, nodes, which, local_nets, resolve);
        out.primary = got.front();
        out.self = got.back();
    }
    if (!cfg.iface.empty()) {
        // The address others will use for this node must really be ours, or every peer dials the wrong host.
        bool ours = false;
        for (const auto& n : local_nets) ours = ours || n.addr == out.self;
        if (!ours)
            throw Error(nodes[self] + "'s data address " + to_string(out.self) + " is not an address of " + cfg.iface +
                        " on this node (" + nets(local_nets) + "); fix DNS, /etc/hosts or addr_template=");
    }
    return out;
}

}  // namespace gangway
