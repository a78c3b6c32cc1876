#include "node_check.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <set>
#include <thread>

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "../../health/confirm.hpp"
#include "../../health/judge.hpp"
#include "../../health/kmsg_record.hpp"
#include "../../health/xid.hpp"
#include "../../env/slurm_conf_walk.hpp"
#include "../conf_files.hpp"
#include "../node/file.hpp"
#include "../node/sysfs.hpp"
#include "../stages/cuda_stage.hpp"
#include "../stages/nccl_stage.hpp"
#include "../stages/nvml_stage.hpp"
#include "../stages/stage.hpp"
#include "kmsg.hpp"
#include "node_facts.hpp"
#include "rdma_loopback.hpp"

namespace gangway::sys {
using preflight::StageResult;
using preflight::StageStatus;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct SysfsFacts {
    std::vector<health::GpuFacts> gpus;
    std::vector<health::NicFacts> nics;
    std::vector<health::PortFacts> ports;
};

SysfsFacts read_sysfs(const std::string& root, const health::SiteConf& c) {
    SysfsFacts f;
    f.gpus = read_pci_gpus(root);
    const auto nics = compute_rdma_nics(root, {c.nic_include, c.nic_exclude});
    f.nics = read_nic_facts(root, nics);
    f.ports = read_ports(root, nics);
    return f;
}

struct KmsgFacts {
    std::vector<health::Xid> xids;  // new since the last run
    health::KmsgLoss lost;          // records overwritten before they were read
    std::optional<std::uint64_t> seq;
    std::string why;                // the log could not be read (not root): why
};

// What a run gathered; a part that did not finish stays empty.
struct Gathered {
    std::optional<SysfsFacts> sysfs;
    std::optional<health::NvmlFacts> nvml;
    std::optional<KmsgFacts> kmsg;
    std::optional<StageOutcome> cuda, nccl, rdma;
};

// Runs the parts of a run, each under min(its cap, what is left), and notes
// how each ended; an exception or a deadline makes the run inconclusive.
class Parts {
public:
    explicit Parts(double timeout_s) : end_(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s))) {}
    double left() const { return std::chrono::duration<double>(end_ - Clock::now()).count(); }

    template <class T>
    std::optional<T> run(const std::string& name, double cap, std::function<T()> fn, std::function<std::string(const T&)> detail) {
        const auto t0 = Clock::now();
        const double budget = std::min(cap, left());
        if (budget < 0.05) {
            stages.push_back({name, StageStatus::aborted, "not started: the run's deadline had passed", 0});
            inconclusive = true;
            return std::nullopt;
        }
        try {
            if (auto v = within<T>(budget, std::move(fn))) {
                stages.push_back({name, StageStatus::ok, detail(*v), since(t0)});
                return v;
            }
            char b[96];
            std::snprintf(b, sizeof b, "did not finish within %.1f s", budget);
            stages.push_back({name, StageStatus::aborted, b, since(t0)});
        } catch (const std::exception& e) {
            stages.push_back({name, StageStatus::aborted, std::string("could not run: ") + e.what(), since(t0)});
        }
        inconclusive = true;
        return std::nullopt;
    }

    std::vector<StageResult> stages;
    bool inconclusive = false;

private:
    Clock::time_point end_;
};

std::string read_small(const std::string& path) { auto t = read_config_file(path); return t ? *t : ""; }

health::Expected expectations(const NodeCheckOptions& o) {
    std::string slurm_conf = o.conf.slurm_conf;
    if (slurm_conf.empty()) {
        const auto it = o.env.find("SLURM_CONF");
        slurm_conf = it != o.env.end() && !it->second.empty() ? it->second : "/etc/slurm/slurm.conf";
    }
    std::string gres_conf = o.conf.gres_conf;
    if (gres_conf.empty()) gres_conf = slurm_conf.substr(0, slurm_conf.rfind('/') + 1) + "gres.conf";
    // slurm.conf with its Include lines followed, as slurmd reads it: sites
    // keep their NodeName lines in an included file. What cannot be followed
    // only leaves an expectation unknown: never a reason to drain.
    DiskFiles files;
    const SlurmConf conf = read_slurm_conf(slurm_conf, files);
    return health::expected_from(o.conf, health::gres_from_slurm_conf(conf.text, o.node),
                                 health::gres_from_gres_conf(read_small(gres_conf), o.node));
}

