// The gangway command: one subcommand per file, dispatched here.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "config.h"
#include "commands.hpp"

namespace {

void usage(std::FILE* out) {
    std::fputs(
        "usage: gangway <command> [options]\n"
        "\n"
        "gangway turns a SLURM job step into an instant cluster. Its SPANK plugin sets\n"
        "MASTER_ADDR, MASTER_PORT, NODE_RANK, WORLD_SIZE and the rest in every task.\n"
        "\n"
        "commands:\n"
        "  env [--explain]   print the variables gangway set for this task (run it under srun)\n"
        "  topo [--json]     plan GPU, NIC and CPU pinning for this node's tasks (see topo --help)\n"
        "  run -- CMD        check the step's nodes and network, then exec CMD (see run --help)\n"
        "  check             the same check alone; exit code 0 healthy, 3 degraded, 4 unreachable\n"
        "  doctor            check that SLURM will load this node's gangway (versions, plugstack.conf)\n"
        "  gpu-check --local the GPU and RDMA stages (cuda, nccl, verbs) on this node alone\n"
        "  node-check        this node's health between jobs; SLURM's HealthCheckProgram (see --help)\n"
        "  epilog-drain      the Epilog's drains of the nodes the check found bad (admins; see --help)\n"
        "  fleet             the fleet memory: ingest the checks' reports, show them (see fleet --help)\n"
        "  postmortem [JOB]  who stopped the job: the node, rank and cause that came first (see --help)\n"
        "  status [JOB]      the running job's pace, and the node that slows it or a hang (see --help)\n"
        "  version           print the version and the SLURM it was built for\n"
        "  help              this text\n"
        "\n"
        "See gangway(1) and gangway.so(8); for admins gangway-doctor(8), gangway-node-check(8),\n"
        "node-check.conf(5) and gangway-fleet(8).\n",
        out);
}

int dispatch(int argc, char** argv);

}  // namespace

// Any exception that escapes a command (out of memory, no thread, a bug) ends
// gangway with one line naming it and a defined status: 5 for run and check
// (the check could not run), 1 for the others; never an abort.
int main(int argc, char** argv) {
    const std::string cmd = argc > 1 ? argv[1] : "";
    const int status = cmd == "run" || cmd == "check" ? 5 : 1;
    try {
        return dispatch(argc, argv);
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "gangway %s: out of memory\n", cmd.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "gangway %s: %s\n", cmd.c_str(), e.what());
    } catch (...) {
        std::fprintf(stderr, "gangway %s: unexpected error\n", cmd.c_str());
    }
    return status;
}

namespace {

int dispatch(int argc, char** argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const std::string cmd = argv[1];
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
        usage(stdout);
        return 0;
    }
    if (cmd == "version" || cmd == "--version" || cmd == "-V") {
        std::printf("gangway %s (built for SLURM %s)\n", PACKAGE_VERSION, GANGWAY_SLURM_BUILT_FOR);
        if (const auto w = gangway::cli::version_mismatch_warning(); !w.empty()) std::fprintf(stderr, "%s\n", w.c_str());
        return 0;
    }
    if (cmd == "env") return gangway::cli::cmd_env(argc - 1, argv + 1);
    if (cmd == "topo") return gangway::cli::cmd_topo(argc - 1, argv + 1);
    if (cmd == "run") return gangway::cli::cmd_run(argc - 1, argv + 1);
    if (cmd == "check") return gangway::cli::cmd_check(argc - 1, argv + 1);
    if (cmd == "doctor") return gangway::cli::cmd_doctor(argc - 1, argv + 1);
    if (cmd == "gpu-check") return gangway::cli::cmd_gpu_check(argc - 1, argv + 1);
    if (cmd == "node-check") return gangway::cli::cmd_node_check(argc - 1, argv + 1);
    if (cmd == "epilog-drain") return gangway::cli::cmd_epilog_drain(argc - 1, argv + 1);
    if (cmd == "fleet") return gangway::cli::cmd_fleet(argc - 1, argv + 1);
    if (cmd == "postmortem") return gangway::cli::cmd_postmortem(argc - 1, argv + 1);
    if (cmd == "status") return gangway::cli::cmd_status(argc - 1, argv + 1);
    if (cmd == "watch-node") return gangway::cli::cmd_watch_node(argc - 1, argv + 1);
    std::fprintf(stderr, "gangway: unknown command \"%s\"; run `gangway help` for the list\n", cmd.c_str());
    return 2;
}

}  // namespace
