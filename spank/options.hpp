// The user's SPANK options (--gangway, --gangway-iface) and their GANGWAY_*
// environment fallbacks.
#pragma once
#include "spank_api.hpp"

namespace gangway::plugin {

// Registers the options with SLURM; valid only inside slurm_spank_init.
int register_options(spank_t sp);

// Applies GANGWAY_MODE / GANGWAY_IFACE where the command line left the
// option unset. `getenv` reads the context's environment. Throws gangway::Error.
void apply_env_fallbacks(spank_t sp);

}  // namespace gangway::plugin
