// The SPANK entry points: each catches everything (no C++ exception may cross
// into slurmstepd) and dispatches on the context to one module per context.
#include "config.h"
#include "guard.hpp"
#include "local.hpp"
#include "log.hpp"
#include "remote.hpp"
#include "state.hpp"
#include "spank_api.hpp"
#include "sampler.hpp"
#include "watch.hpp"
#include "task_exit.hpp"

// SPANK_PLUGIN() defines these as const objects, which C++ gives internal
// linkage; declaring them extern "C" first keeps them exported (tested with nm -D).
extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
}
SPANK_PLUGIN(gangway, 1);

// The version as one string in the file, for `gangway doctor` and what(1)
// (the log line below is assembled in registers at -O2, so it is not one).
// `retain`: the plugin links with --gc-sections, which drops an unreferenced `used` array.
[[gnu::used, gnu::retain]] static const char gangway_ident[] =
    "@(#)gangway " PACKAGE_VERSION " (built for SLURM " GANGWAY_SLURM_BUILT_FOR ")";

using gangway::plugin::guarded;

// Failing init or user_init in slurmstepd would drain the node: only task_init may fail.
constexpr int kCarryOn = 0;

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
    return guarded("init", kCarryOn, [&] {
        switch (spank_context()) {
            case S_CTX_LOCAL:
            case S_CTX_ALLOCATOR: return gangway::plugin::local::init(sp, ac, av);
            case S_CTX_REMOTE: return gangway::plugin::remote::init(sp, ac, av);
            case S_CTX_SLURMD:
                gangway::plugin::log_info("gangway " PACKAGE_VERSION " loaded (built for SLURM " GANGWAY_SLURM_BUILT_FOR ")");
                return 0;
            default: return 0;
        }
    });
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int, char**) {
    return guarded("init_post_opt", kCarryOn, [&] {
        switch (spank_context()) {
            case S_CTX_LOCAL:
            case S_CTX_ALLOCATOR: return gangway::plugin::local::init_post_opt(sp);
            case S_CTX_REMOTE: return gangway::plugin::remote::init_post_opt(sp);
            default: return 0;
        }
    });
}

extern "C" int slurm_spank_local_user_init(spank_t sp, int, char**) {
    return guarded("local_user_init", kCarryOn, [&] { return gangway::plugin::local::user_init(sp); });
}

extern "C" int slurm_spank_user_init(spank_t sp, int, char**) {
    return guarded("user_init", kCarryOn, [&] { return spank_remote(sp) ? gangway::plugin::remote::user_init(sp) : 0; });
}

extern "C" int slurm_spank_task_init(spank_t sp, int, char**) {
    // Failing here stops only this task, with the line saying why.
    return guarded("task_init", -1, [&] { return spank_remote(sp) ? gangway::plugin::remote::task_init(sp) : 0; });
}

extern "C" int slurm_spank_task_post_fork(spank_t sp, int, char**) {
    // The post-mortem's samples of the task while it runs (postmortem_sample=).
    return guarded("task_post_fork", kCarryOn, [&] {
        if (spank_context() == S_CTX_REMOTE) gangway::plugin::sampler::add_task(sp);
        return 0;
    });
}

extern "C" int slurm_spank_task_exit(spank_t sp, int, char**) {
    // The post-mortem's record of this task's end (postmortem_dir=): never
    // fails, whatever happens; SLURM ignores the result here anyway.
    return guarded("task_exit", kCarryOn, [&] {
        if (spank_context() == S_CTX_REMOTE) {
            gangway::plugin::sampler::end_task(sp);
            gangway::plugin::task_exit::record(sp);
        }
        return 0;
    });
}

extern "C" int slurm_spank_exit(spank_t, int, char**) {
    return guarded("exit", kCarryOn, [&] {
        if (spank_context() == S_CTX_REMOTE) {
            gangway::plugin::sampler::stop();
            gangway::plugin::watch::stop();
        }
        return 0;
    });
}
