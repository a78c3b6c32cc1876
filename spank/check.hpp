// The preflight before the user's command (--gangway-check, site check=):
// run from task_init, in the task's own process, after its variables are set
// and before SLURM execs the command.
//
// Why task_init and a child process, not spank_prepend_task_argv: the call
// exists only from SLURM 23.11, and a prepended `gangway run` would run inside
// whatever a later plugin (pyxis) or the command itself (apptainer exec) puts
// the task in, where gangway may not be installed. A child of task_init runs on
// the host, as the user, with the task's environment, on every release; the
// command then keeps its pid, arguments, stdio, signals and exit code, because
// SLURM execs it in this same process. The child uses the TCP bootstrap, so
// the task's PMIx session stays the MPI program's own.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "../lib/env/config.hpp"
#include "../lib/env/step_view.hpp"
#include "../lib/env/var_list.hpp"
#include "spank_api.hpp"

namespace gangway::plugin::check {


// Runs the check and returns when the command may start (a healthy verdict,
// or --gangway-on-fail=warn), after marking the job checked in the task's
// environment. Otherwise the task exits with the verdict's code and the
// command never starts. `extra` are variables the check needs that the task
// does not get (the contract, when --gangway=off). Throws gangway::Error when
// the check cannot be started. `order_answer`: with rank_order=topology, the
// check is asked (GANGWAY_CHECK_ORDER_FD) whether the nodes computed the same
// order; the return is then its answer (lib/env/rank_order.hpp's
// order_answer, "" when they agree or the check said nothing).
std::string before_command(spank_t sp, const Config& cfg, const StepView& step, const CheckPlan& plan, const VarList& extra,
                           bool order_answer = false);

// The gangway command the check runs: launcher= or the installed one.
std::string launcher_path(const Config& cfg);

// The first executable dir/name for the dirs of `path_var` (a PATH value), as
// an exec would find it; empty when none is.
std::string find_in_path(std::string_view path_var, std::string_view name);

}  // namespace gangway::plugin::check
