#include "node_check.hpp"

#include <chrono>
#include <functional>
#include <thread>

#include "../../conf/slurm_conf_walk.hpp"
#include "../../health/check_mode.hpp"
#include "../../health/confirm.hpp"
#include "../../health/judge.hpp"
#include "../../health/kmsg_record.hpp"
#include "../../health/run_plan.hpp"
#include "../../health/xid.hpp"
#include "../conf/conf_files.hpp"
#include "../node/file.hpp"
#include "../node/sysfs.hpp"
#include "../run/deadline.hpp"
#include "../stages/cuda_stage.hpp"
#include "../stages/nccl_stage.hpp"
#include "nvml_stage.hpp"
#include "../stages/stage.hpp"
#include "kmsg.hpp"
#include "node_facts.hpp"
#include "parts.hpp"
#include "rdma_loopback.hpp"

namespace gangway::sys {
using preflight::StageStatus;

namespace {


health::SysfsFacts read_sysfs(const std::string& root, const health::SiteConf& c) {
    health::SysfsFacts f;
    f.gpus = read_pci_gpus(root);
    const auto nics = compute_rdma_nics(root, {c.nic_include, c.nic_exclude});
    f.nics = read_nic_facts(root, nics);
    f.ports = read_ports(root, nics);
    return f;
}

health::KmsgFacts read_kmsg_facts(const std::string& root, std::optional<std::uint64_t> after) {
    health::KmsgFacts k;
    const auto text = read_kmsg(root);
    if (!text) {
        k.why = text.error();
        return k;
    }
    k.xids = health::xids_after(health::parse_kmsg_xids(*text), after);
    k.lost = health::kmsg_lost(*text, after);
    k.seq = health::last_kmsg_seq(*text);
    return k;
}

std::optional<health::StageFacts> facts_of(const std::optional<StageOutcome>& o) {
    if (!o) return std::nullopt;
    return health::StageFacts{o->result, o->findings, o->gpus};
}

std::string read_small(const std::string& path) { auto t = read_config_file(path); return t ? *t : ""; }

health::Expected expectations(const NodeCheckOptions& o) {
    const health::SlurmFiles where = health::slurm_files(o.conf, o.env);
    // slurm.conf with its Include lines followed, as slurmd reads it: sites
    // keep their NodeName lines in an included file. What cannot be followed
    // only leaves an expectation unknown: never a reason to drain.
    DiskFiles files;
    const SlurmConf conf = read_slurm_conf(where.slurm_conf, files);
    return health::expected_from(o.conf, health::gres_from_slurm_conf(conf.text, o.node),
                                 health::gres_from_gres_conf(read_small(where.gres_conf), o.node));
}

}  // namespace

NodeCheckResult run_node_check(const NodeCheckOptions& o) {
    const auto t0 = Clock::now();
    Parts parts(o.timeout_s);
    const EnvMap env = health::stage_env(o.env, o.conf);
    const gpu::Thresholds t = gpu::thresholds_from_env(env);
    const health::Expected expected = expectations(o);

    health::Gathered g;
    std::optional<StageOutcome> cuda, nccl, rdma;  // all they measured, for the report's figures
    const std::string root = o.root;
    const health::SiteConf conf = o.conf;
    g.sysfs = parts.run<health::SysfsFacts>(
        "sysfs", health::kReadCaps.sysfs_s, [root, conf] { return read_sysfs(root, conf); },
        [](const health::SysfsFacts& f) {
            return std::to_string(f.gpus.size()) + " GPU(s), " + std::to_string(f.nics.size()) + " compute NIC(s), " +
                   std::to_string(f.ports.size()) + " port(s)";
        });
    if (health::reads_nvml(g.sysfs))
        g.nvml = parts.run<health::NvmlFacts>("nvml", health::kReadCaps.nvml_s, [] { return read_nvml(); }, [](const health::NvmlFacts& n) {
            return n.loaded && !n.init_error ? std::to_string(n.gpus.size()) + " GPU(s)" : n.why;
        });
    const auto after = o.previous.time > 0 ? o.previous.kmsg_seq : std::nullopt;
    if (health::reads_kmsg(g.sysfs))
        g.kmsg = parts.run<health::KmsgFacts>(
            "kmsg", health::kReadCaps.kmsg_s, [root, after] { return read_kmsg_facts(root, after); },
            [](const health::KmsgFacts& k) {
                if (!k.why.empty()) return k.why;
                return std::to_string(k.xids.size()) + " new Xid(s)" +
                       (k.lost.records ? ", " + std::to_string(k.lost.records) + " record(s) lost" : std::string());
            });

    // The stages of the preflight, each with what is left of the deadline.
    const health::StagePlan plan = health::plan_stages(o.full, g.sysfs.has_value(), health::busy_gpus(g.nvml));
    if (!plan.cuda) {
        cuda = to_outcome("cuda", {StageStatus::skipped, plan.cuda_skip, {}}, 0);
        parts.note(*cuda);
    } else {
        const health::CudaLevel level = health::cuda_level(o.full, t);
        CudaStageOptions c;
        c.full = level.full;
        c.measure_copy = level.measure_copy;
        c.iterations = level.iterations;
        c.copy_bytes = level.copy_bytes;
        c.env = env;
        c.root = o.root;
        c.t = t;
        cuda = parts.stage("cuda", health::kCudaShare, [c] { return run_cuda_stage(c); });
    }
    if (plan.nccl) {
        NcclStageOptions n;
        n.nccl_lib = o.nccl_lib;
        n.env = env;
        n.t = t;
        n.deadline_s = health::nccl_abort_s(parts.left());  // its own abort first; the stage's deadline is the backstop
        nccl = parts.stage("nccl", health::kNcclShare, [n] { return run_nccl_stage_local(n); });
    }
    if (plan.rdma) {
        std::vector<verbs::Port> ports;
        for (const auto& p : g.sysfs->ports) ports.push_back(p.port);
        LoopbackOptions lo;
        lo.t = t;
        rdma = parts.stage("rdma", health::kRdmaShare, [ports, lo] { return run_rdma_loopback(ports, lo); });
    }
    g.cuda = facts_of(cuda);
    g.nccl = facts_of(nccl);
    g.rdma = facts_of(rdma);

    const health::JudgeContext jc{o.conf, expected, t.ib_rate_gbps, o.previous};
    auto records = health::judge_run(g, jc, false);

    // The immediate re-test: what failed and can be read again, once more.
    std::set<health::Key> again;
    const health::RetestSelection sel = health::select_retest(records);
    if (!sel.empty() && health::retest_fits(parts.left(), o.conf.retest_delay_s)) {
        std::this_thread::sleep_for(std::chrono::duration<double>(o.conf.retest_delay_s));
        health::Gathered g2;
        g2.cuda = g.cuda;  // its GPU models and names; its links are not re-used (retest)
        g2.sysfs = parts.run<health::SysfsFacts>("retest", health::kReadCaps.sysfs_s, [root, conf] { return read_sysfs(root, conf); },
                                                 [&](const health::SysfsFacts&) { return std::to_string(sel.keys.size()) + " failure(s) measured again"; });
        if (sel.nvml) g2.nvml = parts.run<health::NvmlFacts>("retest-nvml", health::kReadCaps.nvml_s, [] { return read_nvml(); },
                                                             [](const health::NvmlFacts&) { return std::string("NVML read again"); });
        else g2.nvml = g.nvml;
        if (g2.sysfs) again = health::failed_again(sel, health::judge_run(g2, jc, true));
    }
    health::confirm(records, again, o.previous, o.now, o.conf.repeat_window_s);

    NodeCheckResult res;
    res.run.node = o.node;
    res.run.level = o.full ? "full" : "quick";
    res.run.time = o.now;
    res.run.records = std::move(records);
    res.run.stages = parts.stages;
    res.run.verdict = health::verdict(res.run.records, parts.inconclusive);
    res.run.seconds = seconds_since(t0);
    // The measured figures, for the fleet memory (the JSON's gpus and nccl).
    if (cuda)
        for (const auto& gr : cuda->gpus) res.run.gpus.push_back(sys::gpu_record(0, gr));
    if (nccl)
        for (const auto& nr : nccl->nccl_runs) res.run.nccl.push_back(sys::nccl_record(0, nr));
    if (g.sysfs) res.counters = health::counter_values(g.sysfs->ports);
    if (g.kmsg) res.kmsg_seq = g.kmsg->seq;
    return res;
}

}  // namespace gangway::sys