const gpu::GpuResult* cuda_gpu(const Gathered& g, const std::string& bus) {
    if (!g.cuda) return nullptr;
    for (const auto& r : g.cuda->gpus)
        if (r.bus_id == bus) return &r;
    return nullptr;
}

// Everything judged. `retest`: only what can be re-read (sysfs, NVML).
std::vector<health::Record> judge(const Gathered& g, const NodeCheckOptions& o, const health::Expected& e,
                                  const gpu::Thresholds& t, bool retest) {
    using namespace health;
    std::vector<Record> out;
    auto add = [&](std::vector<Record> rs) { out.insert(out.end(), rs.begin(), rs.end()); };
    std::vector<std::string> nvidia;
    if (g.sysfs) {
        auto gpus = g.sysfs->gpus;
        for (auto& gf : gpus) {
            if (gf.vendor == 0x10de) nvidia.push_back(gf.pci.bus_id);
            if (g.nvml)
                for (const auto& n : g.nvml->gpus)
                    if (n.bus_id == gf.pci.bus_id) gf.model = n.name;
            const auto* c = cuda_gpu(g, gf.pci.bus_id);
            if (gf.model.empty() && c) gf.model = c->name;
            // The link as the cuda stage read it right after its copies: an idle GPU's is slow.
            if (c && !retest && c->pcie_width > 0) {
                gf.pci.link.cur_width = c->pcie_width;
                gf.pci.link.cur_gen = c->pcie_gen;
            }
        }
        add(judge_inventory(gpus, g.sysfs->nics, g.sysfs->ports, e));
        for (const auto& gf : gpus) {
            const auto* c = cuda_gpu(g, gf.pci.bus_id);
            std::string skip;
            if (!o.conf.pcie_speed) skip = "not judged (pcie_speed=no)";
            else if (retest) skip = "not measured again: only right after the cuda stage's copies is a GPU's link at speed";
            else if (!c || c->pcie_width <= 0)
                skip = "not judged: an idle GPU slows its link down, and the cuda stage did not run copies on it";
            add(judge_link("gpu " + gf.pci.bus_id, gf.pci, skip));
        }
        for (const auto& n : g.sysfs->nics)
            add(judge_link("nic " + n.name, n.pci, o.conf.pcie_speed ? "" : "not judged (pcie_speed=no)"));
        add(judge_ports(g.sysfs->ports, o.conf.port_rate_gbps ? o.conf.port_rate_gbps : t.ib_rate_gbps));
        if (!retest) add(judge_counters(g.sysfs->ports, o.previous.time > 0 ? &o.previous.counters : nullptr, o.conf));
    }
    if (g.nvml) add(judge_nvml(*g.nvml, nvidia, o.conf));
    if (retest) return out;
    if (g.kmsg && !g.kmsg->why.empty()) out.push_back({Check::gpu_xid, "node", "", "", "", Status::skipped, g.kmsg->why, false});
    else if (g.kmsg) {
        // The node's NVIDIA GPUs: on the bus, or known to the driver (a GPU
        // that fell off the bus may be gone from one of them).
        std::vector<std::string> gpus = nvidia;
        if (g.nvml)
            for (const auto& n : g.nvml->gpus)
                if (!n.bus_id.empty()) gpus.push_back(n.bus_id);
        add(judge_xids(g.kmsg->xids, o.conf.xids, gpus, g.kmsg->lost));
    }
    if (g.cuda) add(stage_records(Check::cuda, g.cuda->result, g.cuda->findings, g.cuda->gpus));
    if (g.nccl) add(stage_records(Check::nccl, g.nccl->result, g.nccl->findings));
    if (g.rdma) add(stage_records(Check::rdma, g.rdma->result, g.rdma->findings));
    return out;
}

