// `gangway postmortem collect`: the Epilog's part of the post-mortem (issue
// 33; contrib/slurm/epilog-postmortem.sh runs it as root on each node of a
// job when it ends). Reads the job's task lines, the kernel log of the job's
// window and the rank dumps in the job's directory under the site's
// postmortem_dir= (lib/sys/postmortem/collect), keeps them as node.json
// there, and sends the record to the site's collector (`gangway fleet serve
// --stops-key`) when --to names it.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "../lib/env/config.hpp"
#include "../lib/env/hostlist.hpp"
#include "../lib/sys/health/site_file.hpp"
#include "../lib/sys/node/sysfs.hpp"
#include "../lib/sys/node/addrs.hpp"
#include "../lib/sys/node/process_env.hpp"
#include "../lib/sys/postmortem/collect.hpp"
#include "../lib/sys/postmortem/outbox.hpp"
#include "../lib/sys/postmortem/send.hpp"
#include "commands.hpp"

namespace gangway::cli {
namespace {

const char* kHelp =
    "usage: gangway postmortem collect [--dir=DIR] [--to=URL --key=FILE] [--job=ID] [--node=NAME]\n"
    "                                  [--nodes=HOSTLIST] [--config=FILE] [--kmsg-root=DIR] [--print]\n"
    "\n"
    "The Epilog's part of the post-mortem (contrib/slurm/epilog-postmortem.sh runs it as root on\n"
    "each node of a job when it ends). Reads, from DIR/JOB (DIR: the plugin's postmortem_dir=,\n"
    "%n standing for the host name up to its first dot; default /var/spool/gangway/postmortem),\n"
    "the task lines slurmstepd wrote, the kernel log's signs of the job's window (GPU Xids, the\n"
    "OOM killer, a link down, hung tasks), the links, RDMA devices and GPUs against the Prolog's\n"
    "snapshot (a link that lost carrier during the job, a device gone) and the rank dumps the job's\n"
    "processes left; writes\n"
    "them as one record, DIR/JOB/node.json, and sends it to the site's collector at URL (`gangway\n"
    "fleet serve --stops-key`), signed with the site's key FILE. A record serve does not take (no\n"
    "answer, a timeout, 503 busy) waits in DIR/outbox for `gangway postmortem resend`; once serve\n"
    "answers, the outbox's records follow, within 5 s.\n"
    "  --job, --node, --nodes  default: SLURM_JOB_ID, SLURMD_NODENAME, SLURM_JOB_NODELIST or SLURM_NODELIST (the Epilog's)\n"
    "  --config=FILE           the node check's site file (default /etc/gangway/node-check.conf, if present): its\n"
    "                          xids= are the Xids taken as a GPU's fault; others (13, 31, 43: a program's) name no node;\n"
    "                          symbol_error_max, link_downed_max, link_error_recovery_max: what the RDMA ports'\n"
    "                          counters may grow since the Prolog's `gangway postmortem snapshot`\n"
    "  --kmsg-root=DIR         read DIR/dev/kmsg, a file of kernel-log records (tests), not /dev/kmsg\n"
    "  --print                 print the record (JSON) on stdout\n"
    "Exit 0: kept (and sent, with --to); 1: nothing to collect, not sent, or it failed (one line says why).\n";

const char* kSnapshotHelp =
    "usage: gangway postmortem snapshot [--dir=DIR] [--job=ID] [--kmsg-root=DIR]\n"
    "\n"
    "The Prolog's part of the post-mortem (contrib/slurm/prolog-postmortem.sh runs it as root on each\n"
    "node of a job before it starts): keeps the RDMA ports' error counters and states in DIR/JOB/ports.start,\n"
    "and each configured link's carrier state and counters, the RDMA devices and the GPUs present in\n"
    "DIR/JOB/node.start, which `gangway postmortem collect` compares at the job's end, and the kernel\n"
    "log's last record number in DIR/JOB/kmsg.start, from which collect counts the records a flood made\n"
    "the log lose during the job.\n"
    "  --dir   as collect's (default /var/spool/gangway/postmortem; %n: the host name up to its first dot)\n"
    "  --job   default: SLURM_JOB_ID (the Prolog's)\n"
    "  --kmsg-root=DIR  as collect's (tests)\n"
    "Exit 0: kept (or nothing to keep); 1: it could not be kept, or the links not read (one line says why); 2: usage.\n";


void say(const std::string& line) { std::fprintf(stderr, "gangway postmortem collect: %s\n", line.c_str()); }

}  // namespace

int cmd_postmortem_snapshot(int argc, char** argv) {
    std::string dir = "/var/spool/gangway/postmortem", job_text = sys::env_or("SLURM_JOB_ID"), kmsg_root;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kSnapshotHelp, stdout);
            return 0;
        }
        if (auto v = option_value(argc, argv, i, "--dir")) dir = *v;
        else if (auto v = option_value(argc, argv, i, "--job")) job_text = *v;
        else if (auto v = option_value(argc, argv, i, "--kmsg-root")) kmsg_root = *v;
        else {
            std::fprintf(stderr, "gangway postmortem snapshot: unknown argument \"%s\"; see `gangway postmortem snapshot --help`\n",
                         excerpt(a).c_str());
            return 2;
        }
    }
    const auto job = parse_uint<std::uint32_t>(job_text);
    if (!job) {
        std::fprintf(stderr, "gangway postmortem snapshot: needs the job (--job or SLURM_JOB_ID): run it from the Prolog\n");
        return 2;
    }
    sys::postmortem::CollectInput in;
    try {
        in.dir = expand_node_dir(dir, sys::short_host_name());
    } catch (const Error& e) {
        std::fprintf(stderr, "gangway postmortem snapshot: %s\n", e.what());
        return 2;
    }
    in.job = *job;
    in.sysfs_root = sys::sysfs_root();
    in.kmsg_root = kmsg_root;
    if (auto kept = sys::postmortem::keep_port_snapshot(in); !kept) {
        std::fprintf(stderr, "gangway postmortem snapshot: job %u: %s\n", in.job, kept.error().c_str());
        return 1;
    }
    // The kernel log's mark: the records a flood makes it lose during the job are then counted exactly.
    if (auto kept = sys::postmortem::keep_kmsg_mark(in); !kept) {
        std::fprintf(stderr, "gangway postmortem snapshot: job %u: %s\n", in.job, kept.error().c_str());
        return 1;
    }
    return 0;
}

