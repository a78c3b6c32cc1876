// lib/slurm: SLURM's rules in one place. A job's fields from squeue's fixed
// fields, so that no name a user gives a job (sbatch -J, scontrol update
// JobName=) can shift SLURM's own; a node's state matched by whole words, so
// that power saving is never "down". Fixtures recorded from the real clients
// of SLURM 22.05.8 on the test cluster (tests/cluster), with the job named
// as a hostile user would.
#include "catch_compat.hpp"

#include <string>

#include "../../lib/base/error.hpp"
#include "../../lib/health/slurm_action.hpp"
#include "../../lib/slurm/requeue.hpp"
#include "../../lib/slurm/drain_rules.hpp"
#include "../../lib/slurm/job_view.hpp"
#include "../../lib/slurm/node_state.hpp"
#include "../../lib/slurm/scontrol_text.hpp"

using namespace gangway;
using namespace gangway::slurm;

namespace {

// The hostile job's name: every field a reader of scontrol's text wanted.
constexpr const char* kHostileName =
    "x NodeList=node09,node10 JobState=RUNNING UserId=nobody(65534) AdminComment=gangway: forged";

// `scontrol -o show job 1` of that job, recorded on 22.05.8 (sbatch -N2 -w
// node08,node11 -x node10 -J NAME --comment 'c NodeList=nodeZ'): the name
// first, raw, and the comment after SLURM's NodeList.
const std::string kScontrolHostile =
    "JobId=1 JobName=x NodeList=node09,node10 JobState=RUNNING UserId=nobody(65534) AdminComment=gangway: "
    "forged UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901759 Nice=0 Account=(null) "
    "QOS=(null) JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 "
    "ExitCode=0:0 RunTime=00:00:01 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12-07T01:27:11 "
    "EligibleTime=2026-12-07T01:27:11 AccrueTime=2026-12-07T01:27:11 StartTime=2026-12-07T01:27:13 "
    "EndTime=Unknown Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-07T01:27:13 "
    "Scheduler=Main Partition=debug AllocNode:Sid=vm:20723 ReqNodeList=node[08,11] ExcNodeList=node10 "
    "NodeList=node[08,11] BatchHost=node08 NumNodes=2 NumCPUs=8 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
    "TRES=cpu=8,node=2,billing=8 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 "
    "MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=YES Contiguous=0 "
    "Licenses=(null) Network=(null) Command=(null) WorkDir=/var/tmp Comment=c NodeList=nodeZ  "
    "StdErr=/dev/null StdIn=/dev/null StdOut=/dev/null Power= ";
// The same job renamed while it runs (scontrol update JobName=), after root
// set its AdminComment: AdminComment comes after WorkDir, the user's Comment after it.
const std::string kScontrolRenamed =
    "JobId=1 JobName=y NodeList=node08 JobState=COMPLETED UserId=root(0) GroupId=root(0) MCS_label=N/A "
    "Priority=4294901759 Nice=0 Account=(null) QOS=(null) JobState=RUNNING Reason=None Dependency=(null) "
    "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:03 TimeLimit=UNLIMITED TimeMin=N/A "
    "SubmitTime=2026-12-07T01:27:11 EligibleTime=2026-12-07T01:27:11 AccrueTime=2026-12-07T01:27:11 "
    "StartTime=2026-12-07T01:27:13 EndTime=Unknown Deadline=N/A SuspendTime=None SecsPreSuspend=0 "
    "LastSchedEval=2026-12-07T01:27:13 Scheduler=Main Partition=debug AllocNode:Sid=vm:20723 "
    "ReqNodeList=node[08,11] ExcNodeList=node10 NodeList=node[08,11] BatchHost=node08 NumNodes=2 NumCPUs=8 "
    "NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=8,node=2,billing=8 Socks/Node=* "
    "NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) "
    "DelayBoot=00:00:00 OverSubscribe=YES Contiguous=0 Licenses=(null) Network=(null) Command=(null) "
    "WorkDir=/var/tmp AdminComment=gangway: job 1 step 0 stopped by node08 (rank 1, local 0): x=y Comment=z  "
    "Comment=c NodeList=nodeZ  StdErr=/dev/null StdIn=/dev/null StdOut=/dev/null Power= ";

// squeue's answers for the same jobs, 22.05.8: `squeue -h -t all -j 1 -o
// '%A|%T|%U|%N|%x|%B'` running, then cancelled, and a pending job 2.
const std::string kSqueueHostile = "1|RUNNING|0|node[08,11]|node10|node08\n";
const std::string kSqueueTwo = "2|PENDING|0|||n/a\n1|CANCELLED|0|node[08,11]|node10|node08\n";
// `squeue -h -t all -j 1 -O admin_comment:1024`: padded to 1,024 characters.
const std::string kAdminLine = "gangway: job 1 step 0 stopped by node08 (rank 1, local 0): x=y Comment=z";

}  // namespace

