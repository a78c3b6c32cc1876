// How the node check is run (by hand, as SLURM's HealthCheckProgram, for
// NHC) and what follows from that: its deadline and SLURM's time budget, what
// in the environment it trusts, and its exit codes. Pure: the launcher
// (launcher/cmd_node_check.cpp) parses the options, calls these and prints.
#pragma once
#include <optional>

#include "../env/step_view.hpp"  // EnvMap
#include "confirm.hpp"           // Verdict
#include "site_conf.hpp"

namespace gangway::health {

// plain: by hand (a table or JSON); slurm: HealthCheckProgram (silent, drains
// and resumes itself); nhc: NHC's check_gangway (one line, NHC drains).
enum class Mode { plain, slurm, nhc };

// SLURM kills a health check after 60 s: the checks (at most kSlurmCheckMax)
// and both scontrol calls fit well inside kSlurmTotal.
inline constexpr double kSlurmCheckMax = 40, kSlurmTotal = 55;

// The run's deadline: the one asked for (--timeout), else 10 s quick and 40 s
// full; as SLURM's, at most kSlurmCheckMax.
double run_timeout(Mode m, bool full, std::optional<double> asked_s);

// As SLURM's, the wait for another run (the state lock) came out of SLURM's
// 60 s: the checks get what is left of kSlurmCheckMax. Else the deadline as is.
double timeout_after_wait(Mode m, double timeout_s, double waited_s);

// How long to wait for another run holding the state lock.
double lock_wait_s(Mode m, bool full);

// Whether the run reads and writes the state file: always for SLURM and NHC
// (the repeat rule needs the last run), by hand only when --state names one.
bool writes_state(Mode m, bool state_named);

// The scontrol calls' share of SLURM's budget after `elapsed_s` of the run:
// each call's timeout (the site's, at most half of what is left less a
// second, at least one second) and the jitter before them (at most a second,
// only out of what the calls leave).
struct ScontrolBudget {
    double timeout_s = 0;
    double jitter_s = 0;
};
ScontrolBudget scontrol_budget(double elapsed_s, double site_timeout_s);

// What the check trusts in its environment. As SLURM's or NHC's, a drain
// follows from the site's thresholds alone (node-check.conf), never from a
// GANGWAY_* threshold that happens to be in the environment (a Prolog's, a
// user's leaking into it): those are dropped. By hand they apply, as to gpu-check.
EnvMap trusted_env(Mode m, EnvMap env);

// The environment the stages run with: the whole node is checked, not a
// job's share of it (a Prolog's environment names the job's GPUs), and the
// site's thresholds (node-check.conf) are set over what is there.
EnvMap stage_env(EnvMap env, const SiteConf& c);

// The exit code of a run with verdict `v`. By hand: 0 healthy, 3 a check
// failed (pending or confirmed), 5 inconclusive. For NHC: 3 only on a
// confirmed failure. As SLURM's (which ignores it; a Prolog or Epilog around
// it may not): 3 on a confirmed failure, else 0. Never 3 for inconclusive.
int exit_code(Mode m, Verdict v);

// Why a run did not check at all, and its exit code: never a drain (as
// SLURM's: 0) for a fault of the check or its site file.
enum class NotChecked {
    bad_site_file,  // node-check.conf malformed or unreadable: 2 (fix it), as SLURM's 0
    no_lock,        // another run holds the state lock: 5, as SLURM's 0
    internal_error  // the check itself threw: 5, as SLURM's 0
};
int exit_code(Mode m, NotChecked why);

}  // namespace gangway::health
