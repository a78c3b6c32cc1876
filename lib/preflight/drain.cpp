#include "drain.hpp"

namespace gangway::preflight {

std::vector<DrainRequest> drain_requests(const Report& r) {
    std::vector<DrainRequest> out;
    for (const auto& n : r.nodes) {
        if (n.status != NodeStatus::slow && n.status != NodeStatus::unreachable && n.status != NodeStatus::mismatch &&
            n.status != NodeStatus::faulty)
            continue;
        std::string reason = to_string(n.status);
        if (!n.reasons.empty()) reason += " " + n.reasons.front();
        for (auto& c : reason)
            if (c == '\n' || c == '"' || c == '\'' || c == '`' || c == '$' || c == '\\') c = ' ';
        if (reason.size() > 120) reason.resize(120);
        out.push_back({n.name, "gangway-drain." + r.job_id + "." + n.name,
                       "node=" + n.name + "\njob=" + r.job_id + "\nreason=" + reason + "\n"});
    }
    return out;
}

}  // namespace gangway::preflight