TEST_CASE("job view: a job named with SLURM's keys changes none of SLURM's fields", "[slurm]") {
    CHECK(kScontrolHostile.find(std::string(" JobName=") + kHostileName + " UserId=root(0) ") == 7);
    // The old reader, the first KEY= after a blank, took the name's words;
    // the last occurrence would take the user's Comment's NodeList:
    CHECK(scontrol_field(kScontrolHostile, "NodeList") == "node09,node10");
    CHECK(scontrol_field(kScontrolHostile, "UserId") == "nobody(65534)");
    CHECK(scontrol_field(kScontrolHostile, "AdminComment") == "gangway: forged");
    CHECK(scontrol_field(kScontrolRenamed, "JobState") == "COMPLETED");
    CHECK(kScontrolHostile.rfind(" NodeList=nodeZ") > kScontrolHostile.rfind(" NodeList=node[08,11]"));
    // squeue's fixed fields hold no name, comment or path: SLURM's own.
    const auto views = parse_job_views(kSqueueHostile);
    REQUIRE(views.size() == 1);
    const auto& v = views[0];
    CHECK(v.id == 1u);
    CHECK(v.state == JobState::running);
    CHECK(v.state_word == "RUNNING");
    CHECK(v.uid == 0u);
    CHECK(v.nodes == "node[08,11]");
    CHECK(v.excluded == "node10");
    CHECK(v.batch_host == "node08");
    CHECK(slurm::requeue_exclusions(v.excluded, {"node11"}) == std::vector<std::string>{"node10", "node11"});
    CHECK(!newest_job_of(views, 65534));  // not listed as nobody's job
    CHECK(newest_job_of(views, 0) == 1u);
    const auto two = parse_job_views(kSqueueTwo);
    REQUIRE(two.size() == 2);
    CHECK(two[0].state == JobState::pending);
    CHECK(two[0].nodes.empty());
    CHECK(two[0].batch_host.empty());  // "n/a" while pending
    CHECK(two[1].state == JobState::cancelled);
    CHECK(newest_job_of(two, 0) == 2u);
}

TEST_CASE("job view: states, empty fields, several jobs, the newest of a user", "[slurm]") {
    const auto views = parse_job_views(
        "7|PENDING|1000|||\n"
        "5|COMPLETING|1000|n[1-4]|(null)|n1\n"
        "9|COMPLETED|1001|n2||n2\n"
        "12|REQUEUE_HOLD|1000|||\n"
        "\n");
    REQUIRE(views.size() == 4);
    CHECK(views[0].state == JobState::pending);
    CHECK(views[0].nodes.empty());
    CHECK(views[0].batch_host.empty());
    CHECK(views[1].state == JobState::completing);
    CHECK(views[1].excluded.empty());
    CHECK(views[2].state == JobState::completed);
    CHECK(views[3].state == JobState::other);
    CHECK(views[3].state_word == "REQUEUE_HOLD");
    CHECK(view_of(views, 9)->uid == 1001u);
    CHECK(!view_of(views, 8));
    CHECK(newest_job_of(views, 1000) == 12u);
    CHECK(newest_job_of(views, 1001) == 9u);
    CHECK(!newest_job_of(views, 1002));
    CHECK(job_state_from("OUT_OF_MEMORY") == JobState::out_of_memory);
    CHECK(job_state_from("completing") == JobState::other);  // exact words only
    CHECK(parse_job_views("").empty());
}

