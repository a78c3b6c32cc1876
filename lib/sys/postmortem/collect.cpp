#include "collect.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "../../base/error.hpp"
#include "../../base/text.hpp"
#include "../../postmortem/kernel_signs.hpp"
#include "../../postmortem/link_signs.hpp"
#include "../../postmortem/gpu_signs.hpp"
#include "../../postmortem/port_signs.hpp"
#include "../../postmortem/rank_dump.hpp"
#include "../fd.hpp"
#include "../health/kmsg.hpp"
#include "../health/node_facts.hpp"
#include "../node/file.hpp"
#include "../node/ib_ports.hpp"
#include "../stages/nvml_stage.hpp"
#include "../stages/stage.hpp"
#include "links.hpp"

namespace gangway::sys::postmortem {
namespace pm = gangway::postmortem;
namespace {

std::int64_t clock_ns(clockid_t c) {
    struct timespec t{};
    ::clock_gettime(c, &t);
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// The names in a directory (an open descriptor) that start with `prefix`,
// at most `max` of them, sorted; `more` says whether there were others.
std::vector<std::string> names_with(int dirfd, std::string_view prefix, std::size_t max, bool& more) {
    std::vector<std::string> out;
    more = false;
    const int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return out;
    DIR* d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        return out;
    }
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name = e->d_name;
        if (!name.starts_with(prefix)) continue;
        if (out.size() >= max) {
            more = true;
            break;
        }
        out.emplace_back(name);
    }
    ::closedir(d);
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

void read_tasks(int jobfd, const CollectInput& in, Collected& c) {
    bool more = false;
    const auto names = names_with(jobfd, "task.", pm::kMaxTasks, more);
    if (more) c.notes.push_back("more than " + std::to_string(pm::kMaxTasks) + " task lines: the first ones only");
    ReadOptions o(pm::kMaxTaskLine);
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
            auto t = pm::parse_task_end(trim_right(r.text));
            // The directory is this node's and the job's: the line may not say otherwise.
            if (t.job != in.job) {
                c.notes.push_back(name + " is job " + std::to_string(t.job) + "'s, not " + std::to_string(in.job) + "'s: passed over");
                continue;
            }
            t.node = in.node;
            c.record.tasks.push_back(std::move(t));
        } catch (const Error& e) {
            c.notes.push_back(name + ": " + e.what());
        }
    }
}

void read_dumps(int jobfd, const CollectInput& in, Collected& c) {
    Fd probe(::openat(jobfd, "user", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!probe) return;  // no step asked for dumps, or none was made
    struct stat st{};
    if (::fstat(probe.get(), &st) != 0) return;
    const uid_t owner = in.job_uid.value_or(st.st_uid);
    auto user = open_dir(jobfd, "user", owner, "the job's dump directory");
    if (!user) {
        c.notes.push_back(user.error());
        return;
    }
    bool more = false;
    const auto names = names_with(user->get(), "rank.", pm::kMaxDumps, more);
    if (more) c.notes.push_back("more than " + std::to_string(pm::kMaxDumps) + " rank dumps: the first ones only");
    ReadOptions o(pm::kMaxRankDumpBytes);
    o.follow_links = false;
    o.owner = owner;
    std::size_t seqs = 0;
    for (const auto& name : names) {
        if (!name.ends_with(".json")) continue;
        const auto r = read_file_at(user->get(), name, o);
        if (!r.ok()) {
            c.notes.push_back(describe("user/" + name, r, o));
            continue;
        }
        try {
            auto groups = pm::parse_rank_dump(r.text);
            for (const auto& d : groups) seqs += d.entered.size() + d.completed.size();
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
            c.notes.push_back("user/" + printable_name(name) + ": " + e.what());
        } catch (const std::exception& e) {
            c.notes.push_back("user/" + printable_name(name) + ": " + e.what());
        }
    }
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
    auto add = [&](std::vector<pm::Evidence> signs) {
        for (auto& e : signs) {
            if (c.record.evidence.size() >= pm::kMaxEvidence) break;
            c.record.evidence.push_back(std::move(e));
        }
    };
    if (const auto links = read_links(); !links) c.notes.push_back(links.error() + ": the links not compared");
    else add(pm::link_signs(start ? &*start : nullptr, *links, now, c.record.evidence));
    if (start) add(pm::device_signs(*start, present_hcas(in.sysfs_root), present_gpus(in.sysfs_root), now));
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
        for (auto& e : pm::port_signs(start, read_ports(in.sysfs_root, ib_devices(in.sysfs_root)), in.site, now)) {
            if (c.record.evidence.size() >= pm::kMaxEvidence) break;
            c.record.evidence.push_back(std::move(e));
        }
    } catch (const Error& e) {
        c.notes.push_back(std::string("ports.start: ") + e.what() + ": the ports not compared");
    }
}

