// The post-mortem's node side (issue 33): where slurmstepd reads its step's
// OOM-kill count, the kernel log's signs of a job's stop (what a user can
// write into the log is no sign), the rank dumps of the torch hook, and
// postmortem_dir='s node template.
#include "catch_compat.hpp"

#include <string>

#include "../../lib/base/error.hpp"
#include "../../lib/env/config.hpp"
#include "../../lib/postmortem/kernel_signs.hpp"
#include "../../lib/postmortem/gpu_signs.hpp"
#include "../../lib/postmortem/port_signs.hpp"
#include "../../lib/postmortem/rank_dump.hpp"
#include "../../lib/stepd/step_cgroup.hpp"

using namespace gangway;
using namespace gangway::postmortem;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("step_oom_files: the step's memory cgroup, v1 or v2", "[postmortem]") {
    using F = OomFiles;
    const auto eq = [](const std::optional<F>& a, const F& b) { return a && a->step == b.step && a->task == b.task; };
    // cgroup v1, task/cgroup: slurmstepd in the step's cgroup, or its task's;
    // v1 counts a kill in the victim's own cgroup only: the task's is read too.
    CHECK(eq(step_oom_files("4:memory:/slurm/uid_1000/job_7/step_0\n0::/\n", 1),
             F{"/sys/fs/cgroup/memory/slurm/uid_1000/job_7/step_0/memory.oom_control",
               "/sys/fs/cgroup/memory/slurm/uid_1000/job_7/step_0/task_1/memory.oom_control"}));
    CHECK(eq(step_oom_files("11:cpuset:/x\n4:memory,hugetlb:/slurm/uid_1000/job_7/step_0/task_3\n", 0),
             F{"/sys/fs/cgroup/memory/slurm/uid_1000/job_7/step_0/memory.oom_control",
               "/sys/fs/cgroup/memory/slurm/uid_1000/job_7/step_0/task_0/memory.oom_control"}));
    // cgroup v2: slurmstepd in step_0/slurm; the step's memory.events counts its tasks'.
    CHECK(eq(step_oom_files("0::/system.slice/slurmstepd.scope/job_7/step_0/slurm\n", 2),
             F{"/sys/fs/cgroup/system.slice/slurmstepd.scope/job_7/step_0/memory.events", ""}));
    CHECK(eq(step_oom_files("0::/system.slice/slurmstepd.scope/job_7/step_batch/slurm\n", 0, "/r"),
             F{"/r/system.slice/slurmstepd.scope/job_7/step_batch/memory.events", ""}));
    // No step's cgroup (proctrack/linuxproc): no count, not another cgroup's.
    CHECK_FALSE(step_oom_files("4:memory:/user.slice\n0::/user.slice/session-1.scope\n", 0));
    CHECK_FALSE(step_oom_files("4:memory:/slurm/job_7/step_0/../../x\n", 0));
    CHECK_FALSE(step_oom_files("", 0));
}

TEST_CASE("parse_oom_kill: the count, 0 without one", "[postmortem]") {
    CHECK(parse_oom_kill("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n") == 3);
    CHECK(parse_oom_kill("low 0\nhigh 0\nmax 2\noom 2\noom_kill 1\noom_group_kill 0\n") == 1);
    CHECK(parse_oom_kill("oom_kill_disable 0\nunder_oom 0\n") == 0);
    CHECK(parse_oom_kill("oom_kill x\n") == 0);
}

namespace {
// A record as /dev/kmsg gives it: PRIO,SEQ,USEC,FLAGS;MESSAGE.
std::string rec(unsigned prio, unsigned seq, unsigned long usec, const std::string& msg) {
    return std::to_string(prio) + "," + std::to_string(seq) + "," + std::to_string(usec) + ",-;" + msg + "\n";
}
}  // namespace