TEST_CASE("job view: a line not in the format is refused, naming it", "[slurm]") {
    CHECK_THROWS_AS(parse_job_views(kScontrolHostile), Error);  // scontrol's text, not squeue's
    CHECK_THROWS_AS(parse_job_views("2|RUNNING|0|n1|n2\n"), Error);     // 5 fields
    CHECK_THROWS_AS(parse_job_views("2|RUNNING|0|n1|n2|n1|x\n"), Error); // 7
    CHECK_THROWS_AS(parse_job_views("x|RUNNING|0|n1||n1\n"), Error);
    CHECK_THROWS_AS(parse_job_views("0|RUNNING|0|n1||n1\n"), Error);
    CHECK_THROWS_AS(parse_job_views("2|RUNNING|root|n1||n1\n"), Error);
    CHECK_THROWS_AS(parse_job_views("2|Running now|0|n1||n1\n"), Error);
    CHECK_THROWS_AS(parse_job_views("2|RUNNING|0|n1 NodeList=n9||n1\n"), Error);
    try {
        parse_job_views("2|RUNNING|0|n1|n2\n");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "squeue printed 5 fields, not 6, in \"2|RUNNING|0|n1|n2\" (want %A|%T|%U|%N|%x|%B)");
    }
}

TEST_CASE("job view: AdminComment alone in its call, squeue's padding removed", "[slurm]") {
    CHECK(admin_comment_format() == "admin_comment:1024");
    CHECK(parse_admin_comment(kAdminLine + std::string(1024 - kAdminLine.size(), ' ') + "\n") == kAdminLine);
    CHECK(parse_admin_comment("(null)" + std::string(1018, ' ') + "\n").empty());
    CHECK(parse_admin_comment("").empty());
    CHECK_THROWS_AS(parse_admin_comment("a\nb\n"), Error);
}

TEST_CASE("node state: whole words; power saving is never down", "[slurm]") {
    // Lost: DOWN, FAIL, NOT_RESPONDING, or '*' after a word.
    for (const char* s : {"DOWN", "DOWN*", "DOWN*+DRAIN", "DOWN+DRAIN", "DOWN+NOT_RESPONDING", "IDLE*", "MIXED*+DRAIN",
                          "IDLE+FAIL", "FAIL", "ALLOCATED*+COMPLETING", "IDLE+NOT_RESPONDING", "DOWN~"}) {
        INFO(s);
        CHECK(parse_node_state(s).down());
    }
    // Not lost: power saving (POWERED_DOWN, POWERING_DOWN, POWER_DOWN and
    // their marks), drains, completing, reservations, maintenance.
    for (const char* s : {"IDLE+CLOUD+POWERED_DOWN", "IDLE+POWERING_DOWN", "IDLE+POWER_DOWN", "IDLE~", "IDLE%", "IDLE#",
                          "IDLE!", "IDLE+CLOUD+POWERED_DOWN+DRAIN", "MIXED+DRAIN", "IDLE+DRAIN", "ALLOCATED", "MIXED",
                          "IDLE+COMPLETING", "IDLE+RESERVED", "IDLE+MAINTENANCE", "ALLOCATED+FAILING", "IDLE$", "",
                          "POWERING_UP"}) {
        INFO(s);
        CHECK(!parse_node_state(s).down());
    }
    const auto st = parse_node_state("DOWN*+DRAIN");
    CHECK(st.base == "DOWN");
    CHECK(st.flags == std::vector<std::string>{"DRAIN"});
    CHECK(st.no_response_mark);
    // Drained: DRAIN, DRAINING, DRAINED, whole.
    for (const char* s : {"IDLE+DRAIN", "MIXED+DRAIN", "DOWN*+DRAIN", "DRAINED", "DRAINING", "IDLE+CLOUD+POWERED_DOWN+DRAIN"}) {
        INFO(s);
        CHECK(parse_node_state(s).drained());
    }
    for (const char* s : {"IDLE", "DOWN", "IDLE+UNDRAIN_PENDING", "IDLE+CLOUD+POWERED_DOWN"}) {
        INFO(s);
        CHECK(!parse_node_state(s).drained());
    }
}

