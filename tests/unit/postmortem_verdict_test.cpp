// Who stopped the job (issue 33): the verdict from the records of the
// issue's cases, as a 4-node job of 2 ranks a node would leave them (the test
// cluster's shape), the node lost, the hostile inputs (a user's dumps and
// texts name no node), and the scale of 512 ranks on 64 nodes, counted.
#include "catch_compat.hpp"

#include <sys/wait.h>

#include <csignal>
#include <string>
#include <vector>

#include "../../lib/base/error.hpp"
#include "../../lib/postmortem/synth.hpp"
#include "../../lib/postmortem/verdict.hpp"
#include "cost_meter.hpp"

using namespace gangway;
using namespace gangway::postmortem;
using Catch::Matchers::ContainsSubstring;

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t T = 1'795'000'000'000'000'000;  // 2026-11-18 11:06:40 UTC
int exit_status(int code) { return code << 8; }

// n01..n04, ranks 0-7, two a node; every task exits 0 at T + 60 s unless a case says otherwise.
struct Job {
    std::vector<NodeRecord> recs;
    Job(std::uint32_t nodes = 4, std::uint32_t per_node = 2) {
        std::vector<std::string> names;
        for (std::uint32_t n = 0; n < nodes; ++n) names.push_back("n0" + std::to_string(n + 1));
        for (std::uint32_t n = 0; n < nodes; ++n) {
            NodeRecord r;
            r.node = names[n], r.job = 1234, r.job_nodes = names;
            r.window_start_ns = T - 600'000 * kMs, r.window_end_ns = T + 120'000 * kMs;
            for (std::uint32_t l = 0; l < per_node; ++l) {
                TaskEnd t;
                t.node = r.node, t.job = 1234, t.rank = n * per_node + l, t.local_rank = l;
                t.pid = std::int32_t(40'000 + t.rank), t.t_ns = T + 60'000 * kMs;
                r.tasks.push_back(t);
            }
            recs.push_back(std::move(r));
        }
    }
    TaskEnd& task(std::uint32_t rank) {
        for (auto& r : recs)
            for (auto& t : r.tasks)
                if (t.rank == rank) return t;
        throw Error("no rank " + std::to_string(rank));
    }
    NodeRecord& node(const std::string& n) {
        for (auto& r : recs)
            if (r.node == n) return r;
        throw Error("no node " + n);
    }
    // Every rank but those given ends as `ws`, from `from` on, 0.1 s apart.
    void others(int ws, std::int64_t from, std::vector<std::uint32_t> except) {
        std::int64_t at = from;
        for (auto& r : recs)
            for (auto& t : r.tasks)
                if (std::find(except.begin(), except.end(), t.rank) == except.end()) t.wait_status = ws, t.t_ns = at, at += 100 * kMs;
    }
    void dump_all(const std::string& exception, std::uint64_t entered = 0) {
        for (auto& r : recs)
            for (auto& t : r.tasks) {
                RankDump d;
                d.rank = t.rank, d.exception = exception;
                for (std::uint64_t s = 0; s < entered; ++s) d.entered.push_back(s);
                r.dumps.push_back(d);
            }
    }
    Verdict judge(std::vector<std::string> lost = {}) const { return postmortem::judge(recs, lost); }
};

Evidence ev(Sign s, std::int64_t t, std::string device, std::int64_t code, std::int32_t pid, std::string text) {
    return Evidence{t, s, std::move(device), code, pid, std::move(text)};
}

// Every line is one printable line of at most 250 bytes.
void check_line(const std::string& line) {
    INFO(line);
    CHECK(line.size() <= kMaxLine);
    for (char c : line) CHECK((c >= ' ' && c < 0x7f));
    CHECK(line.rfind("gangway: job ", 0) == 0);
}

}  // namespace

TEST_CASE("case 1: one rank SIGKILLed mid-run, the others fail on their peer", "[postmortem][verdict]") {
    Job j;
    j.task(5).wait_status = SIGKILL, j.task(5).t_ns = T;
    j.others(exit_status(1), T + 400 * kMs, {5});
    const Verdict v = j.judge();
    CHECK(v.cause == Cause::fatal_signal);
    CHECK(v.node == "n03");
    CHECK(v.rank == 5u);
    CHECK(v.local_rank == 1u);
    CHECK_FALSE(v.node_class);  // a signal with no node evidence is the job's
    CHECK(v.cascade_ranks == 7);
    CHECK(v.cascade_from_s == Approx(0.4));
    CHECK(v.cascade_to_s == Approx(1.0));
    CHECK(v.cascade_how == "exit 1");
    const std::string line = render_line(v);
    check_line(line);
    CHECK(line ==
          "gangway: job 1234 step 0 stopped by rank 5 on n03 (local 1): killed by SIGKILL at 11:06:40.000 (no node fault); "
          "7 other ranks ended 0.4-1.0 s later (exit 1)");

    SECTION("srun SIGTERMs the others at once: still that rank, no hang") {
        j.others(SIGTERM, T + 200 * kMs, {5});
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::fatal_signal);
        CHECK(w.rank == 5u);
        CHECK(w.cascade_how == "SIGTERM from SLURM");
    }
    SECTION("the cascade mixed") {
        j.task(0).wait_status = SIGTERM;
        j.task(1).wait_status = SIGTERM;
        CHECK(j.judge().cascade_how == "mixed: 5 exit 1, 2 SIGTERM from SLURM");
    }
}

