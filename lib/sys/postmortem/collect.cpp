#include "collect.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "../../postmortem/collect_rules.hpp"
#include "../../postmortem/kernel_signs.hpp"
#include "../../postmortem/link_signs.hpp"
#include "../../postmortem/gpu_signs.hpp"
#include "../../postmortem/port_signs.hpp"
#include "../../postmortem/dump_share.hpp"
#include "../../postmortem/rank_dump.hpp"
#include "../node/fd.hpp"
#include "../../health/xid.hpp"
#include "../health/kmsg.hpp"
#include "../health/node_facts.hpp"
#include "../node/dirs.hpp"
#include "../node/file.hpp"
#include "../devices/ib_ports.hpp"
#include "../health/nvml_stage.hpp"
#include "../run/deadline.hpp"  // run_bounded: the NVML read
#include "stops_auth.hpp"
#include "links.hpp"

namespace gangway::sys::postmortem {
namespace pm = gangway::postmortem;
namespace {

// Where what a collect could not remove within its bounds waits (root's, 0700).
constexpr const char* kTrash = ".trash";

// The names in a directory (an open descriptor) that start with `prefix`,
// at most `max` of them, sorted; `more` says whether there were others.
std::vector<std::string> names_with(int dirfd, std::string_view prefix, std::size_t max, bool& more) {
    std::vector<std::string> out;
    more = false;
    for_each_name(dirfd, SIZE_MAX, [&](std::string_view name) {
        if (!name.starts_with(prefix)) return true;
        if (out.size() >= max) return !(more = true);
        out.emplace_back(name);
        return true;
    });
    std::sort(out.begin(), out.end());
    return out;
}

// The directory, opened without following a link, when it is a directory of
// `owner` that no one else may write.
Result<Fd> open_dir(int at, const std::string& name, uid_t owner, const std::string& shown) {
    Fd fd(::openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return Failure{"cannot open " + shown + ": " + std::strerror(errno)};
    struct stat st{};
    if (::fstat(fd.get(), &st) != 0) return Failure{"cannot stat " + shown + ": " + std::strerror(errno)};
    if (st.st_uid != owner || (st.st_mode & (S_IWGRP | S_IWOTH)))
        return Failure{shown + " is not a directory of uid " + std::to_string(owner) + " closed to others' writes"};
    return fd;
}

// When the job's directory was made (its first step's start on this node):
// its birth time, which nobody can set; nullopt where the file system keeps none.
std::optional<std::int64_t> birth_ns(int dirfd) {
    struct statx sx{};
    if (::statx(dirfd, "", AT_EMPTY_PATH, STATX_BTIME, &sx) != 0 || !(sx.stx_mask & STATX_BTIME)) return std::nullopt;
    return static_cast<std::int64_t>(sx.stx_btime.tv_sec) * 1000000000 + sx.stx_btime.tv_nsec;
}

// Root's files of the job's directory, by name, `max_bytes` each (root's,
// one name, no link): each one's text to `take`; what cannot be read, or
// what `take` refuses (gangway::Error), is a note.
template <class Take>
void read_root_files(int jobfd, const CollectInput& in, Collected& c, const std::vector<std::string>& names,
                     std::size_t max_bytes, Take&& take) {
    ReadOptions o(max_bytes);
    o.follow_links = false;
    o.owner = 0;
    o.written_by_owner_only = true;
    for (const auto& name : names) {
        const auto r = read_file_at(jobfd, name, o);
        if (!r.ok()) {
            c.notes.push_back(describe(in.dir + "/" + std::to_string(in.job) + "/" + name, r, o));
            continue;
        }
        try {
            take(name, r.text);
        } catch (const Error& e) {
            c.notes.push_back(name + ": " + e.what());
        }
    }
}

void read_tasks(int jobfd, const CollectInput& in, Collected& c) {
    bool more = false;
    const auto names = names_with(jobfd, "task.", pm::kMaxTasks, more);
    if (more) c.notes.push_back("more than " + std::to_string(pm::kMaxTasks) + " task lines: the first ones only");
    read_root_files(jobfd, in, c, names, pm::kMaxTaskLine, [&](const std::string& name, const std::string& text) {
        auto t = pm::parse_task_end(trim_right(text));
        // The directory is this node's and the job's: the line may not say otherwise.
        if (t.job != in.job) {
            c.notes.push_back(name + " is job " + std::to_string(t.job) + "'s, not " + std::to_string(in.job) + "'s: passed over");
            return;
        }
        t.node = in.node;
        c.record.tasks.push_back(std::move(t));
    });
}

constexpr std::size_t kMaxSampleFiles = 65'536;  // listed, and removed at the end; 64 read

// slurmstepd's samples of the tasks while they ran (samples.<step>, root's,
// task_samples.hpp): every step's rows, the newest kKeptSampleRows of them
// (about 200 KB of the record's 1 MiB; the rest is the dumps' share).
constexpr std::size_t kKeptSampleRows = 4096;
void read_samples(int jobfd, const CollectInput& in, Collected& c) {
    std::vector<pm::TaskSample> rows;
    std::vector<pm::PressureSample> pressure;
    // The newest steps' (a batch script may run thousands of steps; the
    // failure is usually among the last): by step number, at most 64 files.
    bool more = false;
    auto names = names_with(jobfd, "samples.", kMaxSampleFiles, more);
    auto step_of = [](const std::string& n) { return parse_uint<std::uint32_t>(std::string_view(n).substr(8)).value_or(0); };
    std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) { return step_of(a) > step_of(b); });
    if (names.size() > 64) {
        c.notes.push_back("task samples of " + std::to_string(names.size()) + (more ? " and more" : "") + " steps: the newest 64 steps' only");
        names.resize(64);
    }
    read_root_files(jobfd, in, c, names, 2u << 20, [&](const std::string&, const std::string& text) {
        auto one = pm::parse_samples(text);
        rows.insert(rows.end(), one.rows.begin(), one.rows.end());
        pressure.insert(pressure.end(), one.pressure.begin(), one.pressure.end());
    });
    // The newest `keep` rows of a list (by their time); whether any was cut.
    auto newest = [](auto& v, std::size_t keep) {
        if (v.size() <= keep) return false;
        std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.t_ns < b.t_ns; });
        v.erase(v.begin(), v.end() - std::ptrdiff_t(keep));
        return true;
    };
    const std::size_t all = rows.size();
    if (newest(rows, kKeptSampleRows))
        c.notes.push_back("task samples: the newest " + std::to_string(kKeptSampleRows) + " of " + std::to_string(all) +
                          " kept (the record's share of them)");
    newest(pressure, pm::kMaxPressureRows);
    c.record.samples = std::move(rows);
    c.record.pressure = std::move(pressure);
}