// NVML's memory signs (gpu_signs.hpp), only after a task here ended
// abnormally: NVML's first call can take seconds on a GPU node, and a
// healthy job's Epilog should not pay it. Bounded as the node check's NVML
// part is (run_bounded: a hang leaves its thread behind, the Epilog goes on).
void read_gpu_signs(const CollectInput& in, Collected& c, std::int64_t now) {
    const bool abnormal = std::any_of(c.record.tasks.begin(), c.record.tasks.end(), [](const pm::TaskEnd& t) { return t.wait_status != 0; });
    if (!abnormal || in.nvml_s <= 0) return;
    auto b = run_bounded<health::NvmlFacts>("nvml", in.nvml_s, [] { return read_nvml(); });
    if (!b.value) {
        c.notes.push_back("NVML: " + b.aborted.detail);
        return;
    }
    if (!b.value->loaded) return;  // no NVIDIA driver here: nothing to say
    for (auto& e : pm::gpu_signs(*b.value, now)) {
        if (c.record.evidence.size() >= pm::kMaxEvidence) break;
        c.record.evidence.push_back(std::move(e));
    }
}

}  // namespace

Result<Collected> collect_node_record(const CollectInput& in) {
    Collected c;
    c.record.node = in.node;
    c.record.job = in.job;
    c.record.job_nodes = in.job_nodes;
    const std::string jobdir = in.dir + "/" + std::to_string(in.job);
    Fd base(::open(in.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!base) return Failure{"cannot open the post-mortem directory " + in.dir + ": " + std::strerror(errno)};
    auto job = open_dir(base.get(), std::to_string(in.job), 0, jobdir);
    if (!job) return Failure{job.error()};
    read_tasks(job->get(), in, c);
    read_dumps(job->get(), in, c);

    // The window: from the job's first step here (a little before, for the
    // kernel's lines that precede a death) to now.
    const std::int64_t now = clock_ns(CLOCK_REALTIME), boot = now - clock_ns(CLOCK_MONOTONIC);
    std::int64_t start = birth_ns(job->get()).value_or(0);
    // A requeued job's earlier run on this node left its node.json: this
    // run's window starts after it, so that its signs are not taken again.
    if (struct stat prev{}; start != 0 && ::fstatat(job->get(), "node.json", &prev, AT_SYMLINK_NOFOLLOW) == 0 && prev.st_uid == 0)
        start = std::max<std::int64_t>(start, static_cast<std::int64_t>(prev.st_mtim.tv_sec) * 1000000000 + prev.st_mtim.tv_nsec);
    if (start == 0) {
        start = now;
        for (const auto& t : c.record.tasks) start = std::min(start, t.t_ns);
        start -= std::int64_t(600) * 1000000000;  // no birth time: ten minutes before the first end
    }
    start -= std::int64_t(5) * 1000000000;
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
        std::vector<unsigned> others;
        c.record.evidence = pm::kernel_signs(*log, w, &others);
        if (!others.empty())
            c.notes.push_back(std::to_string(others.size()) + " Xid record(s) in the job's window that a program can cause (" +
                              join(others, ",", [](unsigned x) { return std::to_string(x); }) +
                              "; not in node-check.conf's xids=): not taken as this node's fault");
    }
    read_link_signs(job->get(), in, c, now);
    read_port_signs(job->get(), in, c, now);
    read_gpu_signs(in, c, now);
    return c;
}

Result<void> keep_port_snapshot(const CollectInput& in) {
    const auto ports = read_ports(in.sysfs_root, ib_devices(in.sysfs_root));
    const auto links = read_links();
    const auto start = pm::node_start(links ? *links : std::vector<pm::LinkFacts>{}, present_hcas(in.sysfs_root),
                                      present_gpus(in.sysfs_root));
    if (ports.empty() && start.empty()) return {};  // nothing here to compare at the end
    // The directories as the plugin makes them (spank/task_exit.cpp): root's,
    // DIR 0700 and DIR/JOB 0711 (the job's owner reaches its dump directory).
    const std::string jobdir = in.dir + "/" + std::to_string(in.job);
    for (const auto& [path, mode] : {std::pair{in.dir, 0700}, std::pair{jobdir, 0711}}) {
        if (::mkdir(path.c_str(), static_cast<mode_t>(mode)) == 0) {
            if (::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0)
                return Failure{"cannot set the mode of " + path + ": " + std::strerror(errno)};
            continue;
        }
        struct stat st{};
        if (errno != EEXIST || ::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0)
            return Failure{path + " is not a directory of root's: check the Prolog's and the plugin's postmortem_dir="};
    }
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
    if (auto w = write_file_atomic(jobdir, "node.json", pm::to_json(r) + "\n", 0600, "the node's post-mortem record"); !w)
        return w;
    Fd job(::open(jobdir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!job) return {};
    bool more = false;
    for (const auto& name : names_with(job.get(), "task.", pm::kMaxTasks, more)) ::unlinkat(job.get(), name.c_str(), 0);
    if (Fd user(::openat(job.get(), "user", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)); user) {
        for (const auto& name : names_with(user.get(), "", pm::kMaxDumps + 16, more))
            if (name != "." && name != "..") ::unlinkat(user.get(), name.c_str(), 0);
        ::unlinkat(job.get(), "user", AT_REMOVEDIR);
    }
    return {};
}

}  // namespace gangway::sys::postmortem