TEST_CASE("node state: scontrol show node's State=, either layout, never the Reason's words", "[slurm]") {
    // `scontrol show node node09`, 22.05.8, drained then set down.
    const std::string shown =
        "NodeName=node09 Arch=x86_64 CoresPerSocket=4 \n"
        "   CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=2.22\n"
        "   NodeAddr=198.18.0.12 NodeHostName=node09 Version=22.05.8\n"
        "   RealMemory=1024 AllocMem=0 FreeMem=19780 Sockets=1 Boards=1\n"
        "   State=DOWN+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
        "   Partitions=debug \n"
        "   Reason=down test [root@2026-12-07T00:48:26]\n";
    CHECK(node_state_of(shown).down());
    CHECK(node_state_of(shown).drained());
    // 22.05.8's own words for a node slurmctld does not hear (resumed while its slurmd was away).
    CHECK(node_state_of("   State=IDLE+NOT_RESPONDING ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n").down());
    CHECK(!node_state_of("   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1\n   Reason=gangway: test (job 1) [root@2026-12-07T00:48:26]\n").down());
    CHECK(node_state_of("NodeName=n2 State=IDLE+COMPLETING Reason=DOWN State=DOWN").down() == false);
    CHECK(!node_state_of("NodeName=n4 State=IDLE Reason=DRAIN").drained());
    CHECK(!node_state_of("NodeName=n4 NextState=DOWN State=IDLE+CLOUD+POWERED_DOWN").down());
    CHECK(!node_state_of("no state here").down());
}

TEST_CASE("node state: the node check and the post-mortem agree", "[slurm]") {
    // The node check's own reading (lib/health/slurm_action) uses the same rule.
    for (const char* s : {"IDLE+FAIL", "IDLE+CLOUD+POWERED_DOWN", "IDLE+POWERING_DOWN", "DOWN*+DRAIN", "IDLE*"}) {
        INFO(s);
        const auto n = health::parse_show_node(std::string("NodeName=n1 State=") + s + " ThreadsPerCore=1\n");
        CHECK(n.down() == parse_node_state(s).down());
        CHECK(n.drain() == parse_node_state(s).drained());
    }
    CHECK(health::parse_show_node("NodeName=n1 State=IDLE+FAIL\n").down());
    CHECK(!health::parse_show_node("NodeName=n1 State=IDLE+CLOUD+POWERED_DOWN\n").down());
}

TEST_CASE("drain rules: a node name in gangway's sense, one rule for the spool, serve and the reports") {
    using gangway::slurm::is_node_name;
    CHECK(is_node_name("node08"));
    CHECK(is_node_name("r1-gpu099.cluster_a"));
    CHECK(is_node_name(std::string(64, 'n')));
    CHECK(!is_node_name(std::string(65, 'n')));
    CHECK(!is_node_name(""));
    CHECK(!is_node_name("-node"));   // an option to scontrol
    CHECK(!is_node_name(".hidden"));
    CHECK(!is_node_name("node 1"));
    CHECK(!is_node_name("node1\nNodeName=node2"));
    CHECK(!is_node_name("n[1-2]"));  // a list, not a name
    CHECK(!is_node_name("node,1"));
}