TEST_CASE("case 2: one rank killed by the OOM killer", "[postmortem][verdict]") {
    Job j;
    j.task(5).wait_status = SIGKILL, j.task(5).t_ns = T;
    j.others(exit_status(1), T + 400 * kMs, {5});
    SECTION("the step cgroup counted it") {
        j.task(5).oom_kills = 1;
    }
    SECTION("the kernel's line names the task's pid") {
        j.node("n03").evidence.push_back(
            ev(Sign::oom_kill, T - 3 * kMs, "", 0, 40'005, "Out of memory: Killed process 40005 (python3)"));
    }
    const Verdict v = j.judge();
    CHECK(v.cause == Cause::oom);
    CHECK(v.node == "n03");
    CHECK(v.rank == 5u);
    CHECK_FALSE(v.node_class);  // never requeued by gangway
    check_line(render_line(v));
    CHECK_THAT(render_line(v), ContainsSubstring("stopped by rank 5 on n03 (local 1): killed by the OOM killer at 11:06:40.000 (no node fault)"));
}

TEST_CASE("case 2: an OOM-killer line about another process is not the task's", "[postmortem][verdict]") {
    Job j;
    j.task(5).wait_status = SIGKILL, j.task(5).t_ns = T;
    j.others(exit_status(1), T + 400 * kMs, {5});
    j.node("n03").evidence.push_back(ev(Sign::oom_kill, T - 3 * kMs, "", 0, 777, "Out of memory: Killed process 777 (sh)"));
    CHECK(j.judge().cause == Cause::fatal_signal);
}

TEST_CASE("case 3: one node's data link cut: every rank's gloo fails, the cut node's ranks not first", "[postmortem][verdict]") {
    Job j;
    j.node("n02").evidence.push_back(ev(Sign::link_down, T, "eth1", 0, 0, "e1000e 0000:00:1f.6 eth1: NIC Link is Down"));
    j.others(exit_status(1), T + 5000 * kMs, {});  // rank 0, on n01, ends first
    const Verdict v = j.judge();
    CHECK(v.cause == Cause::link_down);
    CHECK(v.node == "n02");
    CHECK(v.rank == 2u);  // n02's first end
    CHECK(v.node_class);
    CHECK(v.t_ns == T);
    CHECK(v.cascade_ranks == 7);
    CHECK(v.cascade_from_s == Approx(5.0));
    const std::string line = render_line(v);
    check_line(line);
    CHECK(line == "gangway: job 1234 step 0 stopped by n02 (rank 2, local 0): link down on eth1 at 11:06:40.000 (node fault); "
                  "7 other ranks ended 5.0-5.7 s later (exit 1)");
    CHECK(v.ran_on == "n02");
}

TEST_CASE("case 4: Xid 79 in one node's kernel log, that node's ranks killed", "[postmortem][verdict]") {
    Job j;
    j.node("n04").evidence.push_back(
        ev(Sign::gpu_xid, T, "0000:17:00.0", 79, 0, "NVRM: Xid (PCI:0000:17:00): 79, pid=40006, GPU has fallen off the bus."));
    j.others(exit_status(1), T + 300 * kMs, {6, 7});
    j.task(6).wait_status = SIGKILL, j.task(6).t_ns = T + 900 * kMs;
    j.task(7).wait_status = SIGKILL, j.task(7).t_ns = T + 800 * kMs;
    const Verdict v = j.judge();
    CHECK(v.cause == Cause::gpu_xid);
    CHECK(v.node == "n04");
    CHECK(v.rank == 7u);
    CHECK(v.node_class);
    CHECK(v.detail == "GPU Xid 79 on 0000:17:00.0");
    CHECK_THAT(v.evidence_text, ContainsSubstring("fallen off the bus"));
    check_line(render_line(v));
    CHECK_THAT(render_line(v), ContainsSubstring("stopped by n04 (rank 7, local 1): GPU Xid 79 on 0000:17:00.0 at 11:06:40.000"));

    SECTION("the Xid's own rank first: the same") {
        j.task(7).t_ns = T + 100 * kMs;
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::gpu_xid);
        CHECK(w.node == "n04");
    }
    SECTION("an Xid an hour before the failure is not its cause") {
        j.node("n04").evidence[0].t_ns = T - 3'600'000 * kMs;
        CHECK(j.judge().cause == Cause::nonzero_exit);
    }
    SECTION("the Xid outranks an OOM on the same node") {
        j.task(7).oom_kills = 1;
        j.task(7).t_ns = T + 100 * kMs;
        CHECK(j.judge().cause == Cause::gpu_xid);
    }
}

TEST_CASE("case 5: a hang, then scancel: the rank that did not enter the collective", "[postmortem][verdict]") {
    Job j;
    j.others(SIGTERM, T, {});  // SLURM's SIGTERM to all, within 0.7 s
    j.dump_all("", 184);
    for (auto& d : j.node("n02").dumps)
        if (d.rank == 3) d.entered.pop_back();  // rank 3 stopped before collective 183
    const Verdict v = j.judge();
    CHECK(v.cause == Cause::hang);
    CHECK(v.node.empty());
    CHECK_FALSE(v.node_class);
    CHECK(v.hang_ranks == std::vector<std::uint32_t>{3});
    CHECK(v.cascade_ranks == 8);
    const std::string line = render_line(v);
    check_line(line);
    CHECK(line == "gangway: job 1234 step 0 hung until SLURM signalled every rank at 11:06:40.000: rank 3 did not enter "
                  "collective 183, which 7 other ranks entered; 8 ranks ended 0.0-0.7 s later (SIGTERM from SLURM)");

    SECTION("ranks that ignore SIGTERM get SIGKILL after KillWait: still a hang") {
        j.task(4).wait_status = SIGKILL, j.task(4).t_ns = T + 30'000 * kMs;
        CHECK(j.judge().cause == Cause::hang);
    }
    SECTION("no dumps: says so, and how to keep them") {
        for (auto& r : j.recs) r.dumps.clear();
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::hang);
        CHECK(w.hang_ranks.empty());
        CHECK_THAT(render_line(w), ContainsSubstring("no rank evidence was kept"));
        CHECK_THAT(render_line(w), ContainsSubstring("TORCH_FR_BUFFER_SIZE"));
        check_line(render_line(w));
    }
    SECTION("a dump missing: named in the timeline") {
        j.node("n04").dumps.pop_back();
        const Verdict w = j.judge();
        CHECK(w.ranks_without_dump == std::vector<std::uint32_t>{7});
        CHECK_THAT(render_timeline(w, j.recs), ContainsSubstring("no dump from rank 7"));
    }
    SECTION("a node's Xid before it: the node's, not a hang") {
        j.node("n01").evidence.push_back(ev(Sign::gpu_xid, T - 60'000 * kMs, "0000:17:00.0", 79, 0, "NVRM: Xid"));
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::gpu_xid);
        CHECK(w.node == "n01");
        CHECK_FALSE(w.rank.has_value());
        CHECK(w.cascade_ranks == 8);
        CHECK_THAT(render_line(w), ContainsSubstring("8 ranks ended 60.0-60.7 s later"));
    }
    SECTION("one rank SIGTERMed 20 s before the rest is no hang") {
        j.task(2).t_ns = T - 20'000 * kMs;
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::fatal_signal);
        CHECK(w.rank == 2u);
    }
}