TEST_CASE("kernel_signs: Xid, OOM killer, link down, hung task in the window", "[postmortem]") {
    std::string log;
    log += rec(6, 1, 1000, "Linux version 6.1.0");
    log += rec(3, 2, 2000000, "NVRM: Xid (PCI:0000:17:00): 79, pid=0, name=, GPU has fallen off the bus.");
    log += rec(3, 3, 3000000, "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/x,task_memcg=/x,task=python3,pid=4242,uid=1000");
    log += rec(3, 4, 3000001, "Memory cgroup out of memory: Killed process 4242 (python3) total-vm:1000kB, anon-rss:900kB");
    log += rec(6, 5, 4000000, "mlx5_core 0000:3b:00.0 ens1f0: Link down");
    log += rec(6, 6, 4100000, "e1000e 0000:00:19.0 eth0: NIC Link is Down");
    log += rec(6, 7, 4200000, "ixgbe 0000:05:00.1: eth3: NIC Link is Down");
    log += rec(3, 8, 5000000, "INFO: task python3:4343 blocked for more than 120 seconds.");
    KmsgWindow w;
    w.from_usec = 1500000;
    w.boot_ns = 1000000000;
    const auto e = kernel_signs(log, w);
    REQUIRE(e.size() == 6);
    CHECK(e[0].sign == Sign::gpu_xid);
    CHECK(e[0].device == "0000:17:00.0");
    CHECK(e[0].code == 79);
    CHECK(e[0].t_ns == 1000000000 + 2000000000LL);
    CHECK(e[1].sign == Sign::oom_kill);  // the summary line first, the Killed line the same pid: one sign
    CHECK(e[1].pid == 4242);
    CHECK(e[2].sign == Sign::link_down);
    CHECK(e[2].device == "ens1f0");
    CHECK(e[3].device == "eth0");
    CHECK(e[4].device == "eth3");
    CHECK(e[5].sign == Sign::hung_task);
    CHECK(e[5].pid == 4343);
    CHECK(e[5].code == 120);
    // The window's end leaves later records out.
    w.to_usec = 2500000;
    CHECK(kernel_signs(log, w).size() == 1);
}

TEST_CASE("kernel_signs: a time past 2^63 ns is passed over, never wrapped (found by tests/fuzz/postmortem)", "[postmortem]") {
    std::string log;
    log += rec(3, 1, 18446744073709551ull, "NVRM: Xid (PCI:0000:17:00): 79, pid=0, name=, GPU has fallen off the bus.");
    log += rec(3, 2, 9223372036854775ull, "NVRM: Xid (PCI:0000:17:00): 79, pid=0, name=, GPU has fallen off the bus.");
    log += rec(3, 3, 2000000, "NVRM: Xid (PCI:0000:17:00): 79, pid=0, name=, GPU has fallen off the bus.");
    KmsgWindow w;
    w.boot_ns = 1000000000;
    const auto e = kernel_signs(log, w);
    REQUIRE(e.size() == 1);  // the second one's ns fit, boot_ns added do not
    CHECK(e[0].t_ns == 1000000000 + 2000000000LL);
}

TEST_CASE("kernel_signs: only the site's Xids of a GPU's fault; a program's Xid names no hardware", "[postmortem]") {
    // Xid 13 (an illegal address in a kernel), 31 (an MMU fault), 43 (a kernel
    // stopped): a user's program causes them on a healthy GPU. Before, every
    // Xid was a gpu_xid sign, a node-class cause: the job's own bug would
    // have requeued it without a healthy node and drained that node.
    std::string log;
    log += rec(3, 1, 2000000, "NVRM: Xid (PCI:0000:17:00): 13, pid=4242, name=python3, Graphics Exception");
    log += rec(3, 2, 2100000, "NVRM: Xid (PCI:0000:17:00): 31, pid=4242, name=python3, Ch 00000008, intr 10000000. MMU Fault");
    log += rec(3, 3, 2200000, "NVRM: Xid (PCI:0000:17:00): 43, pid=4242, name=python3, Ch 00000008");
    KmsgWindow w;
    std::vector<unsigned> others;
    CHECK(kernel_signs(log, w, &others).empty());
    CHECK(others == std::vector<unsigned>{13, 31, 43});
    // The default list's 79 is taken; a site that lists 13 has it taken too.
    log += rec(3, 4, 2300000, "NVRM: Xid (PCI:0000:17:00): 79, pid=0, name=, GPU has fallen off the bus.");
    auto e = kernel_signs(log, w);
    REQUIRE(e.size() == 1);
    CHECK(e[0].code == 79);
    w.fatal_xids = {13};
    e = kernel_signs(log, w);
    REQUIRE(e.size() == 1);
    CHECK(e[0].code == 13);
}

TEST_CASE("kernel_signs: what users can write into the log is no sign", "[postmortem]") {
    std::string log;
    // A record written into /dev/kmsg (facility user), a process named like a tag, a mount option quoting one.
    log += rec(11, 1, 10, "Out of memory: Killed process 4242 (python3)");
    log += rec(14, 2, 20, "mlx5_core 0000:3b:00.0 ens1f0: Link down");
    log += rec(6, 3, 30, "python3[999]: segfault at 0 ip 0 sp 0 error 6 in x: Link down");
    log += rec(3, 4, 40, "tmpfs: Unknown parameter 'Out of memory: Killed process 4242 (x)'");
    log += rec(3, 5, 50, "tmpfs: Unknown parameter 'INFO: task x:1 blocked for more than 9 seconds.'");
    log += rec(3, 6, 60, "NVRM: Xid (PCI:[26996]: segfault at 0 ip 0): 79");
    // A process named "oom-kill:,pid=1" still cannot start a kernel record with the tag.
    log += rec(6, 7, 70, "oom-kill:,pid=1[77]: segfault at 0");
    CHECK(kernel_signs(log, KmsgWindow{}).empty());
}

