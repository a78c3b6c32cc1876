// The three GPU and RDMA stages of one node, each under its own deadline.
#include "local_stages.hpp"

#include <algorithm>

#include "cuda_stage.hpp"
#include "nccl_stage.hpp"
#include "verbs_stage.hpp"

namespace gangway::sys {

std::vector<StageOutcome> run_local_stages(const LocalStagesOptions& o) {
    const gpu::Thresholds t = gpu::thresholds_from_env(o.env);
    auto wanted = [&](const char* s) {
        return o.stages.empty() || std::find(o.stages.begin(), o.stages.end(), s) != o.stages.end();
    };
    std::vector<StageOutcome> outs;
    if (wanted("cuda")) {
        CudaStageOptions c;
        c.full = o.full;
        c.iterations = o.full ? 20 : 5;
        c.copy_bytes = static_cast<std::size_t>(t.copy_bytes);
        c.env = o.env;
        c.root = o.root;
        c.t = t;
        outs.push_back(with_deadline("cuda", o.timeout_s, [c] { return run_cuda_stage(c); }));
    }
    if (wanted("nccl")) {
        NcclStageOptions n;
        n.nccl_lib = o.nccl_lib;
        n.full = o.full;
        n.deadline_s = o.timeout_s * 0.9;  // its own abort comes first, the wrapper is the backstop
        n.env = o.env;
        n.t = t;
        outs.push_back(with_deadline("nccl", o.timeout_s, [n] { return run_nccl_stage_local(n); }));
    }
    if (wanted("verbs")) {
        VerbsStageOptions v;
        v.root = o.root;
        if (o.root == "/") v.hcas = compute_hcas(o.env);
        v.t = t;
        outs.push_back(with_deadline("verbs", o.timeout_s, [v] { return run_verbs_stage_local(v); }));
    }
    return outs;
}

}  // namespace gangway::sys