TEST_CASE("case 5 with process groups: each group's numbers apart, the stopped rank named, not its group", "[postmortem][verdict]") {
    // Tensor parallel groups tp0 (ranks 0-3) and tp1 (4-7), and the world
    // group "0". Rank 5 stopped between collectives: tp1's other members wait
    // inside tp1's collective 10, which rank 5 never entered; tp0's members went
    // on to the world's collective 20 and wait there, which tp1 never reached.
    // Before, one list per rank mixed the groups' numbers: ranks 4-7 were named.
    Job j;
    j.others(SIGTERM, T, {});
    auto dump = [&](std::uint32_t rank, const std::string& group, std::uint64_t upto, bool last_done) {
        RankDump d;
        d.rank = rank, d.group = group;
        for (std::uint64_t s = 0; s <= upto; ++s) d.entered.push_back(s);
        d.completed = d.entered;
        if (!last_done) d.completed.pop_back();
        for (auto& r : j.recs)
            for (const auto& t : r.tasks)
                if (t.rank == rank) r.dumps.push_back(d);
    };
    for (std::uint32_t r = 0; r < 4; ++r) dump(r, "0", 20, false), dump(r, "tp0", 10, true);
    for (std::uint32_t r = 4; r < 8; ++r) dump(r, "0", 19, true), dump(r, "tp1", r == 5 ? 9 : 10, r == 5);
    const Verdict v = j.judge();
    CHECK(v.cause == Cause::hang);
    CHECK(v.hang_ranks == std::vector<std::uint32_t>{5});
    CHECK(v.records_ignored == 0);
    CHECK_THAT(render_line(v), ContainsSubstring("rank 5 did not enter collective 10 of process group tp1, which 3 other ranks entered"));
    SECTION("a backend that marks no collective completed: the smallest group's laggards, as with one group") {
        for (auto& r : j.recs)
            for (auto& d : r.dumps) d.completed.clear();
        CHECK(j.judge().hang_ranks == std::vector<std::uint32_t>{5});
    }
    SECTION("a second dump of one rank and group is ignored") {
        j.node("n03").dumps.push_back(j.node("n03").dumps.front());
        const Verdict w = j.judge();
        CHECK(w.records_ignored == 1);
        CHECK(w.hang_ranks == std::vector<std::uint32_t>{5});
    }
}

