// The collector's handling of what users can write (issues 40 and 41): the
// rank dumps' share of a node's record (root's evidence first, the record
// always within serve's limit), other jobs' kernel lines left out, the kernel
// log's lost records said, and root's directory tree walked and removed
// without following a link.
#include "catch_compat.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../../lib/postmortem/collect_rules.hpp"
#include "../../lib/postmortem/dump_share.hpp"
#include "../../lib/postmortem/kernel_signs.hpp"
#include "../../lib/postmortem/record.hpp"
#include "../../lib/sys/node/dirs.hpp"
#include "../../lib/sys/postmortem/stops_auth.hpp"
#include "temp_dir.hpp"

using namespace gangway;
using namespace gangway::postmortem;
using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

NodeRecord node_with_tasks(std::uint32_t first_rank, std::uint32_t n) {
    NodeRecord r;
    r.node = "n1";
    r.job = 7;
    r.job_nodes = {"n1", "n2"};
    for (std::uint32_t i = 0; i < n; ++i) {
        TaskEnd t;
        t.t_ns = 1'700'000'000'000'000'000 + i;
        t.node = "n1", t.job = 7, t.rank = first_rank + i, t.local_rank = i, t.pid = 1000 + std::int32_t(i);
        t.wait_status = 9;
        r.tasks.push_back(t);
    }
    Evidence x;
    x.t_ns = 1'700'000'000'000'000'000, x.sign = Sign::gpu_xid, x.device = "0000:17:00.0", x.code = 79;
    x.text = "NVRM: Xid (PCI:0000:17:00): 79, GPU has fallen off the bus.";
    r.evidence.push_back(x);
    return r;
}

RankDump dump(std::uint32_t rank, std::size_t seqs, std::string exception = {}) {
    RankDump d;
    d.rank = rank;
    for (std::size_t i = 0; i < seqs; ++i) d.entered.push_back(100000 + i), d.completed.push_back(100000 + i);
    d.exception = std::move(exception);
    return d;
}

}  // namespace

TEST_CASE("fit_dumps: only the ranks root's task lines place on the node", "[postmortem][collect]") {
    auto r = node_with_tasks(8, 2);  // ranks 8 and 9 ran here
    r.dumps = {dump(8, 5), dump(3, 5), dump(9, 5), dump(4000, 5)};
    const auto c = fit_dumps(r, sys::postmortem::kMaxStopBody);
    REQUIRE(r.dumps.size() == 2);
    CHECK(r.dumps[0].rank == 8);
    CHECK(r.dumps[1].rank == 9);
    CHECK(c.foreign == 2);
    CHECK(c.trimmed == 0);
    CHECK(r.dumps[0].entered.size() == 5);  // within the limit: nothing cut
    CHECK_THAT(describe(c, sys::postmortem::kMaxStopBody), ContainsSubstring("2 naming a rank that ran no task here left out"));
}

TEST_CASE("fit_dumps: 300 dumps of 4,000 characters and an Xid fit serve's limit, the Xid whole", "[postmortem][collect]") {
    // Finding 4: 300 such dumps made a 1.25 MB record that serve refused, and the Xid with it.
    auto r = node_with_tasks(0, 300);
    for (std::uint32_t i = 0; i < 300; ++i) r.dumps.push_back(dump(i, 300, std::string(2000, 'E')));
    REQUIRE(to_json(r).size() > sys::postmortem::kMaxStopBody);  // the old collector sent this whole
    const auto c = fit_dumps(r, sys::postmortem::kMaxStopBody);
    const auto json = to_json(r);
    CHECK(json.size() <= sys::postmortem::kMaxStopBody - kNotesReserve);
    REQUIRE(r.evidence.size() == 1);
    CHECK(r.evidence[0].code == 79);
    CHECK(r.tasks.size() == 300);
    CHECK(c.dropped == 0);  // each cut to its newest collectives instead
    CHECK(c.trimmed == 300);
    CHECK(r.dumps.size() == 300);
    CHECK(parse_node_record(json).evidence.size() == 1);
}

