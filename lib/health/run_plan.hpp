// The node check's judgement between gathering and the repeat rule: which
// parts of a run are read or run given what was found before them, which
// judges run on what was gathered (first pass, or the immediate re-test),
// and which failures are measured again at once. Pure: lib/sys/health/
// node_check.cpp gathers the facts (sysfs, NVML, the kernel log, the
// preflight's stages) under deadlines and calls these.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "../env/step_view.hpp"  // EnvMap
#include "../preflight/gpu_checks.hpp"
#include "../preflight/report.hpp"
#include "facts.hpp"
#include "judge.hpp"
#include "kmsg_record.hpp"
#include "record.hpp"
#include "site_conf.hpp"
#include "state.hpp"

namespace gangway::health {

// What sysfs said about this node.
struct SysfsFacts {
    std::vector<GpuFacts> gpus;
    std::vector<NicFacts> nics;
    std::vector<PortFacts> ports;
};

// What the kernel log said since the last run.
struct KmsgFacts {
    std::vector<Xid> xids;          // new since the last run
    KmsgLoss lost;                  // records overwritten before they were read
    std::optional<std::uint64_t> seq;
    std::string why;                // the log could not be read (not root): why
};

// A preflight stage's outcome, as far as the judges read it.
struct StageFacts {
    preflight::StageResult result;
    std::vector<gpu::Finding> findings;
    std::vector<gpu::GpuResult> gpus;  // cuda: per GPU (model names, the link right after the copies)
};

// What a run gathered; a part that did not finish (or did not run) stays empty.
struct Gathered {
    std::optional<SysfsFacts> sysfs;
    std::optional<NvmlFacts> nvml;
    std::optional<KmsgFacts> kmsg;
    std::optional<StageFacts> cuda, nccl, rdma;
};

// Where SLURM's files are that say what this node should have: the site
// file's slurm_conf, else SLURM_CONF, else /etc/slurm/slurm.conf; the site
// file's gres_conf, else the gres.conf beside slurm.conf (as slurmd looks).
struct SlurmFiles {
    std::string slurm_conf, gres_conf;
};
SlurmFiles slurm_files(const SiteConf& c, const EnvMap& env);

// An NVIDIA GPU (vendor 0x10de) among the GPUs sysfs found.
bool any_nvidia(const SysfsFacts& s);

// NVML is read where sysfs found an NVIDIA GPU, or where sysfs could not be
// read at all (then NVML is the only inventory left).
bool reads_nvml(const std::optional<SysfsFacts>& sysfs);
// The kernel log's Xids: only where the driver may have written some.
bool reads_kmsg(const std::optional<SysfsFacts>& sysfs);

// The GPUs NVML says a job computes on: a context of ours would take their
// memory, and an exclusive-process GPU would refuse us, which is no fault of
// the node (HealthCheckNodeState=ANY runs the check on busy nodes too).
std::vector<std::string> busy_gpus(const std::optional<NvmlFacts>& nvml);

// Which of the preflight's stages run: the cuda stage unless a GPU is busy
// (then `cuda_skip` says why, and the stage is recorded as skipped); at the
// full level also NCCL and, with the ports sysfs found, the RDMA loopback.
struct StagePlan {
    bool cuda = true;
    std::string cuda_skip;          // not empty: the cuda stage's skipped verdict
    bool nccl = false;
    bool rdma = false;
};
StagePlan plan_stages(bool full, bool sysfs_read, const std::vector<std::string>& busy);

// How much the cuda stage does at each level. Quick: one small round trip
// per GPU (its link gets traffic, so its speed can be judged) and no
// bandwidth figure; full: the thresholds' copy size, timed over 20 copies.
struct CudaLevel {
    bool full = false;
    bool measure_copy = false;
    int iterations = 1;
    std::size_t copy_bytes = std::size_t(32) << 20;
};
CudaLevel cuda_level(bool full, const gpu::Thresholds& t);

// What the judges need besides the gathered facts.
struct JudgeContext {
    const SiteConf& conf;
    const Expected& expected;
    std::optional<double> ib_rate_gbps;  // the thresholds' expected port rate (conf.port_rate_gbps wins)
    const State& previous;               // the counters' baseline when previous.time > 0
};

// Every judge that applies to what was gathered. `retest`: the immediate
// re-test, judging only what can be re-read (sysfs, NVML): no counters (their
// baseline is the previous run's), no link speeds (only right after the cuda
// stage's copies is a GPU's link at speed), no Xids, no stages.
std::vector<Record> judge_run(const Gathered& g, const JudgeContext& c, bool retest);

// The checks whose figures come from NVML: their re-test reads NVML again.
bool from_nvml(Check c);

// The immediate re-test: the keys of what failed and can be read again
// (retestable()), and whether NVML must be read again for them.
struct RetestSelection {
    std::set<Key> keys;
    bool nvml = false;
    bool empty() const { return keys.empty(); }
};
RetestSelection select_retest(const std::vector<Record>& records);

// Each part's time out of the run's deadline. A part that reads (sysfs,
// NVML, the kernel log, and the re-test's reads) runs under min(its cap,
// what is left): the cap bounds a hung read (NVML's init on a wedged GPU)
// so that the stages after it still run. A preflight stage runs under what
// is left times its share, less what it keeps for the stages after it.
struct ReadCaps {
    double sysfs_s = 5;   // attribute files: milliseconds when healthy
    double nvml_s = 10;   // NVML's init alone takes seconds on a large node
    double kmsg_s = 3;    // one pass over the kernel's ring buffer
};
inline constexpr ReadCaps kReadCaps{};

struct StageShare {
    double share = 1;     // of what is left when the stage starts
    double keep_s = 0;    // kept for the stages after it
};
// cuda and rdma keep a fifth of a second for what follows (the re-test, the
// state file); nccl takes six tenths, so a hung NCCL leaves rdma its turn.
inline constexpr StageShare kCudaShare{1, 0.2}, kNcclShare{0.6, 0}, kRdmaShare{1, 0.2};

// Too little left to start a part: it is recorded as not started (the run
// inconclusive) rather than run to a certain abort.
inline constexpr double kMinReadS = 0.05, kMinStageS = 0.3;

// A reading part's budget: min(cap, left); 0 when under kMinReadS (not started).
double read_budget(double cap_s, double left_s);
// A stage's budget: left x share - keep; 0 when under kMinStageS (not started).
double stage_budget(StageShare s, double left_s);
// The NCCL stage's own abort (its communicator's timeout), before the
// stage's deadline, the backstop: half of what is left, at least a second.
double nccl_abort_s(double left_s);

// Whether the re-test fits in what is left of the run's deadline: its delay
// and half a second to read again.
bool retest_fits(double left_s, double delay_s);

// Of the selected keys, those that failed again in the re-test's records.
std::set<Key> failed_again(const RetestSelection& s, const std::vector<Record>& retest_records);

}  // namespace gangway::health