TEST_CASE("case 6: every rank raises the same Python exception: no node is named", "[postmortem][verdict]") {
    Job j;
    j.others(exit_status(1), T, {});
    j.dump_all("ValueError: loss is nan");
    const Verdict v = j.judge();
    CHECK(v.cause == Cause::user_error);
    CHECK(v.node.empty());
    CHECK_FALSE(v.node_class);
    const std::string line = render_line(v);
    check_line(line);
    CHECK(v.alike == Alike::same_exception);
    CHECK(v.ran_on == "n01");
    CHECK(line == "gangway: job 1234 step 0 failed on every rank: each raised ValueError: loss is nan, the first rank 0 on n01 "
                  "(local 0) at 11:06:40.000 (no node fault); 7 other ranks ended 0.1-0.7 s later (exit 1)");
    SECTION("one rank with another exception: not the same exception, yet every rank's same exit at once: still alike, no node") {
        j.node("n02").dumps[0].exception = "KeyError: x";
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::user_error);
        CHECK(w.alike == Alike::same_status);
        CHECK(w.node.empty());
    }
    SECTION("one rank with another exception, and the ends 3 s apart: a non-zero exit, no node evidence") {
        j.node("n02").dumps[0].exception = "KeyError: x";
        j.task(7).t_ns = T + 3000 * kMs;
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::nonzero_exit);
        CHECK(w.node.empty());
        CHECK(w.ran_on == "n01");
    }
    SECTION("root's evidence comes first: an Xid under the same exception is the Xid's") {
        j.node("n01").evidence.push_back(ev(Sign::gpu_xid, T - 1000 * kMs, "0000:17:00.0", 79, 0, "NVRM: Xid"));
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::gpu_xid);
        CHECK(w.node == "n01");
    }
}

TEST_CASE("one rank exits non-zero with no node evidence: the job's own, no node blamed", "[postmortem][verdict]") {
    Job j;
    j.task(3).wait_status = exit_status(3), j.task(3).t_ns = T;
    j.others(SIGTERM, T + 1000 * kMs, {3});
    const Verdict v = j.judge();
    CHECK(v.cause == Cause::nonzero_exit);
    CHECK(v.node.empty());
    CHECK(v.rank == 3u);
    const std::string line = render_line(v);
    check_line(line);
    CHECK(v.ran_on == "n02");
    CHECK(line == "gangway: job 1234 step 0 stopped by rank 3 on n02 (local 1): exit 3 at 11:06:40.000, an exit of the program itself "
                  "(no node fault); 7 other ranks ended 1.0-1.6 s later (SIGTERM from SLURM)");
    SECTION("with a hung task in its node's log: the node is named, not at fault") {
        j.node("n02").evidence.push_back(ev(Sign::hung_task, T - 10'000 * kMs, "", 0, 99, "INFO: task jbd2/sda1-8:99 blocked for more than 120 seconds."));
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::nonzero_exit);
        CHECK(w.node == "n02");
        CHECK_FALSE(w.node_class);
        CHECK_THAT(render_line(w), ContainsSubstring("stopped by rank 3 on n02 (local 1): exit 3 at 11:06:40.000 (no node fault; its node logged hung_task"));
    }
}

TEST_CASE("the program's own exit: where it ran, and apart from it no node fault; its cascade is not every rank alike", "[postmortem][verdict][alike]") {
    // os._exit(3) on rank 5; the others' gloo fails on the closed peer (exit 1)
    // 0.7-1.3 s on: within the alike window, but another status.
    Job j;
    j.task(5).wait_status = exit_status(3), j.task(5).t_ns = T;
    j.others(exit_status(1), T + 700 * kMs, {5});
    const Verdict v = j.judge();
    CHECK(v.cause == Cause::nonzero_exit);
    CHECK(v.alike == Alike::none);
    CHECK(v.node.empty());
    CHECK_FALSE(v.node_class);
    CHECK(v.ran_on == "n03");
    const std::string line = render_line(v);
    check_line(line);
    CHECK(line == "gangway: job 1234 step 0 stopped by rank 5 on n03 (local 1): exit 3 at 11:06:40.000, an exit of the program itself "
                  "(no node fault); 7 other ranks ended 0.7-1.3 s later (exit 1)");
    CHECK_THAT(render_timeline(v, j.recs), ContainsSubstring("first failure:\n     +0.000 s  n03  rank 5 (local 1)  exit 3  <- first\n"));
    SECTION("SLURM's SIGTERM to the others after it: not alike either") {
        j.others(SIGTERM, T + 300 * kMs, {5});
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::nonzero_exit);
        CHECK(w.rank == 5u);
    }
}