TEST_CASE("fit_dumps: 32 gloo ranks with full Flight Recorder buffers keep every dump, cut to their newest", "[postmortem][collect]") {
    auto r = node_with_tasks(64, 32);
    for (std::uint32_t i = 0; i < 32; ++i) r.dumps.push_back(dump(64 + i, 4000));
    r.dumps[5].entered.push_back(200000);  // rank 69 entered one more collective than the others
    const auto c = fit_dumps(r, sys::postmortem::kMaxStopBody);
    CHECK(to_json(r).size() <= sys::postmortem::kMaxStopBody - kNotesReserve);
    REQUIRE(r.dumps.size() == 32);
    CHECK(c.dropped == 0);
    CHECK(c.trimmed == 32);
    CHECK(c.kept >= 1000);  // each keeps at least its newest thousand collectives
    for (const auto& d : r.dumps) {
        CHECK(d.completed.back() == 100000 + 3999);  // the newest kept
        CHECK(d.entered.size() <= c.kept);
    }
    CHECK(r.dumps[5].entered.back() == 200000);
    CHECK_THAT(describe(c, sys::postmortem::kMaxStopBody), ContainsSubstring("32 cut to their newest"));
}

TEST_CASE("fit_dumps: when even the newest few do not fit, dumps without an exception go first, highest rank first", "[postmortem][collect]") {
    auto r = node_with_tasks(0, 600);
    const std::size_t limit = to_json(r).size() + kNotesReserve + 50'000;  // room for about a third of them
    for (std::uint32_t i = 0; i < 600; ++i) r.dumps.push_back(dump(i, 100, i == 599 ? "ValueError: boom" : ""));
    for (auto& d : r.dumps) d.group = std::string(60, 'g');
    const auto c = fit_dumps(r, limit);
    CHECK(to_json(r).size() <= limit - kNotesReserve);
    REQUIRE(r.dumps.size() > 10);
    CHECK(r.dumps.size() < 600);
    CHECK(r.dumps.front().rank == 599);  // the one with an exception is kept
    CHECK(c.dropped == 600 - r.dumps.size());
    CHECK(c.kept == kMinSeqsKept);
    CHECK(r.dumps.back().rank == r.dumps.size() - 2);  // the lowest ranks kept, the highest went first
    CHECK_THAT(describe(c, limit), ContainsSubstring("left out whole"));
}

TEST_CASE("fit_dumps: root's part alone over the limit keeps no dump and still cuts nothing of root's", "[postmortem][collect]") {
    auto r = node_with_tasks(0, 4);
    r.dumps = {dump(0, 10)};
    const auto c = fit_dumps(r, 100);
    CHECK(r.dumps.empty());
    CHECK(c.dropped == 1);
    CHECK(r.tasks.size() == 4);
    CHECK(r.evidence.size() == 1);
}

TEST_CASE("node record: the collector's notes round-trip, and a record without them is read", "[postmortem][collect]") {
    auto r = node_with_tasks(0, 1);
    r.notes = {"the kernel log lost 12 record(s) in the job's window (numbers 5 to 16)"};
    const auto back = parse_node_record(to_json(r));
    REQUIRE(back.notes.size() == 1);
    CHECK(back.notes[0] == r.notes[0]);
    std::string old = to_json(node_with_tasks(0, 1));
    const auto at = old.find(",\"notes\":[]");
    REQUIRE(at != std::string::npos);
    old.erase(at, 11);
    CHECK(parse_node_record(old).notes.empty());
    r.notes.assign(kMaxNotes + 1, "x");
    CHECK_THROWS_WITH(parse_node_record(to_json(r)), ContainsSubstring("more than 8 notes"));
}

namespace {
std::string rec(unsigned prio, unsigned long seq, unsigned long usec, const std::string& msg) {
    return std::to_string(prio) + "," + std::to_string(seq) + "," + std::to_string(usec) + ",-;" + msg + "\n";
}
}  // namespace

