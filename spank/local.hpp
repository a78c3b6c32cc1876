// srun, sbatch and salloc (SPANK's local and allocator contexts): validate
// everything before any allocation, so that a mistake costs one clear line and
// no queue time.
#pragma once
#include "spank_api.hpp"

namespace gangway::plugin::local {

int init(spank_t sp, int ac, char** av);
int init_post_opt(spank_t sp);
// srun only, after the allocation and before the tasks start: creates the
// step's secret (GANGWAY_SECRET) that authenticates gangway's own TCP
// rendezvous between the tasks. It travels in the step's environment, which
// only the job's user (and root) can read.
int user_init(spank_t sp);

}  // namespace gangway::plugin::local
