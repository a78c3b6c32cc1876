#include "epilog_drain.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "../../env/hostlist.hpp"
#include "../../slurm/drain_rules.hpp"
#include "../node/fd.hpp"
#include "../node/dirs.hpp"
#include "../node/file.hpp"

namespace gangway::sys {

namespace {

// A name from the environment or the spool, in a log line.
std::string shown(std::string_view s) { return printable_name(s, 300); }

// SLURM_JOB_ID as slurmd gives it: digits (and '_').
bool job_id(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || c == '_'; });
}

// The spool's names for the job: another user's removed unread, the job
// user's kept (at most kMaxRequestNames + 1: one more says "too many").
struct JobNames {
    std::vector<std::string> own;
    std::size_t strangers = 0;
};

// Every name the walk may see: the spool is every user's, and one user's
// millions of names must not hold the Epilog.
inline constexpr std::size_t kMaxSpoolNames = 1u << 20;

JobNames job_names(int dirfd, const std::string& job, uid_t uid) {
    JobNames out;
    const std::string prefix = slurm::request_prefix(job);
    for_each_name(dirfd, kMaxSpoolNames, [&](std::string_view name) {
        if (!name.starts_with(prefix)) return true;
        struct stat st {};
        if (::fstatat(dirfd, name.data(), &st, AT_SYMLINK_NOFOLLOW) != 0) return true;
        if (st.st_uid != uid) {
            if (::unlinkat(dirfd, name.data(), 0) == 0) ++out.strangers;
        } else if (out.own.size() <= slurm::kMaxRequestNames) {
            out.own.emplace_back(name);
        }
        return true;
    });
    // The directory's order is the file system's: decide in the names' order.
    std::sort(out.own.begin(), out.own.end());
    return out;
}

// Every name of the job's still in the spool (the user's, any beyond those
// read included).
void remove_job_names(int dirfd, const std::string& job) {
    const std::string prefix = slurm::request_prefix(job);
    std::vector<std::string> names;
    for_each_name(dirfd, kMaxSpoolNames, [&](std::string_view name) {
        if (name.starts_with(prefix)) names.emplace_back(name);
        return true;
    });
    for (const auto& n : names) ::unlinkat(dirfd, n.c_str(), 0);
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
    return s;
}

}  // namespace

