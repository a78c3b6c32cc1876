#include "nccl_job.hpp"

#include <algorithm>

#include "../base/error.hpp"

namespace gangway::preflight {

gpu::NcclResult job_allreduce(const std::vector<NcclAnswer>& nodes, double bytes) {
    gpu::NcclResult r;
    r.scope = "job";
    r.bytes = bytes;
    bool all_answered = true;
    for (const auto& n : nodes) {
        r.nranks += n.gpus;
        if (!n.answer) {  // the coordinator has named it unreachable
            all_answered = false;
            continue;
        }
        if (kv_str(*n.answer, "ok") != "1") {
            r.error += (r.error.empty() ? "" : "; ") + n.node + ": " + kv_str(*n.answer, "error");
            continue;
        }
        r.seconds = std::max(r.seconds, kv_f64(*n.answer, "seconds"));
        if (kv_str(*n.answer, "data_ok") != "1") r.data_ok = false;
    }
    if (!all_answered && r.error.empty()) r.error = "not every node answered";
    return r;
}

NcclPair nccl_pair(const Flow& flow, const NcclAnswer& from, const NcclAnswer& to) {
    NcclPair p;
    p.from = flow.from;
    p.to = flow.to;
    p.nranks = from.gpus + to.gpus;
    for (const NcclAnswer* end : {&from, &to}) {
        const Kv* a = end->answer;
        if (!a) p.ok = false, p.error = end->node + " did not answer";
        else if (kv_str(*a, "ok") != "1") p.ok = false, p.error = kv_str(*a, "error");
        else if (kv_str(*a, "data_ok") != "1") p.ok = false, p.error = "the all-reduce returned wrong values";
        else p.seconds = std::max(p.seconds, kv_f64(*a, "seconds"));
    }
    return p;
}

Measurement pair_link(const NcclPair& p, double bytes) {
    Measurement m{p.from, p.to, 0, p.ok, p.error};
    if (p.ok && p.seconds > 0) m.bps = gpu::allreduce_busbw_gbps(gpu::algbw_gbps(bytes, p.seconds), p.nranks) * 1e9;
    return m;
}

PairsBlame blame_pairs(unsigned n, const std::vector<NcclPair>& pairs, const std::vector<std::string>& names,
                       const gpu::NcclResult& job, double busbw_ratio, double slow_ratio) {
    if (names.size() < n) throw Error("pairs of " + std::to_string(n) + " nodes with " + std::to_string(names.size()) + " names");
    std::vector<Measurement> ring;
    for (const auto& p : pairs) {
        if (p.from >= n || p.to >= n) throw Error("a pair of positions beyond the " + std::to_string(n) + " nodes");
        ring.push_back(pair_link(p, job.bytes));
    }
    // A broken all-reduce: only failing counts, so every pair that ran is equally good.
    const bool broke = !job.error.empty() || !job.data_ok;
    std::vector<Measurement> judged = ring;
    if (broke)
        for (auto& m : judged) m.bps = m.ok ? 1 : 0;
    const bool figure = !broke && job.expected_busbw;
    const double ratio = figure ? busbw_ratio : slow_ratio;
    const auto b = blame_ring(n, judged, ratio, figure ? std::optional<double>(*job.expected_busbw * 1e9) : std::nullopt);
    PairsBlame out;
    const auto busbw = [](double bps) { return "busbw " + gpu::fmt_gbps(bps / 1e9); };
    for (unsigned k : b.blamed)
        out.faulty.emplace_back(k, "nccl-job: its two-node all-reduces with both ring neighbours fail or are slow (" +
                                       describe_links(k, ring, names, busbw) + ")");
    if (!b.some_good)
        out.findings.push_back("nccl: every two-node pair fails or is slow: the network between the nodes (or the "
                               "expected figure, GANGWAY_NCCL_BUSBW_GBPS) rather than one node");
    for (std::size_t k = 0; k < ring.size(); ++k)
        if (b.analysis.slow[k])
            out.findings.push_back("nccl pair " + names[ring[k].from] + " + " + names[ring[k].to] +
                                   (ring[k].ok ? ": " + busbw(ring[k].bps) : ": " + ring[k].error));
    return out;
}

}  // namespace gangway::preflight