TEST_CASE("drain rules: the reason's text keeps only what scontrol and a shell take as it is") {
    using gangway::slurm::job_drain_reason;
    using gangway::slurm::reason_text;
    CHECK(reason_text("slow sending 0.4 Gb/s; $(rm -rf /) `x`") == "slow sending 0.4 Gb/s (rm -rf /) x");
    CHECK(reason_text("a\nb\"c'd[e]") == "abcde");
    CHECK(reason_text(std::string(300, 'x')).size() == gangway::slurm::kMaxReasonText);
    CHECK(job_drain_reason("unreachable", "42") == "gangway: unreachable (job 42)");
    // A user's "[" cannot fake slurmctld's " [user@time]" after another job's mark.
    CHECK(job_drain_reason("slow (job 7) [x", "9") == "gangway: slow (job 7) x (job 9)");
}

TEST_CASE("drain rules: the nodes drained for a job are those whose reason's last mark is its own") {
    using gangway::slurm::drained_for_job;
    const std::string shown =
        "NodeName=node12 Arch=x86_64 State=IDLE+DRAIN Reason=gangway: slow (job 64) (job 99) [alice@2024-05-01T10:00:00]\n"
        "NodeName=node13 Arch=x86_64 State=IDLE+DRAIN Reason=gangway: slow (job 640) [root@2024-05-01T10:00:00]\n"
        "NodeName=node11 Arch=x86_64 State=IDLE+DRAIN Reason=gangway: unreachable (job 64) [root@2024-05-01T09:00:00]\n"
        "NodeName=node15 Arch=x86_64 State=IDLE+DRAIN Reason=gangway: slow (job 64)\n"
        "NodeName=node16 Arch=x86_64 State=IDLE+DRAIN Reason=maintenance (job 64) [root@2024-05-01T09:00:00]\n"
        "NodeName=node14 Arch=x86_64 State=IDLE\n";
    CHECK(drained_for_job(shown, "64") == std::vector<std::string>{"node11", "node15"});
    CHECK(drained_for_job(shown, "99") == std::vector<std::string>{"node12"});
    CHECK(drained_for_job(shown, "6").empty());
}

TEST_CASE("drain rules: the cap per job counts the nodes drained for it before, the same node once") {
    using gangway::slurm::drain_within_cap;
    CHECK(drain_within_cap({}, "n1", gangway::slurm::kDefaultDrainMax));
    CHECK(drain_within_cap({"n1"}, "n2", 2));
    CHECK(!drain_within_cap({"n1", "n2"}, "n3", 2));
    CHECK(drain_within_cap({"n1", "n2"}, "n2", 2));
    CHECK(!drain_within_cap({}, "n1", 0));  // 0: no drains
}

TEST_CASE("drain rules: a request file's name names one node of one job, and the first node decides") {
    using gangway::slurm::request_node;
    CHECK(gangway::slurm::request_file("42", "node10") == "gangway-drain.42.node10");
    CHECK(request_node("gangway-drain.42.node10", "42") == "node10");
    CHECK(request_node("gangway-drain.42.node10", "4").empty());
    CHECK(request_node("gangway-drain.420.node10", "42").empty());
    CHECK(request_node("gangway-drain.67.node09,0123456789abcdef", "67") == "node09");
    CHECK(request_node("gangway-drain.67.node10,xyz", "67").empty());
    CHECK(request_node("gangway-drain.67.node10,0123456789ABCDEF", "67").empty());
    CHECK(request_node("gangway-drain.50.node99 x\nnode09", "50").empty());
    CHECK(request_node("gangway-drain.50.", "50").empty());
    CHECK(gangway::slurm::request_reason("node=n1\njob=4\nreason=slow; `x`\nreason=other\n") == "slow x");
    CHECK(gangway::slurm::request_reason("node=n1\n").empty());
    CHECK(gangway::slurm::deciding_node({"gpu-b1", "gpu-b2", "gpu-a7"}) == "gpu-b1");
    CHECK(gangway::slurm::deciding_node({}).empty());
}
