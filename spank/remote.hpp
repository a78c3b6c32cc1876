// slurmstepd (SPANK's remote context). SLURM drains the node when init or
// user_init fails in a batch job, so those never fail: a problem is kept and
// reported from task_init, which fails only the task, on the user's stderr.
#pragma once
#include "spank_api.hpp"

namespace gangway::plugin::remote {

int init(spank_t sp, int ac, char** av);
int init_post_opt(spank_t sp);
int user_init(spank_t sp);
int task_init(spank_t sp);

}  // namespace gangway::plugin::remote
