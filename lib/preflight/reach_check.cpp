#include "reach_check.hpp"

#include "../base/error.hpp"

namespace gangway::preflight {

ReachCheck judge_reach(const std::vector<ReachNode>& nodes) {
    ReachCheck out;
    struct Count {
        unsigned probes = 0, failures = 0;
        bool all_failed() const { return probes && failures == probes; }
    };
    std::vector<Count> in(nodes.size()), out_of(nodes.size());  // by position: probes to it, from it
    std::vector<std::pair<unsigned, unsigned>> ends;            // per link: positions
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const auto& n = nodes[i];
        if (!n.answer) continue;
        for (std::size_t k = 0; k < n.targets.size(); ++k) {
            const unsigned t = n.targets[k];
            if (t >= nodes.size()) throw Error("a reach target beyond the stage's " + std::to_string(nodes.size()) + " nodes");
            const auto p = "r." + std::to_string(k) + ".";
            LinkResult l;
            l.from = n.node;
            l.to = nodes[t].node;
            l.stage = "reach";
            try {
                l.ok = kv_str(*n.answer, p + "ok") == "1";
                l.ms = kv_f64(*n.answer, p + "ms");
                l.error = kv_str(*n.answer, p + "error");
            } catch (const Error& e) {
                l.ok = false;
                l.error = e.what();
            }
            if (!l.ok) l.ms.reset();
            out_of[i].probes++;
            in[t].probes++;
            if (!l.ok) {
                out_of[i].failures++;
                in[t].failures++;
            }
            out.links.push_back(l);
            ends.emplace_back(static_cast<unsigned>(i), t);
        }
    }
    std::vector<bool> unreachable(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        unreachable[i] = nodes[i].unreachable;
        if (!in[i].all_failed() && !out_of[i].all_failed()) continue;
        if (!unreachable[i]) ++out.newly_unreachable;
        unreachable[i] = true;
        out.unreachable.emplace_back(nodes[i].node, "TCP to " + nodes[i].addr + " failed from " + std::to_string(in[i].failures) +
                                                        "/" + std::to_string(in[i].probes) + " peers, from it to " +
                                                        std::to_string(out_of[i].failures) + "/" +
                                                        std::to_string(out_of[i].probes) + " peers");
    }
    // A link that failed between nodes that are otherwise fine stays a link finding.
    for (std::size_t k = 0; k < out.links.size(); ++k) {
        const auto& l = out.links[k];
        const auto [a, b] = ends[k];
        if (!l.ok && !unreachable[a] && !unreachable[b])
            out.findings.push_back("TCP " + nodes[a].name + " -> " + nodes[b].name + " failed: " + l.error);
    }
    return out;
}

}  // namespace gangway::preflight
