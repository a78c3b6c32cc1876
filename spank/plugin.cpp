// The SPANK entry points: each catches everything (no C++ exception may cross
// into slurmstepd) and dispatches on the context to one module per context.
#include "config.h"
#include "local.hpp"
#include "log.hpp"
#include "remote.hpp"
#include "state.hpp"
#include "spank_api.hpp"

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

namespace {

// Logged now, and kept so that task_init fails with it: a task must not start
// without its variables and without the reason (issue 15, item 11).
void fail_later(const std::string& message) {
    gangway::plugin::log_error(message);
    gangway::plugin::note_error(message);
}

template <class F>
int guarded(const char* where, F&& body) noexcept {
    try {
        return body();
    } catch (const std::exception& e) {
        fail_later(std::string("internal error in ") + where + ": " + e.what() +
                   "; please report it with your plugstack.conf line");
    } catch (...) {
        fail_later(std::string("internal error in ") + where + "; please report it");
    }
    // Failing init or user_init in slurmstepd would drain the node: only task_init may fail.
    return 0;
}

}  // namespace

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
    return guarded("init", [&] {
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
    return guarded("init_post_opt", [&] {
        switch (spank_context()) {
            case S_CTX_LOCAL:
            case S_CTX_ALLOCATOR: return gangway::plugin::local::init_post_opt(sp);
            case S_CTX_REMOTE: return gangway::plugin::remote::init_post_opt(sp);
            default: return 0;
        }
    });
}

extern "C" int slurm_spank_local_user_init(spank_t sp, int, char**) {
    return guarded("local_user_init", [&] { return gangway::plugin::local::user_init(sp); });
}

extern "C" int slurm_spank_user_init(spank_t sp, int, char**) {
    return guarded("user_init", [&] { return spank_remote(sp) ? gangway::plugin::remote::user_init(sp) : 0; });
}

extern "C" int slurm_spank_task_init(spank_t sp, int, char**) {
    try {
        return spank_remote(sp) ? gangway::plugin::remote::task_init(sp) : 0;
    } catch (...) {
        gangway::plugin::log_error("internal error in task_init; the task was not started. Please report it");
        return -1;
    }
}
