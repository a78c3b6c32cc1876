#include "mass_accusation.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace gangway::preflight {

namespace {
bool measured(NodeStatus s) { return s == NodeStatus::slow || s == NodeStatus::unreachable; }
}  // namespace

std::size_t hold_mass_accusation(Report& r, double share) {
    const std::size_t named = std::size_t(std::count_if(r.nodes.begin(), r.nodes.end(), [](const NodeResult& n) { return measured(n.status); }));
    const std::size_t limit = std::max<std::size_t>(1, std::size_t(std::floor(share * double(r.nodes.size()))));
    if (named <= limit) return 0;
    std::size_t slow = 0, unreachable = 0;
    for (auto& n : r.nodes) {
        if (!measured(n.status)) continue;
        (n.status == NodeStatus::slow ? slow : unreachable)++;
        for (const auto& why : n.reasons) r.notes.push_back(n.name + " (not named: too many at once): " + why);
        n.status = NodeStatus::ok;
        n.reasons.clear();
    }
    std::string what;
    if (slow) what = std::to_string(slow) + " slow";
    if (unreachable) what += (what.empty() ? "" : " and ") + std::to_string(unreachable) + " unreachable";
    r.findings.push_back(what + " of " + std::to_string(r.nodes.size()) + " nodes: more than " +
                         std::to_string(limit) + " (--max-named=" + std::to_string(share).substr(0, 4) +
                         " of the nodes) at once is the network or the machine, not the nodes: none is named");
    return named;
}

}  // namespace gangway::preflight
