#include "local.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "../lib/sys/node/file.hpp"
#include "log.hpp"
#include "options.hpp"
#include "state.hpp"

namespace gangway::plugin::local {

int init(spank_t sp, int ac, char** av) {
    try {
        state().site = parse_site_args(std::vector<std::string>(av, av + ac));
    } catch (const Error& e) {
        log_error(std::string(e.what()) + "; ask your SLURM administrator to fix the gangway line");
        return -1;
    }
    return register_options(sp);
}

int init_post_opt(spank_t sp) {
    try {
        apply_env_fallbacks(sp);
    } catch (const Error& e) {
        log_error(e.what());
        return -1;
    }
    return 0;
}

int user_init(spank_t) {
    const auto key = sys::random_bytes(32);
    if (!key) {
        log_error("cannot create the step's secret: " + key.error());
        return -1;
    }
    const std::string secret = to_hex(*key);
    // Overwrite: an srun inside a step or batch script makes a new step, with a new secret.
    if (setenv("GANGWAY_SECRET", secret.c_str(), 1) != 0) {
        log_error("cannot put the step's secret in the environment");
        return -1;
    }
    return 0;
}

}  // namespace gangway::plugin::local
