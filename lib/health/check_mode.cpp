// The node check's deadlines, trust and exit codes by mode (check_mode.hpp).
#include "check_mode.hpp"

#include <algorithm>

#include "../preflight/drain.hpp"   // threshold_vars_set
#include "../preflight/report.hpp"  // kExit*

namespace gangway::health {

double run_timeout(Mode m, bool full, std::optional<double> asked_s) {
    double t = asked_s ? *asked_s : full ? 40 : 10;
    if (m == Mode::slurm && t > kSlurmCheckMax) t = kSlurmCheckMax;
    return t;
}

double timeout_after_wait(Mode m, double timeout_s, double waited_s) {
    return m == Mode::slurm ? std::min(timeout_s, kSlurmCheckMax - waited_s) : timeout_s;
}

double lock_wait_s(Mode m, bool full) { return m == Mode::slurm ? 5 : full ? 30 : 5; }

bool writes_state(Mode m, bool state_named) { return m != Mode::plain || state_named; }

ScontrolBudget scontrol_budget(double elapsed_s, double site_timeout_s) {
    const double left = kSlurmTotal - elapsed_s;
    ScontrolBudget b;
    b.timeout_s = std::max(1.0, std::min(site_timeout_s, (left - 1) / 2));
    b.jitter_s = std::min(1.0, std::max(0.0, left - 2 * b.timeout_s - 1));
    return b;
}

EnvMap trusted_env(Mode m, EnvMap env) {
    if (m != Mode::plain)
        for (const auto& v : preflight::threshold_vars_set(env)) env.erase(v);
    return env;
}

EnvMap stage_env(EnvMap env, const SiteConf& c) {
    for (const char* k : {"CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "SLURM_GPUS_ON_NODE"}) env.erase(k);
    for (const auto& [k, v] : c.thresholds) env[k] = v;
    return env;
}

int exit_code(Mode m, Verdict v) {
    switch (m) {
        case Mode::slurm:
        case Mode::nhc: return v == Verdict::failed ? preflight::kExitDegraded : preflight::kExitOk;
        case Mode::plain: break;
    }
    switch (v) {
        case Verdict::healthy: return preflight::kExitOk;
        case Verdict::inconclusive: return preflight::kExitCannotCheck;
        case Verdict::pending:
        case Verdict::failed: break;
    }
    return preflight::kExitDegraded;
}

int exit_code(Mode m, NotChecked why) {
    if (m == Mode::slurm) return preflight::kExitOk;
    return why == NotChecked::bad_site_file ? preflight::kExitUsage : preflight::kExitCannotCheck;
}

}  // namespace gangway::health