TEST_CASE("kernel_signs: on a shared node, only the job's OOM kills and hung tasks", "[postmortem][collect]") {
    std::string log;
    // Another user's job's process, then a child of one of this job's tasks (its cgroup, its owner's uid),
    // then this job's task itself, then a process of another job of this job's owner.
    log += rec(4, 1, 2000000,
               "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/slurm/uid_2000/job_9,"
               "task_memcg=/slurm/uid_2000/job_9/step_0/task_0,task=python3,pid=5555,uid=2000");
    log += rec(3, 2, 2000001, "Memory cgroup out of memory: Killed process 5555 (python3) total-vm:1kB, UID:2000");
    log += rec(4, 3, 3000000,
               "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/system.slice/slurmstepd.scope/job_7,"
               "task_memcg=/system.slice/slurmstepd.scope/job_7/step_0/user/task_1,task=pt_data_worker,pid=6001,uid=1000");
    log += rec(3, 4, 4000000, "Out of memory: Killed process 1001 (python3) total-vm:1kB, UID:1000");
    log += rec(4, 5, 4500000,
               "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/slurm/uid_1000/job_8,"
               "task_memcg=/slurm/uid_1000/job_8/step_0/task_0,task=python3,pid=7001,uid=1000");
    // A process named to forge this job's cgroup: the name comes after task_memcg= and is 15 bytes at most.
    log += rec(4, 6, 4600000,
               "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/slurm/uid_2000/job_9,"
               "task_memcg=/slurm/uid_2000/job_9/step_0,task=/job_7/x,pid=5556,uid=2000");
    log += rec(3, 7, 5000000, "INFO: task python3:4242 blocked for more than 120 seconds.");
    log += rec(3, 8, 5000001, "INFO: task python3:1000 blocked for more than 120 seconds.");
    KmsgWindow w;
    w.boot_ns = 0;
    const auto all = kernel_signs(log, w);
    CHECK(all.size() == 7);  // without the job: every line, as before
    w.job = 7;
    w.job_pids = {1000, 1001};
    w.job_uid = 1000;
    const auto ev = kernel_signs(log, w);
    REQUIRE(ev.size() == 3);
    CHECK(ev[0].sign == Sign::oom_kill);
    CHECK(ev[0].pid == 6001);  // a task's child, by its cgroup and uid
    CHECK(ev[1].pid == 1001);  // a task, by its pid
    CHECK(ev[2].sign == Sign::hung_task);
    CHECK(ev[2].pid == 1000);
    // Without the owner's uid, the cgroup rule is not used: only the tasks' pids.
    w.job_uid.reset();
    CHECK(kernel_signs(log, w).size() == 2);
}

TEST_CASE("kmsg_lost_in_window: the kernel log's lost records in the job's window are said", "[postmortem][collect]") {
    KmsgWindow w;
    w.from_usec = 10'000'000;
    std::string log;
    log += rec(6, 100, 5'000'000, "before the job");
    log += rec(6, 101, 11'000'000, "in the job");
    log += rec(6, 1301, 12'000'000, "after a flood overtook the reader");
    auto l = kmsg_lost_in_window(log, w);
    CHECK(l.records == 1199);
    CHECK(l.first == 102);
    CHECK(l.last == 1300);
    CHECK_FALSE(l.before_oldest);
    CHECK_THAT(describe(l, w), ContainsSubstring("the kernel log lost 1199 record(s) in the job window (numbers 102 to 1300)"));
    // A flood during the job wrapped the buffer: the oldest record left is in the window.
    std::string wrapped = rec(6, 5000, 13'500'000, "flood") + rec(6, 5001, 13'600'000, "flood");
    l = kmsg_lost_in_window(wrapped, w);
    CHECK(l.before_oldest);
    CHECK(l.oldest_seq == 5000);
    CHECK_THAT(describe(l, w), ContainsSubstring("the records of the window before its oldest left (number 5000, 3.5 s into the window)"));
    CHECK(describe(l, w).find('\'') == std::string::npos);  // the timeline shows it as it is
    CHECK_THAT(describe(l, w), ContainsSubstring("an Xid or OOM kill among them is not judged"));
    // With the Prolog's mark (the last record at the job's start: 60), the node check's rule
    // counts exactly what is missing after it, before the oldest left included.
    l = kmsg_lost_in_window(wrapped, w, 60);
    CHECK(l.records == 4939);
    CHECK(l.first == 61);
    CHECK(l.last == 4999);
    CHECK_FALSE(l.before_oldest);
    CHECK_THAT(describe(l, w), ContainsSubstring("lost 4939 record(s) in the job window (numbers 61 to 4999)"));
    CHECK(describe(kmsg_lost_in_window(rec(6, 61, 11'000'000, "a") + rec(6, 62, 12'000'000, "b"), w, 60), w).empty());
    // Nothing lost: no line. A gap before the window is not the job's.
    CHECK(describe(kmsg_lost_in_window(rec(6, 1, 1000, "a") + rec(6, 50, 2000, "b") + rec(6, 51, 11'000'000, "c"), w), w).empty());
    CHECK(describe(kmsg_lost_in_window(rec(6, 0, 11'000'000, "boot") + rec(6, 1, 12'000'000, "x"), w), w).empty());
}

