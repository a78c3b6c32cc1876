// The node check's choices of what to read, run, judge and measure again (run_plan.hpp).
#include "run_plan.hpp"

#include <algorithm>

#include "../base/text.hpp"

namespace gangway::health {

namespace {

constexpr unsigned kNvidia = 0x10de;

const gpu::GpuResult* cuda_gpu(const Gathered& g, const std::string& bus) {
    if (!g.cuda) return nullptr;
    for (const auto& r : g.cuda->gpus)
        if (r.bus_id == bus) return &r;
    return nullptr;
}

}  // namespace

SlurmFiles slurm_files(const SiteConf& c, const EnvMap& env) {
    SlurmFiles f{c.slurm_conf, c.gres_conf};
    if (f.slurm_conf.empty()) {
        const auto it = env.find("SLURM_CONF");
        f.slurm_conf = it != env.end() && !it->second.empty() ? it->second : "/etc/slurm/slurm.conf";
    }
    if (f.gres_conf.empty()) f.gres_conf = f.slurm_conf.substr(0, f.slurm_conf.rfind('/') + 1) + "gres.conf";
    return f;
}

bool any_nvidia(const SysfsFacts& s) {
    return std::any_of(s.gpus.begin(), s.gpus.end(), [](const GpuFacts& x) { return x.vendor == kNvidia; });
}

bool reads_nvml(const std::optional<SysfsFacts>& sysfs) { return !sysfs || any_nvidia(*sysfs); }

bool reads_kmsg(const std::optional<SysfsFacts>& sysfs) { return sysfs && any_nvidia(*sysfs); }

std::vector<std::string> busy_gpus(const std::optional<NvmlFacts>& nvml) {
    std::vector<std::string> busy;
    if (nvml)
        for (const auto& n : nvml->gpus)
            if (n.busy) busy.push_back(n.bus_id);
    return busy;
}

StagePlan plan_stages(bool full, bool sysfs_read, const std::vector<std::string>& busy) {
    StagePlan p;
    if (!busy.empty()) {
        // The GPUs are tested when they are free; nor do NCCL and RDMA disturb the job.
        p.cuda = false;
        p.cuda_skip = "GPU(s) in use by a job (" + join(busy, ", ") + "): tested when they are free";
        return p;
    }
    p.nccl = full;
    p.rdma = full && sysfs_read;
    return p;
}

CudaLevel cuda_level(bool full, const gpu::Thresholds& t) {
    CudaLevel l;
    if (!full) return l;
    l.full = l.measure_copy = true;
    l.iterations = 20;
    l.copy_bytes = static_cast<std::size_t>(t.copy_bytes);
    return l;
}

std::vector<Record> judge_run(const Gathered& g, const JudgeContext& c, bool retest) {
    std::vector<Record> out;
    auto add = [&](std::vector<Record> rs) { out.insert(out.end(), rs.begin(), rs.end()); };
    std::vector<std::string> nvidia;
    if (g.sysfs) {
        auto gpus = g.sysfs->gpus;
        for (auto& gf : gpus) {
            if (gf.vendor == kNvidia) nvidia.push_back(gf.pci.bus_id);
            if (g.nvml)
                for (const auto& n : g.nvml->gpus)
                    if (n.bus_id == gf.pci.bus_id) gf.model = n.name;
            const auto* cg = cuda_gpu(g, gf.pci.bus_id);
            if (gf.model.empty() && cg) gf.model = cg->name;
            // The link as the cuda stage read it right after its copies: an idle GPU's is slow.
            if (cg && !retest && cg->pcie_width > 0) {
                gf.pci.link.cur_width = cg->pcie_width;
                gf.pci.link.cur_gen = cg->pcie_gen;
            }
        }
        add(judge_inventory(gpus, g.sysfs->nics, g.sysfs->ports, c.expected));
        for (const auto& gf : gpus) {
            const auto* cg = cuda_gpu(g, gf.pci.bus_id);
            std::string skip;
            if (!c.conf.pcie_speed) skip = "not judged (pcie_speed=no)";
            else if (retest) skip = "not measured again: only right after the cuda stage's copies is a GPU's link at speed";
            else if (!cg || cg->pcie_width <= 0)
                skip = "not judged: an idle GPU slows its link down, and the cuda stage did not run copies on it";
            add(judge_link("gpu " + gf.pci.bus_id, gf.pci, skip));
        }
        for (const auto& n : g.sysfs->nics)
            add(judge_link("nic " + n.name, n.pci, c.conf.pcie_speed ? "" : "not judged (pcie_speed=no)"));
        add(judge_ports(g.sysfs->ports, c.conf.port_rate_gbps ? c.conf.port_rate_gbps : c.ib_rate_gbps));
        if (!retest)
            add(judge_counters(g.sysfs->ports, c.previous.time > 0 ? &c.previous.counters : nullptr, c.conf));
    }
    if (g.nvml) add(judge_nvml(*g.nvml, nvidia, c.conf));
    if (retest) return out;
    if (g.kmsg && !g.kmsg->why.empty()) out.push_back({Check::gpu_xid, "node", "", "", "", Status::skipped, g.kmsg->why, false});
    else if (g.kmsg) {
        // The node's NVIDIA GPUs: on the bus, or known to the driver (a GPU
        // that fell off the bus may be gone from one of them).
        std::vector<std::string> gpus = nvidia;
        if (g.nvml)
            for (const auto& n : g.nvml->gpus)
                if (!n.bus_id.empty()) gpus.push_back(n.bus_id);
        add(judge_xids(g.kmsg->xids, c.conf.xids, gpus, g.kmsg->lost));
    }
    if (g.cuda) add(stage_records(Check::cuda, g.cuda->result, g.cuda->findings, g.cuda->gpus));
    if (g.nccl) add(stage_records(Check::nccl, g.nccl->result, g.nccl->findings));
    if (g.rdma) add(stage_records(Check::rdma, g.rdma->result, g.rdma->findings));
    return out;
}

bool from_nvml(Check c) {
    return c == Check::gpu_driver || c == Check::gpu_nvml || c == Check::gpu_pages || c == Check::gpu_rows || c == Check::gpu_ecc ||
           c == Check::gpu_nvlink;
}

RetestSelection select_retest(const std::vector<Record>& records) {
    RetestSelection s;
    for (const auto& r : records)
        if (r.status == Status::failed && retestable(r.check)) {
            s.keys.insert(key_of(r));
            s.nvml = s.nvml || from_nvml(r.check);
        }
    return s;
}

bool retest_fits(double left_s, double delay_s) { return left_s > delay_s + 0.5; }

double read_budget(double cap_s, double left_s) {
    const double b = std::min(cap_s, left_s);
    return b < kMinReadS ? 0 : b;
}

double stage_budget(StageShare s, double left_s) {
    const double b = left_s * s.share - s.keep_s;
    return b < kMinStageS ? 0 : b;
}

double nccl_abort_s(double left_s) { return std::max(1.0, left_s * 0.5); }

std::set<Key> failed_again(const RetestSelection& s, const std::vector<Record>& retest_records) {
    std::set<Key> again;
    for (const auto& r : retest_records)
        if (r.status == Status::failed && s.keys.count(key_of(r))) again.insert(key_of(r));
    return again;
}

}  // namespace gangway::health