TEST_CASE("every rank ends alike, no dump (torch before 2.5): the program failed on every rank, no node fault", "[postmortem][verdict][alike]") {
    Job j;
    j.others(exit_status(1), T, {});  // ranks 0-7, 0.1 s apart: within 0.7 s
    const Verdict v = j.judge();
    CHECK(v.cause == Cause::user_error);
    CHECK(v.alike == Alike::same_status);
    CHECK(v.node.empty());
    CHECK_FALSE(v.node_class);
    CHECK(v.rank == 0u);
    CHECK(v.ran_on == "n01");
    const std::string line = render_line(v);
    check_line(line);
    CHECK(line == "gangway: job 1234 step 0 failed on every rank: all 8 ended with exit 1 within 0.7 s, the first rank 0 on n01 "
                  "(local 0) at 11:06:40.000 (no node fault)");
    SECTION("every rank SIGSEGV at once: alike") {
        j.others(SIGSEGV, T, {});
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::user_error);
        CHECK(w.detail == "SIGSEGV");
    }
    SECTION("the last end more than 2 s after the first: not alike") {
        j.task(7).t_ns = T + 2100 * kMs;
        CHECK(j.judge().cause == Cause::nonzero_exit);
    }
    SECTION("one rank another status: not alike") {
        j.task(6).wait_status = exit_status(2);
        CHECK(j.judge().cause == Cause::nonzero_exit);
    }
    SECTION("one rank ended 0: not every rank") {
        j.task(6).wait_status = 0;
        CHECK(j.judge().cause == Cause::nonzero_exit);
    }
    SECTION("root's node-class evidence comes first") {
        j.node("n02").evidence.push_back(ev(Sign::link_down, T - 1000 * kMs, "eth1", 0, 0, "eth1: Link is Down"));
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::link_down);
        CHECK(w.node == "n02");
    }
    SECTION("a step of one rank is no 'every rank'") {
        Job one(1, 1);
        one.others(exit_status(1), T, {});
        CHECK(one.judge().cause == Cause::nonzero_exit);
    }
}

namespace {
// Every rank of the job dumps process group "0": entered 0..59, completed
// 0..58, the newest 32 timed. Others entered collective s at
// T - wait - (59 - s) * 100 ms, each a few ms off, on their node's clock
// (`skew_ms` per node: the nodes' clocks differ by up to 2.1 s).
void timed_dumps(Job& j, std::int64_t wait_ms, std::int64_t jitter_ms, const std::vector<std::int64_t>& skew_ms) {
    for (std::size_t n = 0; n < j.recs.size(); ++n)
        for (const auto& t : j.recs[n].tasks) {
            RankDump d;
            d.rank = t.rank, d.group = "0";
            for (std::uint64_t s = 0; s < 60; ++s) d.entered.push_back(s);
            d.completed = d.entered;
            d.completed.pop_back();
            for (std::uint64_t s = 60 - kMaxTimed; s < 60; ++s) {
                const std::uint32_t h = std::uint32_t(t.rank) * 2654435761u + std::uint32_t(s) * 40503u;
                const std::int64_t jitter = std::int64_t((h ^ (h >> 15)) % std::uint32_t(2 * jitter_ms + 1)) - jitter_ms;
                d.timed.push_back({s, T - (wait_ms + std::int64_t(59 - s) * 100 + jitter - skew_ms[n]) * kMs, 0, 0});
            }
            j.recs[n].dumps.push_back(std::move(d));
        }
}
RankDump::Timed& timed_of(Job& j, std::uint32_t rank, std::uint64_t seq) {
    for (auto& r : j.recs)
        for (auto& d : r.dumps)
            if (d.rank == rank)
                for (auto& t : d.timed)
                    if (t.seq == seq) return t;
    throw Error("no such timed collective");
}
}  // namespace