int cmd_postmortem_collect(int argc, char** argv) {
    std::string dir = "/var/spool/gangway/postmortem", to, key_file, job_text = sys::env_or("SLURM_JOB_ID"),
                node = sys::env_or("SLURMD_NODENAME"), nodes = sys::env_or("SLURM_JOB_NODELIST"), kmsg_root,
                config = "/etc/gangway/node-check.conf";
    bool config_named = false;
    // The Epilog of SLURM 22.05 gets SLURM_NODELIST only.
    if (nodes.empty()) nodes = sys::env_or("SLURM_NODELIST");
    bool print = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kHelp, stdout);
            return 0;
        }
        if (a == "--print") print = true;
        else if (auto v = option_value(argc, argv, i, "--dir")) dir = *v;
        else if (auto v = option_value(argc, argv, i, "--to")) to = *v;
        else if (auto v = option_value(argc, argv, i, "--key")) key_file = *v;
        else if (auto v = option_value(argc, argv, i, "--job")) job_text = *v;
        else if (auto v = option_value(argc, argv, i, "--node")) node = *v;
        else if (auto v = option_value(argc, argv, i, "--nodes")) nodes = *v;
        else if (auto v = option_value(argc, argv, i, "--kmsg-root")) kmsg_root = *v;
        else if (auto v = option_value(argc, argv, i, "--config")) config = *v, config_named = true;
        else {
            std::fprintf(stderr, "gangway postmortem collect: unknown argument \"%s\"; see `gangway postmortem collect --help`\n",
                         excerpt(a).c_str());
            return 2;
        }
    }
    const auto job = parse_uint<std::uint32_t>(job_text);
    if (!job || node.empty()) {
        std::fprintf(stderr, "gangway postmortem collect: needs the job (--job or SLURM_JOB_ID) and the node "
                             "(--node or SLURMD_NODENAME): run it from the Epilog\n");
        return 2;
    }
    if (!to.empty() && key_file.empty()) {
        std::fprintf(stderr, "gangway postmortem collect: --to needs --key=FILE, the site's key the collector checks\n");
        return 2;
    }
    sys::postmortem::CollectInput in;
    try {
        // %n as the plugin expands it in slurmstepd: the host name up to its first dot.
        in.dir = expand_node_dir(dir, sys::short_host_name());
        if (!nodes.empty()) in.job_nodes = expand_hostlist(nodes);
    } catch (const Error& e) {
        std::fprintf(stderr, "gangway postmortem collect: %s\n", e.what());
        return 2;
    }
    in.job = *job;
    in.node = node;
    in.kmsg_root = kmsg_root;
    in.sysfs_root = sys::sysfs_root();
    // The site's Xids, as the node check reads them. A file that cannot be
    // read or parsed costs no evidence: the Epilog keeps the record with the
    // default list and says so in one line.
    const auto site = sys::read_site_file(config, config_named);
    in.site = site.conf;
    if (site.problem == sys::SiteFileProblem::invalid)
        std::fprintf(stderr, "gangway postmortem collect: %s; the default Xids are used: fix %s (node-check.conf(5))\n",
                     site.why.c_str(), config.c_str());
    else if (site.problem == sys::SiteFileProblem::unreadable)
        std::fprintf(stderr, "gangway postmortem collect: %s; the default Xids are used\n", site.why.c_str());
    if (const auto uid = parse_uint<std::uint32_t>(sys::env_or("SLURM_JOB_UID"))) in.job_uid = *uid;
    auto got = sys::postmortem::collect_node_record(in);
    if (!got) {
        std::fprintf(stderr, "gangway postmortem collect: %s\n", got.error().c_str());
        return 1;
    }
    for (const auto& n : got->notes) std::fprintf(stderr, "gangway postmortem collect: job %u: %s\n", in.job, n.c_str());
    if (print) std::printf("%s\n", postmortem::to_json(got->record).c_str());
    int rc = 0;
    if (!to.empty()) rc = sys::postmortem::send_or_keep(in.dir, in.job, in.node, to, key_file, postmortem::to_json(got->record), say) ? 0 : 1;
    if (auto kept = sys::postmortem::keep_node_record(in, got->record); !kept) {
        std::fprintf(stderr, "gangway postmortem collect: %s\n", kept.error().c_str());
        rc = 1;
    }
    return rc;
}

}  // namespace gangway::cli