namespace {
gangway::health::PortFacts port(const std::string& hca, int state, std::uint64_t symbol, std::uint64_t downed) {
    gangway::health::PortFacts f;
    f.port.hca = hca;
    f.port.port = 1;
    f.port.state = state;
    f.port.state_name = state == 4 ? "ACTIVE" : "DOWN";
    f.counters = {{"symbol_error", symbol}, {"link_downed", downed}, {"link_error_recovery", 0}};
    return f;
}
}  // namespace

TEST_CASE("port_signs: counters grown past the site's allowance, a port gone down, since the Prolog's snapshot", "[postmortem]") {
    const PortSnapshot start = port_snapshot({port("mlx5_0", 4, 100, 0), port("mlx5_1", 4, 5, 1), port("mlx5_2", 1, 0, 0)});
    CHECK(start.at("mlx5_0/1 active") == 1);
    CHECK(start.at("mlx5_2/1 active") == 0);
    CHECK(start.at("mlx5_1/1 link_downed") == 1);
    // The file's text round-trips.
    CHECK(parse_port_snapshot(render_port_snapshot(start)) == start);
    gangway::health::SiteConf site;  // symbol_error_max 10, link_downed_max 0
    const std::int64_t t = 7'000'000'000;
    // mlx5_0: +9 symbol errors (within 10): nothing. mlx5_1: link_downed +1 and down now.
    // mlx5_2: down at the start too: no sign.
    auto e = port_signs(start, {port("mlx5_0", 4, 109, 0), port("mlx5_1", 1, 5, 2), port("mlx5_2", 1, 0, 0)}, site, t);
    REQUIRE(e.size() == 2);
    CHECK(e[0].sign == Sign::link_down);
    CHECK(e[0].device == "mlx5_1/1");
    CHECK(e[0].t_ns == t);
    CHECK(e[1].sign == Sign::ib_errors);
    CHECK(e[1].device == "mlx5_1/1");
    CHECK(e[1].code == 1);
    CHECK_THAT(e[1].text, ContainsSubstring("link_downed +1 during the job"));
    // +11 symbol errors: past the allowance. A counter that went back (a reset) is no sign.
    e = port_signs(start, {port("mlx5_0", 4, 111, 0), port("mlx5_1", 4, 0, 1)}, site, t);
    REQUIRE(e.size() == 1);
    CHECK(e[0].sign == Sign::ib_errors);
    CHECK(e[0].code == 11);
    // No snapshot: nothing to compare, no sign.
    CHECK(port_signs({}, {port("mlx5_0", 1, 500, 3)}, site, t).empty());
}

TEST_CASE("parse_port_snapshot: anything but KEY VALUE lines is refused, naming the line", "[postmortem]") {
    CHECK(parse_port_snapshot("").empty());
    CHECK_THROWS_WITH(parse_port_snapshot("mlx5_0/1 active 1\nmlx5_0/1 symbol_error x\n"), ContainsSubstring("line 2"));
    CHECK_THROWS_AS(parse_port_snapshot("justone 5\n"), gangway::Error);
    CHECK_THROWS_AS(parse_port_snapshot(" 5\n"), gangway::Error);
    std::string many;
    for (int i = 0; i < 5000; ++i) many += "mlx5_0/1 c" + std::to_string(i) + " 1\n";
    CHECK_THROWS_WITH(parse_port_snapshot(many), ContainsSubstring("more than 4096 lines"));
}

