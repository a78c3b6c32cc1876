// `gangway env`: what the plugin set for this task, read back from the
// environment, so a user can see exactly what their framework will read.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../lib/env/cluster_env.hpp"
#include "commands.hpp"

namespace gangway::cli {

int cmd_env(int argc, char** argv) {
    bool explain = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--explain") == 0) explain = true;
        else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::puts("usage: gangway env [--explain]\n"
                      "Prints NAME=value for every variable of gangway's contract present in this task.\n"
                      "--explain adds who set each one: gangway, or the user (a user's value wins).");
            return 0;
        } else {
            std::fprintf(stderr, "gangway env: unknown option \"%s\"; see `gangway env --help`\n", argv[i]);
            return 2;
        }
    }
    EnvMap env;
    for (const auto& name : contract_names())
        if (const char* v = std::getenv(name.c_str())) env[name] = v;
    if (const char* rec = std::getenv(kSetRecordVar)) env[kSetRecordVar] = rec;
    if (!env.count(kSetRecordVar)) {
        std::fprintf(stderr, "gangway env: this task has no gangway variables; run it inside a job step "
                             "(srun gangway env) on a cluster whose plugstack.conf loads gangway.so\n");
        return 3;
    }
    const auto ours = inherited_names(env);
    for (const auto& name : contract_names()) {
        auto it = env.find(name);
        if (it == env.end()) continue;
        if (explain) {
            const bool g = std::find(ours.begin(), ours.end(), name) != ours.end();
            std::printf("%-24s %-8s %s\n", name.c_str(), g ? "gangway" : "user", it->second.c_str());
        } else {
            std::printf("%s=%s\n", name.c_str(), it->second.c_str());
        }
    }
    if (explain)
        if (auto it = env.find("GANGWAY_NODE_ORDER"); it != env.end())
            std::printf("NODE_RANK follows %s (rank_order=topology): `gangway topo --ranks` shows each node's leaf "
                        "switch and the ring hops that cross one; SLURM_PROCID and SLURM_NODEID stay SLURM's\n",
                        it->second.starts_with("topology:") ? "the leaf switches" : "SLURM's order, fallen back to");
    return 0;
}

}  // namespace gangway::cli