// The dumps of the ranks root's task lines place here, by name
// (rank.RANK.json, as the torch hook writes them): the directory is never
// listed, so however many names the user put there, only these are read.
// Then fitted to the record's limit (dump_share.hpp).
void read_dumps(int jobfd, const CollectInput& in, Collected& c) {
    Fd probe(::openat(jobfd, "user", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!probe) return;  // no step asked for dumps, or none was made
    struct stat st{};
    if (::fstat(probe.get(), &st) != 0) return;
    const uid_t owner = in.job_uid.value_or(st.st_uid);
    if (st.st_uid != owner) {
        c.notes.push_back("the job's dump directory is not a directory of uid " + std::to_string(owner) + ": its dumps passed over");
        return;
    }
    std::vector<std::uint32_t> ranks;
    for (const auto& t : c.record.tasks) ranks.push_back(t.rank);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    ReadOptions o(pm::kMaxRankDumpBytes);
    o.follow_links = false;
    o.owner = owner;
    std::size_t seqs = 0;
    for (const auto rank : ranks) {
        const std::string name = "rank." + std::to_string(rank) + ".json";
        const auto r = read_file_at(probe.get(), name, o);
        if (!r.ok()) {
            if (r.err != ENOENT) c.notes.push_back(describe("user/" + name, r, o));
            continue;
        }
        try {
            auto groups = pm::parse_rank_dump(r.text);
            for (const auto& d : groups) seqs += d.entered.size() + d.completed.size() + 4 * d.timed.size();  // as parse_node_record counts
            if (seqs > pm::kMaxSeqsTotal) {
                c.notes.push_back("the rank dumps hold more than " + std::to_string(pm::kMaxSeqsTotal) + " sequence numbers: the rest passed over");
                break;
            }
            if (c.record.dumps.size() + groups.size() > pm::kMaxDumps) {
                c.notes.push_back("more than " + std::to_string(pm::kMaxDumps) + " rank dumps (one per rank and process group): the rest passed over");
                break;
            }
            for (auto& d : groups) c.record.dumps.push_back(std::move(d));
        } catch (const Error& e) {
            c.notes.push_back("user/" + name + ": " + e.what());
        } catch (const std::exception& e) {
            c.notes.push_back("user/" + name + ": " + e.what());
        }
    }
}

// The Prolog's mark (keep_kmsg_mark): the log's last record number at the
// job's start; none (no Prolog, an earlier one): nullopt.
std::optional<std::uint64_t> kmsg_mark(int jobfd, Collected& c) {
    ReadOptions o(64);
    o.follow_links = false;
    o.owner = 0;
    const auto r = read_file_at(jobfd, "kmsg.start", o);
    if (!r.ok()) {
        if (r.err != ENOENT) c.notes.push_back(describe("kmsg.start", r, o) + ": the kernel log's loss counted without it");
        return std::nullopt;
    }
    const std::string_view t = trim_right(r.text);
    const auto seq = t.starts_with("seq ") ? parse_uint<std::uint64_t>(t.substr(4)) : std::nullopt;
    if (!seq) c.notes.push_back("kmsg.start is not \"seq N\": the kernel log's loss counted without it");
    return seq;
}

// A line for the record itself (the timeline shows it), and for the Epilog's log.
void note_in_record(Collected& c, std::string line) {
    if (line.empty()) return;
    c.notes.push_back(line);
    if (c.record.notes.size() < pm::kMaxNotes) c.record.notes.push_back(printable_name(line, pm::kMaxNoteText));
}

// The links, RDMA devices and GPUs against the Prolog's snapshot
// (link_signs.hpp): root's node.start. Without it (no Prolog, or a broken
// one: a note) the links are judged by their state at the end alone. After
// the kernel log's signs: a link its line names keeps that line's time.
void read_link_signs(int jobfd, const CollectInput& in, Collected& c, std::int64_t now) {
    std::optional<pm::NodeStart> start;
    ReadOptions o(std::size_t(256) << 10);
    o.follow_links = false;
    o.owner = 0;
    if (const auto r = read_file_at(jobfd, "node.start", o); r.ok()) {
        try {
            start = pm::parse_node_start(r.text);
        } catch (const Error& e) {
            c.notes.push_back(std::string("node.start: ") + e.what() + ": the links judged by their state at the end alone");
        }
    } else if (r.err != ENOENT) {
        c.notes.push_back(describe("node.start", r, o) + ": the links judged by their state at the end alone");
    }
    // A link that flapped mid-job stands beside the failure it caused, not after it (change_time).
    const std::int64_t during = pm::change_time(start.has_value(), c.record.tasks, now);
    if (const auto links = read_links(); !links) c.notes.push_back(links.error() + ": the links not compared");
    else pm::add_evidence(c.record, pm::link_signs(start ? &*start : nullptr, *links, during, c.record.evidence));
    if (start) pm::add_evidence(c.record, pm::device_signs(*start, present_hcas(in.sysfs_root), present_gpus(in.sysfs_root), during));
}

// The RDMA ports against the Prolog's snapshot (port_signs.hpp): counters
// grown past node-check.conf's allowances, a port that went down. Root's
// snapshot only; none (no Prolog, or a node without RDMA ports): nothing.
void read_port_signs(int jobfd, const CollectInput& in, Collected& c, std::int64_t now) {
    ReadOptions o(std::size_t(256) << 10);
    o.follow_links = false;
    o.owner = 0;
    const auto r = read_file_at(jobfd, "ports.start", o);
    if (!r.ok()) {
        if (r.err != ENOENT) c.notes.push_back(describe("ports.start", r, o) + ": the ports not compared");
        return;
    }
    try {
        const auto start = pm::parse_port_snapshot(r.text);
        pm::add_evidence(c.record, pm::port_signs(start, read_ports(in.sysfs_root, ib_devices(in.sysfs_root)), in.site, now));
    } catch (const Error& e) {
        c.notes.push_back(std::string("ports.start: ") + e.what() + ": the ports not compared");
    }
}

// NVML's memory signs (gpu_signs.hpp), when wants_gpu_signs says. Bounded as
// the node check's NVML part is (run_bounded: a hang leaves its thread
// behind, the Epilog goes on).
void read_gpu_signs(const CollectInput& in, Collected& c, std::int64_t now) {
    if (!pm::wants_gpu_signs(c.record.tasks) || in.nvml_s <= 0) return;
    auto b = run_bounded<health::NvmlFacts>("nvml", in.nvml_s, [] { return read_nvml(); });
    if (!b.value) {
        c.notes.push_back("NVML: " + b.aborted.detail);
        return;
    }
    if (!b.value->loaded) return;  // no NVIDIA driver here: nothing to say
    pm::add_evidence(c.record, pm::gpu_signs(*b.value, now));
}

}  // namespace