bool from_nvml(health::Check c) {
    using health::Check;
    return c == Check::gpu_driver || c == Check::gpu_nvml || c == Check::gpu_pages || c == Check::gpu_rows || c == Check::gpu_ecc ||
           c == Check::gpu_nvlink;
}

// An aborted stage outcome (a hung CUDA call) makes the run inconclusive, as a part's deadline does.
void note_stage(Parts& p, const std::optional<StageOutcome>& o) {
    if (!o) return;
    p.stages.push_back(o->result);
    if (o->result.status == StageStatus::aborted) p.inconclusive = true;
}

// A stage of the preflight under what is left of the run's deadline (less `keep` for what
// follows), or, with too little left, not started: inconclusive too.
std::optional<StageOutcome> stage_within(Parts& p, const std::string& name, double share, double keep,
                                         std::function<StageOutcome()> fn) {
    const double budget = p.left() * share - keep;
    std::optional<StageOutcome> o;
    if (budget >= 0.3) o = with_deadline(name, budget, std::move(fn));
    else {
        o.emplace();
        o->result = {name, StageStatus::aborted, "not started: the run's deadline had passed", 0};
    }
    note_stage(p, o);
    return o;
}

}  // namespace

NodeCheckResult run_node_check(const NodeCheckOptions& o) {
    const auto t0 = Clock::now();
    Parts parts(o.timeout_s);
    EnvMap env = o.env;
    // The whole node is checked, not a job's share of it (a Prolog's environment names the job's GPUs).
    for (const char* k : {"CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "SLURM_GPUS_ON_NODE"}) env.erase(k);
    for (const auto& [k, v] : o.conf.thresholds) env[k] = v;
    const gpu::Thresholds t = gpu::thresholds_from_env(env);
    const health::Expected expected = expectations(o);

    Gathered g;
    const std::string root = o.root;
    const health::SiteConf conf = o.conf;
    g.sysfs = parts.run<SysfsFacts>(
        "sysfs", 5, [root, conf] { return read_sysfs(root, conf); },
        [](const SysfsFacts& f) {
            return std::to_string(f.gpus.size()) + " GPU(s), " + std::to_string(f.nics.size()) + " compute NIC(s), " +
                   std::to_string(f.ports.size()) + " port(s)";
        });
    const bool nvidia = g.sysfs && std::any_of(g.sysfs->gpus.begin(), g.sysfs->gpus.end(), [](const auto& x) { return x.vendor == 0x10de; });
    if (nvidia || !g.sysfs)
        g.nvml = parts.run<health::NvmlFacts>("nvml", 10, [] { return read_nvml(); }, [](const health::NvmlFacts& n) {
            return n.loaded && !n.init_error ? std::to_string(n.gpus.size()) + " GPU(s)" : n.why;
        });
    // Xids: only where the driver may have written some.
    const auto after = o.previous.time > 0 ? o.previous.kmsg_seq : std::nullopt;
    if (nvidia)
        g.kmsg = parts.run<KmsgFacts>(
            "kmsg", 3,
            [root, after] {
                KmsgFacts k;
                const auto text = read_kmsg(root);
                if (!text) {
                    k.why = text.error();
                    return k;
                }
                k.xids = health::xids_after(health::parse_kmsg_xids(*text), after);
                k.lost = health::kmsg_lost(*text, after);
                k.seq = health::last_kmsg_seq(*text);
                return k;
            },
            [](const KmsgFacts& k) {
                if (!k.why.empty()) return k.why;
                return std::to_string(k.xids.size()) + " new Xid(s)" +
                       (k.lost.records ? ", " + std::to_string(k.lost.records) + " record(s) lost" : std::string());
            });

    // The stages of the preflight, each with what is left of the deadline.
    CudaStageOptions c;
    c.full = o.full;
    c.measure_copy = o.full;
    c.iterations = o.full ? 20 : 1;
    c.copy_bytes = o.full ? static_cast<std::size_t>(t.copy_bytes) : std::size_t(32) << 20;
    c.env = env;
    c.root = o.root;
    c.t = t;
    // A job computing on the GPUs (HealthCheckNodeState=ANY runs this on busy nodes too): a
    // context of ours would take its memory, and an exclusive-process GPU would refuse us,
    // which is no fault of the node. The GPUs are tested when they are free.
    std::vector<std::string> busy;
    if (g.nvml)
        for (const auto& n : g.nvml->gpus)
            if (n.busy) busy.push_back(n.bus_id);
    if (!busy.empty()) {
        g.cuda = to_outcome("cuda", {StageStatus::skipped, "GPU(s) in use by a job (" + join(busy, ", ") +
                                                               "): tested when they are free", {}}, 0);
        note_stage(parts, g.cuda);
    } else {
        g.cuda = stage_within(parts, "cuda", 1, 0.2, [c] { return run_cuda_stage(c); });
    }
    if (o.full && busy.empty()) {
        NcclStageOptions n;
        n.nccl_lib = o.nccl_lib;
        n.env = env;
        n.t = t;
        n.deadline_s = std::max(1.0, parts.left() * 0.5);  // its own abort first; the stage's deadline is the backstop
        g.nccl = stage_within(parts, "nccl", 0.6, 0, [n] { return run_nccl_stage_local(n); });
        if (g.sysfs) {
            std::vector<verbs::Port> ports;
            for (const auto& p : g.sysfs->ports) ports.push_back(p.port);
            LoopbackOptions lo;
            lo.t = t;
            g.rdma = stage_within(parts, "rdma", 1, 0.2, [ports, lo] { return run_rdma_loopback(ports, lo); });
        }
    }

    auto records = judge(g, o, expected, t, false);

    // The immediate re-test: what failed and can be read again, once more.
    std::set<health::Key> again;
    std::set<health::Key> first;
    bool nvml_again = false;
    for (const auto& r : records)
        if (r.status == health::Status::failed && health::retestable(r.check)) {
            first.insert(health::key_of(r));
            nvml_again = nvml_again || from_nvml(r.check);
        }
    if (!first.empty() && parts.left() > o.conf.retest_delay_s + 0.5) {
        std::this_thread::sleep_for(std::chrono::duration<double>(o.conf.retest_delay_s));
        Gathered g2;
        g2.cuda = g.cuda;  // its GPU models and names; its links are not re-used (retest)
        g2.sysfs = parts.run<SysfsFacts>("retest", 5, [root, conf] { return read_sysfs(root, conf); },
                                         [&](const SysfsFacts&) { return std::to_string(first.size()) + " failure(s) measured again"; });
        if (nvml_again) g2.nvml = parts.run<health::NvmlFacts>("retest-nvml", 10, [] { return read_nvml(); },
                                                                [](const health::NvmlFacts&) { return std::string("NVML read again"); });
        else g2.nvml = g.nvml;
        if (g2.sysfs)
            for (const auto& r : judge(g2, o, expected, t, true))
                if (r.status == health::Status::failed && first.count(health::key_of(r))) again.insert(health::key_of(r));
    }
    health::confirm(records, again, o.previous, o.now, o.conf.repeat_window_s);

    NodeCheckResult res;
    res.run.node = o.node;
    res.run.level = o.full ? "full" : "quick";
    res.run.time = o.now;
    res.run.records = std::move(records);
    res.run.stages = parts.stages;
    res.run.verdict = health::verdict(res.run.records, parts.inconclusive);
    res.run.seconds = since(t0);
    // The measured figures, for the fleet memory (the JSON's gpus and nccl).
    if (g.cuda)
        for (const auto& gr : g.cuda->gpus) res.run.gpus.push_back(sys::gpu_record(0, gr));
    if (g.nccl)
        for (const auto& nr : g.nccl->nccl_runs) res.run.nccl.push_back(sys::nccl_record(0, nr));
    if (g.sysfs) res.counters = health::counter_values(g.sysfs->ports);
    if (g.kmsg) res.kmsg_seq = g.kmsg->seq;
    return res;
}

}  // namespace gangway::sys
