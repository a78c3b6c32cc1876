#include "bootstrap.hpp"

#include <algorithm>
#include <cmath>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway::preflight {

BootstrapMode parse_bootstrap_mode(std::string_view s) {
    for (auto m : {BootstrapMode::automatic, BootstrapMode::pmix, BootstrapMode::tcp})
        if (s == to_string(m)) return m;
    throw Error("--bootstrap must be auto, pmix or tcp, not \"" + excerpt(s) + "\"");
}

std::string_view to_string(BootstrapMode m) {
    switch (m) {
        case BootstrapMode::automatic: return "auto";
        case BootstrapMode::pmix: return "pmix";
        case BootstrapMode::tcp: return "tcp";
    }
    return "auto";
}

BootstrapChoice choose_bootstrap(BootstrapMode mode, bool built, bool in_env, bool command_follows) {
    if (mode == BootstrapMode::tcp || (mode == BootstrapMode::automatic && command_follows)) return {};
    if (!built) {
        if (mode == BootstrapMode::pmix) throw Error("--bootstrap=pmix: this gangway was built without PMIx (libpmix-dev)");
        return {};
    }
    if (!in_env) {
        if (mode == BootstrapMode::pmix)
            throw Error("--bootstrap=pmix: the step has no PMIx (PMIX_RANK/PMIX_NAMESPACE are not set): start it with srun --mpi=pmix");
        return {};
    }
    return {true};
}

std::string pmix_step_mismatch(unsigned pmix_rank, unsigned pmix_size, unsigned rank, unsigned ntasks) {
    if (pmix_size != ntasks)
        return "the PMIx namespace has " + std::to_string(pmix_size) + " processes, the step " + std::to_string(ntasks) +
               " tasks";
    if (pmix_rank != rank)
        return "PMIx rank " + std::to_string(pmix_rank) + " is not SLURM_PROCID " + std::to_string(rank);
    return "";
}

double fence1_timeout_s(double join_timeout_s) { return std::max(0.5, join_timeout_s / 2); }

int pmix_timeout_arg(double seconds) {
    if (!(seconds > 1)) return 1;
    return static_cast<int>(std::min(86400.0, std::ceil(seconds)));
}

}  // namespace gangway::preflight