Result<Collected> collect_node_record(const CollectInput& in) {
    Collected c;
    c.record.node = in.node;
    c.record.job = in.job;
    c.record.job_nodes = in.job_nodes;
    const std::string jobdir = in.dir + "/" + std::to_string(in.job);
    // Root's tree, walked from "/" (dirs.hpp): nothing a user can move.
    auto base = open_root_tree(in.dir, 0, false);
    if (!base) return Failure{"the post-mortem directory: " + base.error()};
    auto job = open_dir(base->get(), std::to_string(in.job), 0, jobdir);
    if (!job) return Failure{job.error()};
    read_tasks(job->get(), in, c);
    read_samples(job->get(), in, c);
    read_dumps(job->get(), in, c);

    // The window: from the job's first step here to now (window_start).
    const std::int64_t now = clock_ns(CLOCK_REALTIME), boot = now - clock_ns(CLOCK_MONOTONIC);
    // A requeued job's earlier run on this node left its node.json (root's).
    std::optional<std::int64_t> earlier;
    if (struct stat prev{}; ::fstatat(job->get(), "node.json", &prev, AT_SYMLINK_NOFOLLOW) == 0 && prev.st_uid == 0)
        earlier = static_cast<std::int64_t>(prev.st_mtim.tv_sec) * 1000000000 + prev.st_mtim.tv_nsec;
    const std::int64_t start = pm::window_start(birth_ns(job->get()), earlier, c.record.tasks, now);
    c.record.window_start_ns = start;
    c.record.window_end_ns = now;
    const auto log = read_kmsg(in.kmsg_root, std::size_t(16) << 20);
    if (!log) {
        c.notes.push_back(log.error() + ": no kernel-log evidence");
    } else {
        pm::KmsgWindow w;
        w.boot_ns = boot;
        w.from_usec = start > boot ? static_cast<std::uint64_t>((start - boot) / 1000) : 0;
        w.to_usec = static_cast<std::uint64_t>((now - boot) / 1000);
        w.fatal_xids = in.site.xids;
        // Other jobs' OOM kills and hung tasks on a shared node are not this job's.
        w.job = in.job;
        for (const auto& t : c.record.tasks)
            if (t.pid > 0) w.job_pids.push_back(t.pid);
        if (in.job_uid) w.job_uid = static_cast<std::uint32_t>(*in.job_uid);
        std::vector<unsigned> others;
        c.record.evidence = pm::kernel_signs(*log, w, &others);
        note_in_record(c, pm::describe(pm::kmsg_lost_in_window(*log, w, kmsg_mark(job->get(), c)), w));
        if (!others.empty())
            c.notes.push_back(std::to_string(others.size()) + " Xid record(s) in the job's window that a program can cause (" +
                              join(others, ",", [](unsigned x) { return std::to_string(x); }) +
                              "; not in node-check.conf's xids=): not taken as this node's fault");
    }
    read_link_signs(job->get(), in, c, now);
    read_port_signs(job->get(), in, c, now);
    read_gpu_signs(in, c, now);
    // The user's dumps last, in what root's part leaves of serve's limit.
    note_in_record(c, pm::describe(pm::fit_dumps(c.record, kMaxStopBody), kMaxStopBody));
    return c;
}

