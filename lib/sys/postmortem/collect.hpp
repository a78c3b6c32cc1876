// The node's side of the post-mortem (issue 33, docs/postmortem.md): what
// the Epilog's `gangway postmortem collect` reads, as root, into one
// NodeRecord: the job's task lines (slurmstepd's, root-owned files in the
// job's directory under postmortem_dir=), the kernel log's signs of the job's
// window (lib/postmortem/kernel_signs), and the rank dumps the job's
// processes left in the job's user directory (the user's: never a node).
// Every read is bounded: a file's size, the number of files, the log.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../../health/site_conf.hpp"
#include "../../base/result.hpp"
#include "../../postmortem/record.hpp"

namespace gangway::sys::postmortem {

struct CollectInput {
    std::string dir;                     // the node's postmortem directory (%n expanded)
    std::uint32_t job = 0;
    std::string node;                    // this node's SLURM name (the Epilog's SLURMD_NODENAME)
    std::vector<std::string> job_nodes;  // the job's nodes (SLURM_JOB_NODELIST, expanded)
    std::optional<uid_t> job_uid;        // SLURM_JOB_UID: the dumps' owner; unset: the user directory's
    std::string kmsg_root;               // "" : /dev/kmsg; else ROOT/dev/kmsg, a file of records (tests)
    std::string sysfs_root = "/";        // the RDMA ports' sysfs (sys::sysfs_root(): a copy in tests)
    double nvml_s = 10;                  // NVML's deadline (after an abnormal task end only); 0: not read
    // node-check.conf: its xids= (a GPU's faults) and the ports' counter allowances.
    gangway::health::SiteConf site = [] {
        gangway::health::SiteConf c;
        c.xids = gangway::health::kDefaultXids;
        return c;
    }();
};

struct Collected {
    gangway::postmortem::NodeRecord record;
    std::vector<std::string> notes;  // what was passed over, one line each
};

// The record; a Failure only where the job's directory cannot be read as
// root's (missing: no step of the job ran with postmortem_dir= here).
Result<Collected> collect_node_record(const CollectInput& in);

// The Prolog's part: the RDMA ports' error counters and states at the job's
// start, DIR/JOB/ports.start, and the addressed links' carrier states and
// counters with the RDMA devices and GPUs present, DIR/JOB/node.start (root,
// 0600; DIR/JOB made root's, 0711, as the plugin makes it), for
// collect_node_record to compare at the job's end. A Failure where the links
// could not be read still keeps the rest.
Result<void> keep_port_snapshot(const CollectInput& in);

// The Prolog's other part: the kernel log's last record number at the job's
// start, DIR/JOB/kmsg.start (root, 0600: "seq N"), so that collect_node_record
// counts exactly the records a flood made the log lose during the job.
Result<void> keep_kmsg_mark(const CollectInput& in);

// node.json in the job's directory (root, 0600), and the task lines and the
// user's dumps removed: the record holds them now.
Result<void> keep_node_record(const CollectInput& in, const gangway::postmortem::NodeRecord& r);

}  // namespace gangway::sys::postmortem
