// The Epilog's drains: on the job's first node, as root, the nodes that
// gangway check found bad in the job and asked to drain through request
// files in the drain spool (sys/slurm/drain_spool), drained with scontrol
// under the cap per job. `gangway epilog-drain` runs it for the admins'
// Epilog (contrib/epilog/gangway-drain.sh); every rule it applies is
// lib/slurm/drain_rules'. What a user can and cannot cause with the spool is
// SECURITY.md's "The drain spool".
#pragma once
#include <functional>
#include <string>

#include "scontrol.hpp"

namespace gangway::sys {

// What slurmd gives the Epilog, and the site's settings, as they were set
// ("" unset).
struct EpilogDrainInput {
    std::string dir;           // GANGWAY_DRAIN_DIR (default /var/spool/gangway/drain)
    std::string job, uid;      // SLURM_JOB_ID, SLURM_JOB_UID
    std::string here;          // SLURMD_NODENAME
    std::string nodelist;      // SLURM_NODELIST (22.05 sets only it)
    std::string job_nodelist;  // SLURM_JOB_NODELIST (24.11 and 26.05 set both)
    std::string max;           // GANGWAY_DRAIN_MAX
};

// Never fails and never throws (a failing Epilog would drain the node it
// runs on): each thing done or refused is one line through `log`. The job's
// request files are removed once decided on; those it could not act on for
// want of SLURM's answer (the node list, scontrol) are left for a later run.
// Another user's files named for the job are removed unread first. Returns
// the number of nodes drained.
std::size_t epilog_drain(const EpilogDrainInput& in, const Scontrol& sc, const std::function<void(const std::string&)>& log);

}  // namespace gangway::sys
