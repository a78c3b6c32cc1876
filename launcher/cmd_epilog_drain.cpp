// `gangway epilog-drain`: the admins' Epilog's drains (contrib/epilog/
// gangway-drain.sh calls it), from slurmd's variables and the site's
// GANGWAY_DRAIN_DIR and GANGWAY_DRAIN_MAX. Every rule is lib/slurm's
// (drain_rules), the work lib/sys/slurm/epilog_drain's; this reads the
// environment and says what was done, to stderr and syslog.
#include <syslog.h>

#include <cstdio>
#include <string>

#include "../lib/sys/node/process_env.hpp"
#include "../lib/sys/slurm/epilog_drain.hpp"
#include "commands.hpp"

namespace gangway::cli {

namespace {

const char* kHelp =
    "usage: gangway epilog-drain\n"
    "\n"
    "For slurmd's Epilog, as root (contrib/epilog/gangway-drain.sh): drains the nodes of the ending\n"
    "job that `gangway check` asked to drain in GANGWAY_DRAIN_DIR (default /var/spool/gangway/drain),\n"
    "at most GANGWAY_DRAIN_MAX of them per job (default 2; 0: none), and only on the job's first node.\n"
    "Reads SLURM_JOB_ID, SLURM_JOB_UID, SLURMD_NODENAME and SLURM_NODELIST (or SLURM_JOB_NODELIST),\n"
    "which slurmd sets; GANGWAY_SCONTROL names scontrol. Says what it did on stderr and to syslog\n"
    "(tag gangway-drain). Always exits 0: a failing Epilog would drain the node it runs on.\n";

}  // namespace

int cmd_epilog_drain(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kHelp, stdout);
            return 0;
        }
        std::fprintf(stderr, "gangway epilog-drain: takes no arguments (slurmd's variables say the job); see `gangway epilog-drain --help`\n");
        return 0;
    }
    sys::EpilogDrainInput in;
    in.dir = sys::env_or("GANGWAY_DRAIN_DIR", "/var/spool/gangway/drain");
    in.job = sys::env_or("SLURM_JOB_ID");
    in.uid = sys::env_or("SLURM_JOB_UID");
    in.here = sys::env_or("SLURMD_NODENAME");
    in.nodelist = sys::env_or("SLURM_NODELIST");
    in.job_nodelist = sys::env_or("SLURM_JOB_NODELIST");
    in.max = sys::env_or("GANGWAY_DRAIN_MAX");
    ::openlog("gangway-drain", 0, LOG_USER);
    sys::epilog_drain(in, sys::scontrol_client(10), [](const std::string& line) {
        std::fprintf(stderr, "gangway-drain: %s\n", line.c_str());
        ::syslog(LOG_NOTICE, "%s", line.c_str());
    });
    return 0;
}

}  // namespace gangway::cli
