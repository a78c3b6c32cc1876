#pragma once
#include <cstddef>
#include <optional>
#include <string>

namespace gangway::cli {

// argv[0] is the subcommand's name. Each returns the process exit code.
int cmd_env(int argc, char** argv);
int cmd_topo(int argc, char** argv);
int cmd_doctor(int argc, char** argv);
int cmd_run(int argc, char** argv);    // cmd_run.cpp: the preflight, then exec
int cmd_check(int argc, char** argv);  // cmd_run.cpp: the preflight alone
int cmd_gpu_check(int argc, char** argv);  // cmd_gpu_check.cpp: GPU/RDMA stages on this node
int cmd_epilog_drain(int argc, char** argv);  // cmd_epilog_drain.cpp: the Epilog's drains of the check's bad nodes
int cmd_node_check(int argc, char** argv);  // cmd_node_check.cpp: this node's health, SLURM's HealthCheckProgram
int cmd_postmortem_snapshot(int argc, char** argv);  // cmd_postmortem_collect.cpp: the Prolog's snapshot of the RDMA ports, links, HCAs and GPUs
int cmd_postmortem_collect(int argc, char** argv);  // cmd_postmortem_collect.cpp: the Epilog's record of a job's stop
int cmd_fleet(int argc, char** argv);  // cmd_fleet.cpp: the fleet memory (ingest, show)
int cmd_fleet_metrics(int argc, char** argv);  // cmd_fleet_metrics.cpp: `fleet metrics`, OpenMetrics text
int cmd_fleet_serve(int argc, char** argv);    // cmd_fleet_metrics.cpp: `fleet serve`, /metrics over HTTP
int cmd_postmortem(int argc, char** argv);       // cmd_postmortem.cpp: `gangway postmortem`'s subcommands
int cmd_postmortem_job(int argc, char** argv);   // cmd_postmortem_deliver.cpp: `postmortem [JOBID]`, the line and timeline
int cmd_postmortem_send(int argc, char** argv);  // cmd_postmortem_deliver.cpp: `postmortem send`, a record to fleet serve
int cmd_postmortem_resend(int argc, char** argv);  // cmd_postmortem_deliver.cpp: `postmortem resend`, the node's outbox again
int cmd_status(int argc, char** argv);      // cmd_watch.cpp: `gangway status`, the running job's pace, straggler, hang
int cmd_watch_node(int argc, char** argv);  // cmd_watch.cpp: the node agent the plugin starts
// The fleet store `gangway fleet` reads and writes unless --db names another.
inline constexpr const char* kFleetDefaultDb = "/var/lib/gangway/fleet.db";

// The value of option `name` at argv[i]: "--name=VALUE", or "--name VALUE" (i then moves past
// VALUE); nullopt when argv[i] is another word.
inline std::optional<std::string> option_value(int argc, char** argv, int& i, const char* name) {
    const std::string a = argv[i], p = std::string(name) + "=";
    if (a.rfind(p, 0) == 0) return a.substr(p.size());
    if (a == name && i + 1 < argc) return std::string(argv[++i]);
    return std::nullopt;
}

// cmd_doctor.cpp: one line for `gangway --version` when the running SLURM's
// major.minor differs from the one gangway was built for, else empty.
std::string version_mismatch_warning();

}  // namespace gangway::cli