TEST_CASE("open_root_tree: root's directories only, no link, none a user can write", "[postmortem][collect][dirs]") {
    if (::geteuid() != 0) {
        WARN("not root: the tree cannot be root's; skipped");
        return;
    }
    test::TempDir d;  // under /tmp: sticky, and its entries root's
    const std::string base = (d.path / "pm").string();
    auto made = sys::open_root_tree(base, 0711, true);
    REQUIRE(made);
    struct stat st{};
    REQUIRE(::stat(base.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0711);
    // An earlier plugin's 0700: given others' search bit.
    ::chmod(base.c_str(), 0700);
    REQUIRE(sys::open_root_tree(base, 0711, true));
    REQUIRE(::stat(base.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0711);
    // Refused: a base others may write, one owned by a user, a link, a parent a user may write.
    ::chmod(base.c_str(), 0731);
    auto r = sys::open_root_tree(base, 0711, true);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error(), ContainsSubstring("is writable by group or others"));
    ::chmod(base.c_str(), 0711);
    REQUIRE(::chown(base.c_str(), 4321, 4321) == 0);
    r = sys::open_root_tree(base, 0711, true);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error(), ContainsSubstring("is owned by uid 4321, not root"));
    REQUIRE(::chown(base.c_str(), 0, 0) == 0);
    fs::create_directory_symlink(base, d.path / "link");
    r = sys::open_root_tree((d.path / "link").string(), 0711, true);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error(), ContainsSubstring("symbolic link"));
    fs::create_directory(d.path / "open");
    ::chmod((d.path / "open").c_str(), 0777);  // not sticky: any user could rename root's directories there
    r = sys::open_root_tree((d.path / "open" / "pm").string(), 0711, true);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error(), ContainsSubstring("/open is writable by group or others"));
    CHECK_FALSE(fs::exists(d.path / "open" / "pm"));  // nothing made
    fs::create_directory(d.path / "users");
    REQUIRE(::chown((d.path / "users").c_str(), 4321, 4321) == 0);
    r = sys::open_root_tree((d.path / "users" / "pm").string(), 0711, true);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error(), ContainsSubstring("/users is owned by uid 4321"));
    CHECK_FALSE(sys::open_root_tree(base + "/../pm", 0711, true));
    // make=false: a missing base is no record, never made.
    CHECK_FALSE(sys::open_root_tree((d.path / "none").string(), 0711, false));
    CHECK_FALSE(fs::exists(d.path / "none"));
}

