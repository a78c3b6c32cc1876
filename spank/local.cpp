#include "local.hpp"

#include <string>
#include <vector>

#include "../lib/error.hpp"
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

}  // namespace gangway::plugin::local
