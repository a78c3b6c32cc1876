// The user's SPANK options (--gangway, --gangway-iface, --gangway-pin,
// --gangway-check, --gangway-on-fail) and their GANGWAY_* environment fallbacks.
#pragma once
#include "spank_api.hpp"

namespace gangway::plugin {

// Registers the options with SLURM; valid only inside slurm_spank_init.
int register_options(spank_t sp);

// Applies GANGWAY_MODE / _IFACE / _PIN / _CHECK / _ON_FAIL where the command line
// left the option unset, from the context's environment (the job's in
// slurmstepd, the process's in srun and sbatch), and refuses a user's
// --gangway-check=none where the site does not allow it. Throws gangway::Error.
void apply_env_fallbacks(spank_t sp);

}  // namespace gangway::plugin