// DIR/JOB as the plugin makes them (spank/task_exit.cpp): DIR root's 0711
// under directories no user can write, DIR/JOB root's 0711 (the job's owner
// reaches its dump directory); made, or taken only as such.
Result<void> make_job_dir(const CollectInput& in) {
    auto base = open_root_tree(in.dir, 0711, true);
    if (!base) return Failure{"the post-mortem directory: " + base.error() + ": check the Prolog's and the plugin's postmortem_dir="};
    if (auto job = make_dir_at(base->get(), std::to_string(in.job), 0711, 0, 0, true); !job)
        return Failure{in.dir + "/" + job.error() + ": check the Prolog's and the plugin's postmortem_dir="};
    return {};
}

Result<void> keep_kmsg_mark(const CollectInput& in) {
    const auto log = read_kmsg(in.kmsg_root, std::size_t(16) << 20);
    if (!log) return Failure{log.error()};
    const auto seq = health::last_kmsg_seq(*log);
    if (!seq) return {};  // an empty log: nothing to count from
    if (auto made = make_job_dir(in); !made) return made;
    return write_file_atomic(in.dir + "/" + std::to_string(in.job), "kmsg.start", "seq " + std::to_string(*seq) + "\n", 0600,
                             "the kernel log's mark");
}

Result<void> keep_port_snapshot(const CollectInput& in) {
    const auto ports = read_ports(in.sysfs_root, ib_devices(in.sysfs_root));
    const auto links = read_links();
    const auto start = pm::node_start(links ? *links : std::vector<pm::LinkFacts>{}, present_hcas(in.sysfs_root),
                                      present_gpus(in.sysfs_root));
    if (ports.empty() && start.empty()) return {};  // nothing here to compare at the end
    if (auto made = make_job_dir(in); !made) return made;
    const std::string jobdir = in.dir + "/" + std::to_string(in.job);
    if (!ports.empty())
        if (auto w = write_file_atomic(jobdir, "ports.start", pm::render_port_snapshot(pm::port_snapshot(ports)), 0600,
                                       "the ports' snapshot");
            !w)
            return w;
    if (auto w = write_file_atomic(jobdir, "node.start", pm::render_node_start(start), 0600, "the links' snapshot"); !w) return w;
    if (!links) return Failure{links.error() + ": the links not kept (the RDMA devices and GPUs are)"};
    return {};
}

