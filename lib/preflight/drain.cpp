#include "drain.hpp"

#include "../base/text.hpp"
#include "../env/hostlist.hpp"
#include "../slurm/drain_rules.hpp"

namespace gangway::preflight {

std::vector<DrainRequest> drain_requests(const Report& r, const std::vector<std::string>& user_thresholds) {
    std::vector<DrainRequest> out;
    if (!user_thresholds.empty()) return out;
    for (const auto& n : r.nodes) {
        if (n.status != NodeStatus::slow && n.status != NodeStatus::unreachable && n.status != NodeStatus::mismatch &&
            n.status != NodeStatus::faulty)
            continue;
        std::string reason = to_string(n.status);
        if (!n.reasons.empty()) reason += " " + n.reasons.front();
        reason = quiet_text(reason, 120);
        out.push_back({n.name, slurm::request_file(r.job_id, n.name),
                       "node=" + n.name + "\njob=" + r.job_id + "\nreason=" + reason + "\n"});
    }
    return out;
}

}  // namespace gangway::preflight

namespace gangway::preflight {

std::string drain_deciding_node(const std::string& job_nodelist) {
    return slurm::deciding_node(expand_hostlist(job_nodelist));
}

std::vector<std::string> threshold_vars_set(const EnvMap& env) {
    // Everything that moves the line between a good node and a bad one.
    static const char* const kVars[] = {
        "GANGWAY_EXPECT_GBPS", "GANGWAY_SLOW_RATIO",   "GANGWAY_ROUND_MS",      "GANGWAY_REQUIRE", "GANGWAY_MAX_NAMED",
        "GANGWAY_H2D_GBPS",    "GANGWAY_GPU_BW_RATIO", "GANGWAY_COPY_BYTES",    "GANGWAY_NCCL_BUSBW_GBPS",
        "GANGWAY_NCCL_RATIO",  "GANGWAY_NCCL_BYTES",   "GANGWAY_IB_RATE_GBPS",  "GANGWAY_RDMA_RATIO",
        "GANGWAY_OUTLIER_Z"};
    std::vector<std::string> out;
    for (const char* v : kVars)
        if (auto it = env.find(v); it != env.end() && !it->second.empty()) out.emplace_back(v);
    return out;
}

}  // namespace gangway::preflight
