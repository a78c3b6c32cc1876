// How the preflight's tasks find each other: the choice between PMIx (srun
// --mpi=pmix) and the TCP rendezvous, and the PMIx fences' time budget. Pure;
// the PMIx calls live in lib/sys/preflight/pmix_bootstrap.
#pragma once
#include <string>
#include <string_view>

namespace gangway::preflight {

enum class BootstrapMode { automatic, pmix, tcp };

// "auto", "pmix" or "tcp" (--bootstrap, GANGWAY_BOOTSTRAP); throws
// gangway::Error otherwise.
BootstrapMode parse_bootstrap_mode(std::string_view s);
std::string_view to_string(BootstrapMode m);

struct BootstrapChoice {
    bool try_pmix = false;  // initialise PMIx and fence; TCP when that fails (auto)
};

// built: the launcher was built with PMIx; in_env: PMIX_RANK and PMIX_NAMESPACE
// are set (srun --mpi=pmix); command_follows: gangway run, whose command
// becomes this process. auto picks TCP then: Open MPI's MPI_Init fails in a
// process that opened and finalized a PMIx session before (seen with Open
// MPI 4.1 and SLURM 22.05's mpi/pmix, one task per node too), so the task's
// PMIx session is left to the command. Every task of a step decides alike.
// Throws gangway::Error, saying why, when the check cannot run:
// --bootstrap=pmix where PMIx is not built in or the step has none.
BootstrapChoice choose_bootstrap(BootstrapMode mode, bool built, bool in_env, bool command_follows = false);

// Why PMIx's view of the step cannot be used for it ("" when it can): its
// namespace must be exactly the step's tasks, ranked as SLURM_PROCID.
std::string pmix_step_mismatch(unsigned pmix_rank, unsigned pmix_size, unsigned rank, unsigned ntasks);

// Fence #1 (every task alive) gets half the join timeout, so that when a task
// is missing the TCP rendezvous still has the other half to name its node.
double fence1_timeout_s(double join_timeout_s);
// PMIX_TIMEOUT is whole seconds: at least 1, rounded up.
int pmix_timeout_arg(double seconds);

}  // namespace gangway::preflight