TEST_CASE("gpu_signs: NVML's pending retirement and row remapping, one sign per GPU", "[postmortem]") {
    gangway::health::NvmlFacts n;
    n.loaded = true;
    gangway::health::NvmlGpu ok, pages, rows;
    ok.bus_id = "0000:10:00.0";
    ok.pages_pending = false;
    ok.rows_pending = false;
    pages.bus_id = "0000:11:00.0";
    pages.pages_pending = true;
    pages.pages_retired = 3;
    rows.bus_id = "0000:12:00.0";
    rows.rows_failed = true;
    rows.rows_pending = true;
    n.gpus = {ok, pages, rows};
    const auto e = gpu_signs(n, 5);
    REQUIRE(e.size() == 2);
    CHECK(e[0].sign == Sign::retired_pages);
    CHECK(e[0].device == "0000:11:00.0");
    CHECK(e[0].code == 3);
    CHECK(e[0].t_ns == 5);
    CHECK_THAT(e[0].text, ContainsSubstring("a page retirement waits for a reset (3 pages retired)"));
    CHECK(e[1].device == "0000:12:00.0");
    CHECK_THAT(e[1].text, ContainsSubstring("a row remapping failed"));
    CHECK(gpu_signs(gangway::health::NvmlFacts{}, 5).empty());
}

TEST_CASE("parse_rank_dump: the torch hook's dump, bounded", "[postmortem]") {
    const auto one = parse_rank_dump(
        R"({"kind":"gangway-rank-dump","schema":1,"rank":5,"entered":[1,2,3,4],"completed":[1,2,3],"exception":"ValueError: boom"})");
    REQUIRE(one.size() == 1);
    const auto& d = one[0];
    CHECK(d.group.empty());
    CHECK(d.rank == 5);
    CHECK(d.entered == std::vector<std::uint64_t>{1, 2, 3, 4});
    CHECK(d.completed == std::vector<std::uint64_t>{1, 2, 3});
    CHECK(d.exception == "ValueError: boom");
    CHECK_THROWS_AS(parse_rank_dump(R"({"rank":5})"), Error);
    // A kind of another type is refused in our words (found by tests/fuzz/postmortem: nlohmann's
    // type_error escaped, which aborts the Epilog's collector).
    CHECK_THROWS_AS(parse_rank_dump(R"({"kind":2,"rank":3,"entered":[1]})"), Error);
    CHECK_THROWS_AS(parse_rank_dump(R"({"kind":null,"rank":3})"), Error);
    CHECK_THROWS_AS(parse_rank_dump(R"({"kind":"gangway-rank-dump","rank":-1})"), Error);
    CHECK_THROWS_AS(parse_rank_dump(R"({"kind":"gangway-rank-dump","rank":1,"entered":["x"]})"), Error);
    CHECK_THROWS_AS(parse_rank_dump("not json"), Error);
    std::string many = R"({"kind":"gangway-rank-dump","rank":1,"entered":[)";
    for (std::size_t i = 0; i <= kMaxSeqs; ++i) many += (i ? ",1" : "1");
    CHECK_THROWS_AS(parse_rank_dump(many + "]}"), Error);
    CHECK_THROWS_AS(parse_rank_dump(std::string(kMaxRankDumpBytes + 1, ' ')), Error);
}

TEST_CASE("parse_rank_dump: schema 3, each group's newest collectives timed", "[postmortem]") {
    const auto g = parse_rank_dump(
        R"({"kind":"gangway-rank-dump","schema":3,"rank":3,"groups":{"0":{"entered":[7,8],"completed":[7],)"
        R"("timed":[[7,1795000000100000000,null,1795000000150000000],[8,1795000000200000000,0,0]]},)"
        R"("tp1":{"entered":[40],"completed":[40]}},"exception":""})");
    REQUIRE(g.size() == 2);
    REQUIRE(g[0].timed.size() == 2);
    CHECK(g[0].timed[0].seq == 7);
    CHECK(g[0].timed[0].entered_ns == 1'795'000'000'100'000'000);
    CHECK(g[0].timed[0].started_ns == 0);  // Flight Recorder's null: not recorded
    CHECK(g[0].timed[0].completed_ns == 1'795'000'000'150'000'000);
    CHECK(g[0].timed[1].seq == 8);
    CHECK(g[1].timed.empty());  // a group without times, as schema 2 wrote it
    auto dump = [](const std::string& timed) {
        return R"({"kind":"gangway-rank-dump","schema":3,"rank":3,"groups":{"0":{"entered":[7],"completed":[],"timed":)" + timed + "}}}";
    };
    CHECK_THROWS_AS(parse_rank_dump(dump("7")), Error);
    CHECK_THROWS_AS(parse_rank_dump(dump("[[7]]")), Error);
    CHECK_THROWS_AS(parse_rank_dump(dump("[[7,1,2,3,4]]")), Error);
    CHECK_THROWS_AS(parse_rank_dump(dump("[[7,-1]]")), Error);
    CHECK_THROWS_AS(parse_rank_dump(dump("[[7,\"x\"]]")), Error);
    CHECK_THROWS_AS(parse_rank_dump(dump("[[[7],1]]")), Error);
    std::string many = "[";
    for (std::size_t i = 0; i <= kMaxTimed; ++i) many += (i ? ",[1,1]" : "[1,1]");
    CHECK_THROWS_WITH(parse_rank_dump(dump(many + "]")), ContainsSubstring("more than 32"));
    // 8 groups of 32 timed collectives are taken (the hook times 8), a ninth group's are not.
    std::string rows = "[";
    for (std::size_t i = 0; i < kMaxTimed; ++i) rows += (i ? ",[1,1]" : "[1,1]");
    rows += "]";
    std::string groups;
    for (int g = 0; g < 9; ++g) {
        if (g == 8) CHECK(parse_rank_dump(R"({"kind":"gangway-rank-dump","rank":3,"groups":{)" + groups + "}}").size() == 8);
        groups += (g ? "," : "") + ("\"g" + std::to_string(g) + "\":{\"entered\":[1],\"timed\":" + rows + "}");
    }
    CHECK_THROWS_WITH(parse_rank_dump(R"({"kind":"gangway-rank-dump","rank":3,"groups":{)" + groups + "}}"),
                      ContainsSubstring("more than 256 timed collectives"));
}