TEST_CASE("make_dir_at: the dump directory is its owner's; an unprivileged uid can write in it", "[postmortem][collect][dirs]") {
    if (::geteuid() != 0) {
        WARN("not root: the directory cannot be given to another uid; skipped");
        return;
    }
    test::TempDir d;
    ::chmod(d.path.c_str(), 0711);  // the site's parent: others may pass through
    auto base = sys::open_root_tree((d.path / "pm").string(), 0711, true);
    REQUIRE(base);
    auto job = sys::make_dir_at(base->get(), "77", 0711, 0, 0, true);
    REQUIRE(job);
    auto user = sys::make_dir_at(job->get(), "user", 0700, 65534, 65534, false);
    REQUIRE(user);
    struct stat st{};
    REQUIRE(::fstat(user->get(), &st) == 0);
    CHECK(st.st_uid == 65534);
    CHECK((st.st_mode & 07777) == 0700);
    // nobody (65534) walks /tmp, DIR (0711), DIR/77 (0711) and writes its dump.
    const std::string file = (d.path / "pm" / "77" / "user" / "rank.0.json").string();
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
        const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
        ::_exit(fd >= 0 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    // Again, for the step after: there, owned by the uid.
    CHECK(sys::make_dir_at(job->get(), "user", 0700, 65534, 65534, false));
    CHECK_FALSE(sys::make_dir_at(job->get(), "user", 0700, 1000, 1000, false));
    CHECK_FALSE(sys::make_dir_at(job->get(), "user", 0711, 0, 0, true));
}

TEST_CASE("remove_tree_at: the user's directory whole, no link followed, within bounds", "[postmortem][collect][dirs]") {
    test::TempDir d;
    const auto u = d.path / "user";
    fs::create_directories(u / "a" / "b" / "c");
    for (int i = 0; i < 1000; ++i) std::ofstream(u / ("f" + std::to_string(i)));  // 5,000: tests/postmortem_cli.sh
    std::ofstream(u / "a" / "b" / "c" / "deep");
    fs::create_directory(d.path / "outside");
    std::ofstream(d.path / "outside" / "keep");
    fs::create_directory_symlink(d.path / "outside", u / "to-outside");
    fs::create_symlink(d.path / "outside" / "keep", u / "a" / "to-keep");
    const int at = ::open(d.path.c_str(), O_RDONLY | O_DIRECTORY);
    REQUIRE(at >= 0);
    // Bounded: 100 entries, then it stops.
    auto part = sys::remove_tree_at(at, "user", {100, 32, 2});
    CHECK_FALSE(part.whole);
    CHECK(part.entries == 100);
    auto all = sys::remove_tree_at(at, "user");
    CHECK(all.whole);
    CHECK_FALSE(fs::exists(u));
    CHECK(fs::exists(d.path / "outside" / "keep"));  // the links went, not what they named
    // Deeper than the bound: left.
    fs::path p = d.path / "deep";
    for (int i = 0; i < 5; ++i) p /= "x";
    fs::create_directories(p);
    CHECK_FALSE(sys::remove_tree_at(at, "deep", {1000, 3, 2}).whole);
    CHECK(sys::remove_tree_at(at, "deep").whole);
    ::close(at);
}

TEST_CASE("collect rules: the window, a change's time, NVML only after an abnormal end, the evidence cap") {
    namespace pm = gangway::postmortem;
    const std::int64_t s = 1000000000, now = 10000 * s;
    std::vector<pm::TaskEnd> tasks(2);
    tasks[0].t_ns = 9000 * s, tasks[1].t_ns = 8000 * s;
    // The directory's birth, 5 s earlier; after an earlier run's record (a requeued job).
    CHECK(pm::window_start(7000 * s, std::nullopt, tasks, now) == 6995 * s);
    CHECK(pm::window_start(7000 * s, 7500 * s, tasks, now) == 7495 * s);
    CHECK(pm::window_start(7000 * s, 6000 * s, tasks, now) == 6995 * s);
    // No birth time: ten minutes before the first end (the earlier record is not read then).
    CHECK(pm::window_start(std::nullopt, 7500 * s, tasks, now) == 8000 * s - 600 * s - 5 * s);
    CHECK(pm::window_start(std::nullopt, std::nullopt, {}, now) == now - 605 * s);
    // A snapshot's change: at the node's first task end; now without a snapshot or a task end.
    CHECK(pm::change_time(true, tasks, now) == 8000 * s);
    CHECK(pm::change_time(false, tasks, now) == now);
    CHECK(pm::change_time(true, {}, now) == now);
    CHECK(!pm::wants_gpu_signs(tasks));
    tasks[1].wait_status = 9;  // SIGKILL
    CHECK(pm::wants_gpu_signs(tasks));
    pm::NodeRecord r;
    r.evidence.resize(pm::kMaxEvidence - 1);
    pm::add_evidence(r, std::vector<pm::Evidence>(3));
    CHECK(r.evidence.size() == pm::kMaxEvidence);
}