Result<void> keep_node_record(const CollectInput& in, const pm::NodeRecord& r) {
    const std::string jobdir = in.dir + "/" + std::to_string(in.job);
    auto base = open_root_tree(in.dir, 0, false);
    if (!base) return Failure{"the post-mortem directory: " + base.error()};
    auto job = open_dir(base->get(), std::to_string(in.job), 0, jobdir);
    if (!job) return Failure{job.error()};
    if (auto w = write_file_atomic(jobdir, "node.json", pm::to_json(r) + "\n", 0600, "the node's post-mortem record"); !w)
        return w;
    bool more = false;
    for (const auto& name : names_with(job->get(), "task.", pm::kMaxTasks, more)) ::unlinkat(job->get(), name.c_str(), 0);
    for (const auto& name : names_with(job->get(), "samples.", kMaxSampleFiles, more)) ::unlinkat(job->get(), name.c_str(), 0);
    // The user's directory, whole: first made root's and closed (no process
    // of the user's can add to it from now on), then removed within bounds,
    // following no link. What a bound leaves goes to DIR/.trash (root's),
    // which each collect goes on emptying within the same bounds.
    RemoveBounds left;
    if (Fd user(::openat(job->get(), "user", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)); user) {
        if (::fchown(user.get(), 0, 0) != 0 || ::fchmod(user.get(), 0700) != 0)
            return Failure{"cannot close " + jobdir + "/user to its owner: " + std::strerror(errno)};
        user.reset();
        const auto gone = remove_tree_at(job->get(), "user", left);
        left.max_entries -= std::min(left.max_entries, gone.entries);
        if (!gone.whole) {
            auto trash = make_dir_at(base->get(), kTrash, 0700, 0, 0, true);
            const std::string aside = std::to_string(in.job) + "." + std::to_string(clock_ns(CLOCK_REALTIME));
            if (!trash || ::renameat(job->get(), "user", trash->get(), aside.c_str()) != 0)
                return Failure{jobdir + "/user: " + std::to_string(gone.entries) +
                               " entries removed, the rest (past the bounds: SECURITY.md) cannot be put aside in " + in.dir + "/" +
                               kTrash + (trash ? std::string(": ") + std::strerror(errno) : ": " + trash.error())};
        }
    }
    // Earlier jobs' leftovers, in name order, within what is left of the entries and 1 s.
    left.max_seconds = 1;
    if (Fd trash(::openat(base->get(), kTrash, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)); trash && left.max_entries > 0) {
        for (const auto& name : names_with(trash.get(), "", 64, more)) {
            if (name == "." || name == "..") continue;
            const auto gone = remove_tree_at(trash.get(), name, left);
            left.max_entries -= std::min(left.max_entries, gone.entries);
            if (!gone.whole || left.max_entries == 0) break;
        }
    }
    return {};
}

}  // namespace gangway::sys::postmortem