TEST_CASE("parse_rank_dump: schema 2, a dump per process group", "[postmortem]") {
    const auto g = parse_rank_dump(
        R"({"kind":"gangway-rank-dump","schema":2,"rank":3,"groups":{"0":{"entered":[7,8],"completed":[7]},)"
        R"("tp1":{"entered":[40],"completed":[40]}},"exception":"RuntimeError: x"})");
    REQUIRE(g.size() == 2);
    CHECK(g[0].group == "0");
    CHECK(g[0].entered == std::vector<std::uint64_t>{7, 8});
    CHECK(g[0].completed == std::vector<std::uint64_t>{7});
    CHECK(g[1].group == "tp1");
    CHECK(g[1].rank == 3);
    CHECK(g[1].exception == "RuntimeError: x");
    // No collective in any group: one dump, for the exception.
    CHECK(parse_rank_dump(R"({"kind":"gangway-rank-dump","schema":2,"rank":1,"groups":{},"exception":"E"})").size() == 1);
    CHECK_THROWS_WITH(parse_rank_dump(R"({"kind":"gangway-rank-dump","rank":1,"groups":[1]})"), ContainsSubstring("not an object"));
    CHECK_THROWS_WITH(parse_rank_dump(R"({"kind":"gangway-rank-dump","rank":1,"groups":{"a\u0001":{}}})"), ContainsSubstring("printable"));
    std::string many = R"({"kind":"gangway-rank-dump","rank":1,"groups":{)";
    for (std::size_t i = 0; i <= kMaxGroups; ++i) many += (i ? ",\"" : "\"") + std::to_string(i) + "\":{}";
    CHECK_THROWS_WITH(parse_rank_dump(many + "}}"), ContainsSubstring("process groups, more than"));
    CHECK_THROWS_AS(parse_rank_dump(R"({"kind":"gangway-rank-dump","rank":1,"groups":{"0":{"entered":[[[1]]]}}})"), Error);
}

TEST_CASE("postmortem_dir=: %n is the node, nothing else is taken", "[postmortem][config]") {
    CHECK(expand_node_dir("/var/tmp/pm/%n", "node08") == "/var/tmp/pm/node08");
    CHECK(expand_node_dir("/var/spool/gangway/postmortem", "node08") == "/var/spool/gangway/postmortem");
    CHECK(expand_node_dir("/a/100%%/%n", "n1") == "/a/100%/n1");
    CHECK_THROWS_AS(expand_node_dir("/a/%h", "n1"), Error);
    CHECK_THROWS_AS(expand_node_dir("/a/%n", "../etc"), Error);
    CHECK_THROWS_AS(expand_node_dir("/a/%n", ".."), Error);
    CHECK_THROWS_AS(expand_node_dir("/a/%n", ""), Error);
    CHECK(parse_site_args({"postmortem_dir=/var/tmp/pm/%n"}).postmortem_dir == "/var/tmp/pm/%n");
    CHECK(parse_site_args({}).postmortem_dir.empty());  // off unless the site turns it on
    CHECK_THROWS_AS(parse_site_args({"postmortem_dir=relative"}), Error);
    CHECK_THROWS_AS(parse_site_args({"postmortem_dir=/a/%x"}), Error);
    CHECK_THROWS_AS(parse_site_args({"postmortem_dir=/a/../etc"}), Error);
}