TEST_CASE("a hang in which every rank entered the same collectives: the rank the others waited for, by the dumps' times", "[postmortem][verdict][late]") {
    // The SIGSTOP case: rank 5 stopped between collectives 58 and 59;
    // the others entered 59 and waited 20 s; SLURM's SIGCONT let it enter 59
    // just before its SIGTERM, so every dump shows entered 59, completed 58.
    Job j;
    j.others(SIGTERM, T, {});  // rank r's end at T + r * 0.1 s
    const std::vector<std::int64_t> skew = {0, -800, 1300, -400};
    timed_dumps(j, 20'000, 5, skew);
    timed_of(j, 5, 59).entered_ns = T + (400 + skew[2]) * kMs;  // n03's clock; its end is at T + 0.5 s
    const Verdict v = j.judge();
    CHECK(v.cause == Cause::hang);
    CHECK(v.hang_ranks == std::vector<std::uint32_t>{5});
    CHECK(v.node.empty());
    CHECK_FALSE(v.node_class);
    const std::string line = render_line(v);
    check_line(line);
    CHECK_THAT(line, ContainsSubstring("hung until SLURM signalled every rank at 11:06:40.000: rank 5 entered collective 59 20."));
    CHECK_THAT(line, ContainsSubstring(" s late, after the 7 other ranks, which waited for it; 8 ranks ended 0.0-0.7 s later"));

    SECTION("a healthy pace and jittery clocks name nobody") {
        timed_of(j, 5, 59).entered_ns = T - (20'000 - skew[2]) * kMs;
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::hang);
        CHECK(w.hang_ranks.empty());
        CHECK_THAT(render_line(w), ContainsSubstring("every rank with a dump entered collective 59 (a stall inside it"));
    }
    SECTION("clocks 30 s apart between nodes name nobody: each rank's pace is read on its own clock") {
        for (auto& r : j.recs)
            for (auto& d : r.dumps)
                for (auto& t : d.timed) t.entered_ns += (r.node == "n04" ? 30'000 : 0) * kMs;
        timed_of(j, 5, 59).entered_ns = T - (20'000 - skew[2]) * kMs;
        CHECK(j.judge().hang_ranks.empty());
    }
    SECTION("3.4 s late: named where the pace spreads by 10 ms, not where it spreads by more than 0.7 s (5 times the usual spread)") {
        for (const std::int64_t jitter : {5, 400}) {
            Job k;
            k.others(SIGTERM, T, {});
            timed_dumps(k, 3'000, jitter, skew);
            timed_of(k, 5, 59).entered_ns = T + (400 + skew[2]) * kMs;
            INFO(render_line(k.judge()));
            CHECK(k.judge().hang_ranks == (jitter == 5 ? std::vector<std::uint32_t>{5} : std::vector<std::uint32_t>{}));
        }
    }
    SECTION("a rank late long before the end is not the one the others waited for at the end") {
        // The others had all been inside 59 with it for 60 s when SLURM signalled: a stall inside.
        for (auto& r : j.recs)
            for (auto& d : r.dumps)
                for (auto& t : d.timed) t.entered_ns -= 60'000 * kMs;
        CHECK(j.judge().hang_ranks.empty());
    }
    SECTION("both ranks of a stopped node: both named") {
        timed_of(j, 4, 59).entered_ns = T + (300 + skew[2]) * kMs;
        CHECK(j.judge().hang_ranks == std::vector<std::uint32_t>{4, 5});
    }
    SECTION("schema-2 dumps, no times: as before, nobody named") {
        for (auto& r : j.recs)
            for (auto& d : r.dumps) d.timed.clear();
        CHECK(j.judge().hang_ranks.empty());
    }
    SECTION("a rank that did not enter 59 at all: the sequence numbers name it first") {
        for (auto& d : j.node("n02").dumps)
            if (d.rank == 2) d.entered.pop_back(), d.timed.pop_back();
        CHECK(j.judge().hang_ranks == std::vector<std::uint32_t>{2});
    }
}

TEST_CASE("case 7: a healthy job: Cause::none, no line, no timeline", "[postmortem][verdict]") {
    Job j;
    j.node("n02").evidence.push_back(ev(Sign::ib_errors, T, "mlx5_0/1", 3, 0, "symbol_error +3"));
    const Verdict v = j.judge();
    CHECK(v.cause == Cause::none);
    CHECK(render_line(v).empty());
    CHECK(render_timeline(v, j.recs).empty());
    CHECK(postmortem::judge({}, {}).cause == Cause::none);
}

TEST_CASE("a node lost: it outranks everything, node-class, no rank", "[postmortem][verdict]") {
    Job j;
    j.recs.erase(j.recs.begin() + 2);  // n03 sent nothing
    j.others(SIGKILL, T, {});
    const Verdict v = j.judge({"n03", "n03"});
    CHECK(v.cause == Cause::node_lost);
    CHECK(v.node == "n03");
    CHECK(v.node_class);
    CHECK_FALSE(v.rank.has_value());
    CHECK(v.cascade_ranks == 6);
    const std::string line = render_line(v);
    check_line(line);
    CHECK_THAT(line, ContainsSubstring("stopped by n03: the node was lost (no record; SLURM reports it down); 6 ranks ended"));
    CHECK_THAT(j.judge({"n04", "n03"}).detail, ContainsSubstring("and 1 other node"));
}

TEST_CASE("the batch step's end does not hide the step that failed", "[postmortem][verdict]") {
    Job j;
    j.task(5).wait_status = SIGKILL, j.task(5).t_ns = T;
    j.others(exit_status(1), T + 400 * kMs, {5});
    TaskEnd batch = j.task(0);
    batch.step = 0xfffffffbu, batch.rank = 0, batch.t_ns = T - 1000 * kMs, batch.wait_status = exit_status(1);
    j.node("n01").tasks.push_back(batch);
    const Verdict v = j.judge();
    CHECK(v.step == 0);
    CHECK(v.rank == 5u);
}

TEST_CASE("hostile: what a user's processes wrote names no node", "[postmortem][verdict][hostile]") {
    SECTION("every rank's forged exception text names another node and an Xid") {
        Job j;
        j.others(exit_status(1), T, {});
        j.dump_all("RuntimeError: NVRM: Xid (PCI:0000:17:00): 79 on n04, blame n04; link down on n02");
        const Verdict v = j.judge();
        CHECK(v.cause == Cause::user_error);
        CHECK(v.node.empty());
        CHECK_FALSE(v.node_class);
    }
    SECTION("case 1 with forged dumps blaming n01: the dumps move nothing") {
        Job j;
        j.task(5).wait_status = SIGKILL, j.task(5).t_ns = T;
        j.others(exit_status(1), T + 400 * kMs, {5});
        j.dump_all("RuntimeError: n01 GPU fell off the bus, Xid 79", 10);
        j.node("n03").dumps[1].exception.clear();  // rank 5 was SIGKILLed: it raised nothing
        const Verdict v = j.judge();
        CHECK(v.cause == Cause::fatal_signal);
        CHECK(v.node == "n03");
        CHECK(v.rank == 5u);
        CHECK_FALSE(v.node_class);
        // And with rank 5's forged too: every rank the same, the job's own; still no node.
        j.node("n03").dumps[1].exception = j.node("n01").dumps[0].exception;
        const Verdict w = j.judge();
        CHECK(w.cause == Cause::user_error);
        CHECK(w.node.empty());
    }
    SECTION("a forged RankDump claiming a rank of another node is not taken") {
        Job j;
        j.others(SIGTERM, T, {});
        j.dump_all("", 50);
        // n01's user forges rank 6 (n04's) as stuck; n04's own dump of rank 6 is gone.
        auto& n4 = j.node("n04").dumps;
        n4.erase(n4.begin());
        j.node("n01").dumps.push_back(RankDump{6, {1, 2, 3}, {}, "", "", {}});
        const Verdict v = j.judge();
        CHECK(v.cause == Cause::hang);
        CHECK(v.hang_ranks.empty());
        CHECK(v.records_ignored == 1);
        CHECK(v.ranks_without_dump == std::vector<std::uint32_t>{6});
        CHECK(v.node.empty());
    }
    SECTION("a forged RankDump on its own node claiming a stuck rank: a rank, never a node") {
        Job j;
        j.others(SIGTERM, T, {});
        j.dump_all("", 50);
        j.node("n01").dumps[1].entered.resize(10);
        const Verdict v = j.judge();
        CHECK(v.hang_ranks == std::vector<std::uint32_t>{1});
        CHECK(v.node.empty());
        CHECK_FALSE(v.node_class);
    }
    SECTION("a task end in one node's record naming another node or job is not taken") {
        Job j;
        j.others(exit_status(1), T + 400 * kMs, {});
        TaskEnd forged = j.task(0);
        forged.node = "n04", forged.rank = 6, forged.wait_status = SIGKILL, forged.t_ns = T;
        j.node("n01").tasks.push_back(forged);
        TaskEnd other_job = j.task(0);
        other_job.job = 99, other_job.rank = 7, other_job.wait_status = SIGKILL, other_job.t_ns = T;
        j.node("n01").tasks.push_back(other_job);
        j.node("n04").evidence.push_back(ev(Sign::gpu_xid, T + 60'000 * kMs, "0000:17:00.0", 79, 0, "late"));
        const Verdict v = j.judge();
        CHECK(v.records_ignored == 2);
        CHECK(v.rank == 0u);
        CHECK(v.cause == Cause::user_error);  // every rank's own exit 1, within 0.7 s
        CHECK(v.ran_on == "n01");
        CHECK(v.node.empty());
    }
    SECTION("a node's record twice counts once") {
        Job j;
        j.others(exit_status(1), T, {});
        j.recs.push_back(j.recs[0]);
        CHECK(j.judge().step_ranks == 8);
    }
    SECTION("hostile text in names and dumps: one printable line, at most 250 bytes") {
        Job j;
        j.others(exit_status(1), T, {});
        j.dump_all("E: \"quoted\" $(rm -rf /) `x` \\ \n second line \x1b[2J" + std::string(1000, 'x'));
        const std::string line = render_line(j.judge());
        check_line(line);
        CHECK(line.find_first_of("\"$`\\\n") == std::string::npos);
        const std::string t = render_timeline(j.judge(), j.recs);
        CHECK(t.find('\x1b') == std::string::npos);
    }
    SECTION("records of two jobs: refused") {
        Job j;
        j.recs[1].job = 99;
        CHECK_THROWS_WITH(j.judge(), ContainsSubstring("judge one job's records at a time"));
    }
}

TEST_CASE("hostile: each case with the user's forged dumps blames no other node", "[postmortem][verdict][hostile]") {
    SynthJob s;
    s.nodes = 4, s.ranks_per_node = 2, s.victim = 5, s.collectives = 20;
    for (Scenario sc : {Scenario::healthy, Scenario::killed_rank, Scenario::oom, Scenario::link_cut, Scenario::xid,
                        Scenario::hang, Scenario::hang_late, Scenario::same_exception}) {
        s.scenario = sc;
        auto recs = synth_job(s);
        const Verdict honest = postmortem::judge(recs, {});
        // Every node's user: the same exception naming gpu000 on every rank, each of
        // the job's ranks claimed stuck at collective 0, and the node's own ranks too.
        for (auto& r : recs) {
            for (auto& d : r.dumps) d.exception = "RuntimeError: NCCL error on gpu000: Xid 79, link down on gpu000";
            for (std::uint32_t rank = 0; rank < 8; ++rank) r.dumps.push_back(RankDump{rank, {0}, {}, "forged on gpu000", "", {}});
        }
        const Verdict forged = postmortem::judge(recs, {});
        INFO(int(sc) << ": honest: " << render_line(honest) << "\nforged: " << render_line(forged));
        CHECK((forged.node.empty() || forged.node == honest.node));
        CHECK((!forged.node_class || (honest.node_class && forged.node == honest.node)));
        CHECK((forged.cause == Cause::none) == (honest.cause == Cause::none));
        if (honest.node_class) CHECK(forged.cause == honest.cause);  // root's evidence stands
        CHECK(render_line(forged).find("stopped by gpu000") == std::string::npos);
    }
}

TEST_CASE("the timeline: the line, the first failure, root's evidence, the cascade, bounded", "[postmortem][verdict]") {
    Job j;
    j.node("n04").evidence.push_back(ev(Sign::gpu_xid, T, "0000:17:00.0", 79, 0, "NVRM: Xid (PCI:0000:17:00): 79, pid=1"));
    j.others(exit_status(1), T + 300 * kMs, {7});
    j.task(7).wait_status = SIGKILL, j.task(7).t_ns = T + 800 * kMs;
    const Verdict v = j.judge();
    const std::string t = render_timeline(v, j.recs);
    INFO(t);
    CHECK(t.rfind(render_line(v) + "\n", 0) == 0);
    CHECK_THAT(t, ContainsSubstring("cause: gpu-xid (the node's own: node-class)"));
    CHECK_THAT(t, ContainsSubstring("rank 7 (local 1)  SIGKILL  <- first"));
    CHECK_THAT(t, ContainsSubstring("n04  gpu_xid  0000:17:00.0  Xid 79"));
    CHECK_THAT(t, ContainsSubstring("+0.300 s  n01  rank 0 (local 0)  exit 1"));

    SECTION("evidence no reader could time is shown as such, and is no cause") {
        j.node("n01").evidence.push_back(ev(Sign::retired_pages, 0, "0000:3b:00.0", 2, 0, "retired pages pending"));
        const Verdict w = j.judge();
        CHECK(w.node == "n04");
        CHECK_THAT(render_timeline(w, j.recs), ContainsSubstring("  time ?    n01  retired_pages  0000:3b:00.0  retired pages pending"));
    }

    SECTION("512 ranks: cut, saying how many more") {
        SynthJob s;
        s.scenario = Scenario::xid;
        const auto recs = synth_job(s);
        const std::string big = render_timeline(postmortem::judge(recs, {}), recs);
        CHECK(big.size() <= kMaxTimeline);
        CHECK_THAT(big, ContainsSubstring("... 448 more ..."));
        CHECK_THAT(big, ContainsSubstring("first failure:\n     +0.800 s  gpu000  rank 0 (local 0)  SIGKILL  <- first\n"));
    }
}

TEST_CASE("the synthesised cases at 512 ranks on 64 nodes judge as the small ones", "[postmortem][verdict][scale]") {
    SynthJob s;  // 64 nodes of 8, victim rank 5 on gpu000
    s.victim = 205;  // gpu025, local 5
    const std::pair<Scenario, Cause> cases[] = {
        {Scenario::healthy, Cause::none},         {Scenario::killed_rank, Cause::fatal_signal},
        {Scenario::oom, Cause::oom},              {Scenario::link_cut, Cause::link_down},
        {Scenario::xid, Cause::gpu_xid},          {Scenario::hang, Cause::hang}, {Scenario::hang_late, Cause::hang},
        {Scenario::same_exception, Cause::user_error},
    };
    for (const auto& [sc, cause] : cases) {
        s.scenario = sc;
        const Verdict v = postmortem::judge(synth_job(s), {});
        INFO(render_line(v));
        CHECK(v.cause == cause);
        if (cause == Cause::fatal_signal || cause == Cause::oom) CHECK(v.rank == 205u);
        if (cause == Cause::link_down || cause == Cause::gpu_xid) CHECK(v.node == "gpu025");
        if (cause == Cause::hang) CHECK(v.hang_ranks == std::vector<std::uint32_t>{205});
        if (cause != Cause::none) CHECK(v.step_ranks == 512);
    }
}

TEST_CASE("the verdict's cost is linear in the records: counted, not timed", "[postmortem][verdict][scale][budget]") {
    using gangway::test::cost_of;
    // The heaviest case: a hang, every rank's dump read (2,000 collectives each).
    SynthJob s;
    s.scenario = Scenario::hang;
    s.victim = 205;
    const auto small = synth_job(s);
    s.nodes = 128;  // twice the ranks
    const auto big = synth_job(s);
    Verdict v1, v2;
    const auto c1 = cost_of([&] { v1 = postmortem::judge(small, {}); });
    const auto c2 = cost_of([&] { v2 = postmortem::judge(big, {}); });
    CHECK(v1.hang_ranks == std::vector<std::uint32_t>{205});
    CHECK(v2.hang_ranks == std::vector<std::uint32_t>{205});
    INFO("512 ranks: " << c1.peak_bytes << " bytes of heap at most; 1,024 ranks: " << c2.peak_bytes);
    // What the judgement holds beside the records: a few dozen bytes a rank
    // (its end, its dump's pointer, its last collective), no copy of a record.
    CHECK(c1.peak_bytes < 512 * 256);
    CHECK(c2.peak_bytes < 2 * c1.peak_bytes + 16 * 1024);
    // The late entry's naming by the dumps' times: no more.
    s.nodes = 64;
    s.scenario = Scenario::hang_late;
    const auto late = synth_job(s);
    Verdict v4;
    const auto c4 = cost_of([&] { v4 = postmortem::judge(late, {}); });
    INFO("a late entry at 512 ranks: " << c4.peak_bytes << " bytes of heap at most");
    CHECK(v4.hang_ranks == std::vector<std::uint32_t>{205});
    CHECK(c4.peak_bytes < 512 * 256);
    // The timeline, too.
    const auto c3 = cost_of([&] { (void)render_timeline(v1, small); });
    CHECK(c3.peak_bytes < 512 * 256 + 2 * kMaxTimeline);
}