std::size_t epilog_drain(const EpilogDrainInput& in, const Scontrol& sc, const std::function<void(const std::string&)>& log) {
    const std::string& job = in.job;
    // slurmd sets both; anything else is not an Epilog of a job: nothing to say.
    if (!job_id(job) || in.dir.empty()) return 0;
    const auto uid_n = parse_uint<std::uint32_t>(in.uid);
    if (!uid_n) return 0;
    const uid_t uid = *uid_n;
    const Fd dir(::open(in.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return 0;  // no spool on this node: the site drains nothing this way

    std::size_t max = slurm::kDefaultDrainMax;
    if (!in.max.empty()) {
        if (const auto m = parse_uint<std::size_t>(in.max)) max = *m;
        else log("GANGWAY_DRAIN_MAX is not a number; using " + std::to_string(max));
    }

    const JobNames names = job_names(dir.get(), job, uid);
    if (names.strangers > 0)
        log("job " + job + ": removed " + std::to_string(names.strangers) + " drain request file(s) not owned by the job's user (uid " +
            in.uid + ") from " + shown(in.dir) + " unread; only the job's user can ask for its drains");
    if (names.own.empty()) return 0;
    const std::string left = "; requests left in " + shown(in.dir);

    // Which node decides: the job's first. Both names come from slurmd; nothing
    // of the job's environment reaches an Epilog. Where both lists are set
    // they must agree.
    std::string list = in.nodelist;
    if (!in.job_nodelist.empty() && in.job_nodelist != list) {
        if (!list.empty()) {
            log("job " + job + ": draining none: SLURM_JOB_NODELIST (" + shown(in.job_nodelist) + ") and SLURM_NODELIST (" +
                shown(list) + ") name different nodes, so the job's first node is unknown" + left);
            return 0;
        }
        list = in.job_nodelist;
    }
    if (in.here.empty() || list.empty()) {
        std::string unset = in.here.empty() ? "SLURMD_NODENAME" : "";
        if (list.empty()) unset += (unset.empty() ? "" : " and ") + std::string("SLURM_NODELIST (or SLURM_JOB_NODELIST)");
        log("job " + job + ": draining none: " + unset +
            " not set, so this node cannot tell whether it is the job's first node (slurmd sets them for the Epilog: run this as "
            "slurmd's Epilog, or from it)" + left);
        return 0;
    }
    std::vector<std::string> nodes;
    try {
        nodes = expand_hostlist(list);
    } catch (const Error& e) {
        log("job " + job + ": draining none: the job's node list " + shown(list) + " cannot be read (" + e.what() + ")" + left);
        return 0;
    }
    const std::string first = slurm::deciding_node(nodes);
    if (first.empty()) {
        log("job " + job + ": draining none: the job's node list " + shown(list) + " names no node" + left);
        return 0;
    }
    if (in.here != first) {
        log("job " + job + ": ignored and removed its drain requests on " + shown(in.here) +
            ": only the Epilog on the job's first node (" + shown(first) +
            ") decides its drains; run gangway check in a step that includes " + shown(first));
        remove_job_names(dir.get(), job);
        return 0;
    }
    if (names.own.size() > slurm::kMaxRequestNames) {
        log("job " + job + ": its user left more than " + std::to_string(slurm::kMaxRequestNames) +
            " drain request files for it; draining none");
        remove_job_names(dir.get(), job);
        return 0;
    }

    struct Drain {
        std::string node, reason, file;
    };
    std::vector<Drain> drains;
    // A regular file of the job's user, no link, never waited on, at most kMaxRequestBytes.
    ReadOptions request_read(slurm::kMaxRequestBytes);
    request_read.follow_links = false;
    request_read.owner = uid;
    for (const auto& name : names.own) {
        const std::string node = slurm::request_node(name, job);
        const std::string path = in.dir + "/" + name;
        if (node.empty() || std::find(nodes.begin(), nodes.end(), node) == nodes.end()) {
            log("ignoring " + shown(path) + ": not a node of job " + job);
            ::unlinkat(dir.get(), name.c_str(), 0);
            continue;
        }
        // Read through the spool's descriptor, as it was listed and is unlinked.
        const auto text = read_file_at(dir.get(), name, request_read);
        if (!text.ok()) {
            log("ignoring request: " + shown(describe(path, text, request_read)));
            ::unlinkat(dir.get(), name.c_str(), 0);
            continue;
        }
        // Two requests for one node count, and drain, once.
        if (std::any_of(drains.begin(), drains.end(), [&](const Drain& d) { return d.node == node; })) {
            ::unlinkat(dir.get(), name.c_str(), 0);
            continue;
        }
        drains.push_back({node, slurm::request_reason(text.text), name});
    }
    if (drains.empty()) return 0;

    const auto too_many = [&](std::size_t count, const std::string& why) {
        log("job " + job + " asked to drain " + std::to_string(count) + " nodes" + why + ", more than GANGWAY_DRAIN_MAX=" +
            std::to_string(max) + "; draining none (many bad nodes at once is a fault of the network or of the job)");
        remove_job_names(dir.get(), job);
        return std::size_t{0};
    };
    if (drains.size() > max) return too_many(drains.size(), "");
    // Nodes drained for this job before (an earlier run of a requeued job)
    // count against the cap.
    const auto show = scontrol_call(sc, {"-o", "show", "node"});
    if (!show) {
        log("job " + job + ": draining none: scontrol -o show node failed, so the nodes already drained for this job are unknown" + left);
        return 0;
    }
    const auto before = slurm::drained_for_job(*show, job);
    std::size_t total = before.size();
    for (const auto& d : drains)
        if (std::find(before.begin(), before.end(), d.node) == before.end()) ++total;
    if (total > max)
        return too_many(total, " (" + std::to_string(before.size()) + " of them drained for it before: " + joined(before) + ")");

    std::size_t drained = 0;
    for (const auto& d : drains) {
        const std::string reason = slurm::job_drain_reason(d.reason.empty() ? "preflight failed" : d.reason, job);
        if (const auto r = drain_node(sc, d.node, reason); !r) {
            log("could not drain " + d.node + " (job " + job + "): " + shown(r.error()) + "; request left in " + shown(in.dir + "/" + d.file));
            continue;
        }
        log("drained " + d.node + ": " + reason.substr(9));
        ::unlinkat(dir.get(), d.file.c_str(), 0);
        ++drained;
    }
    return drained;
}

}  // namespace gangway::sys
