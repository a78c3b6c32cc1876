// Root's samples of each task while the step runs (issue 41, item 7): /proc's
// fields, the file slurmstepd rewrites, the record's rows, and the hang's
// rank named from them (stall.hpp) where the dumps cannot.
#include "catch_compat.hpp"

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include "../../lib/base/error.hpp"
#include "../../lib/postmortem/record.hpp"
#include "../../lib/postmortem/stall.hpp"
#include "../../lib/stepd/task_samples.hpp"
#include "../../lib/postmortem/verdict.hpp"

using namespace gangway;
using namespace gangway::postmortem;
using Catch::Matchers::ContainsSubstring;

namespace {

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t T = 1'795'000'000'000'000'000;

// n01..n04, ranks 0-7, two a node, every rank SIGTERMed by SLURM at T (+0.1 s
// a rank), the step sampled every 5 s from T - 60 s: every rank sleeping
// (waiting in a collective) unless a case says otherwise.
struct Job {
    std::vector<NodeRecord> recs;
    Job() {
        std::vector<std::string> names = {"n01", "n02", "n03", "n04"};
        for (std::uint32_t n = 0; n < 4; ++n) {
            NodeRecord r;
            r.node = names[n], r.job = 77, r.job_nodes = names;
            r.window_start_ns = T - 600 * kS, r.window_end_ns = T + 60 * kS;
            for (std::uint32_t l = 0; l < 2; ++l) {
                TaskEnd t;
                t.node = r.node, t.job = 77, t.rank = n * 2 + l, t.local_rank = l;
                t.t_ns = T + std::int64_t(t.rank) * kS / 10, t.wait_status = SIGTERM;
                r.tasks.push_back(t);
                for (std::int64_t at = T - 60 * kS; at < T; at += 5 * kS) {
                    TaskSample s;
                    s.t_ns = at + std::int64_t(n) * kS / 7, s.rank = t.rank, s.state = TaskState::sleeping;
                    s.cpu_ns = std::uint64_t(at - (T - 60 * kS)) / 100, s.procs = 1;
                    r.samples.push_back(s);
                }
            }
            recs.push_back(std::move(r));
        }
    }
    // Rank r's rounds from `from` (seconds before T) on are in state s.
    void state(std::uint32_t rank, TaskState st, std::int64_t from_s) {
        for (auto& r : recs)
            for (auto& s : r.samples)
                if (s.rank == rank && s.t_ns >= T - from_s * kS) s.state = st;
    }
};

}  // namespace

TEST_CASE("/proc's fields: the state after the last ')', schedstat's first two", "[postmortem][samples]") {
    CHECK(stat_state("4242 (python3) T 1 4242 4242 0 -1") == 'T');
    CHECK(stat_state("4242 (a) b) (c) S 1 2 3") == 'S');  // a command name with ") " in it
    CHECK(stat_state("4242 (x)") == std::nullopt);
    CHECK(stat_state("garbage") == std::nullopt);
    const auto s = parse_schedstat("123456789 987654 42\n");
    REQUIRE(s);
    CHECK(s->cpu_ns == 123456789);
    CHECK(s->wait_ns == 987654);
    CHECK_FALSE(parse_schedstat("12 x 4"));
    CHECK_FALSE(parse_schedstat("12"));
    CHECK(parse_state_letter('t') == TaskState::stopped);
    CHECK(parse_state_letter('I') == TaskState::sleeping);
    CHECK(parse_state_letter('Z') == TaskState::gone);
    CHECK_FALSE(parse_state_letter('?'));
    for (auto st : {TaskState::gone, TaskState::sleeping, TaskState::running, TaskState::disk_wait, TaskState::stopped})
        CHECK(parse_state_letter(state_letter(st)) == st);
}

TEST_CASE("the samples file: written and read back, strict, bounded", "[postmortem][samples]") {
    char line[kMaxSampleLine];
    std::string text(line, format_sample_header(3, 5 * kS, line));
    TaskSample a{T, 3, 6, TaskState::stopped, 1500, 20, 2};
    TaskSample b{T + 5 * kS, 3, 7, TaskState::disk_wait, 9, 0, 1};
    text.append(line, format_sample_line(a, line));
    text.append(line, format_sample_line(b, line));
    // The longest line fits.
    const TaskSample widest{INT64_MAX, 0, UINT32_MAX, TaskState::disk_wait, UINT64_MAX, UINT64_MAX, UINT32_MAX};
    const std::string w(line, format_sample_line(widest, line));
    CHECK(w.size() <= kMaxSampleLine);
    CHECK(parse_samples("gangway-samples 1 step=0 interval_ms=1\n" + w).rows.at(0).wait_ns == UINT64_MAX);
    CHECK(text == "gangway-samples 1 step=3 interval_ms=5000\n1795000000000000000 6 T 1500 20 2\n1795000005000000000 7 D 9 0 1\n");
    const StepSamples r = parse_samples(text);
    CHECK(r.step == 3);
    CHECK(r.interval_ns == 5 * kS);
    REQUIRE(r.rows.size() == 2);
    CHECK(r.rows[0].rank == 6);
    CHECK(r.rows[0].state == TaskState::stopped);
    CHECK(r.rows[0].cpu_ns == 1500);
    CHECK(r.rows[1].step == 3);
    CHECK(r.rows[1].state == TaskState::disk_wait);

    for (const char* bad : {"", "gangway-samples 2 step=1 interval_ms=5\n", "gangway-samples 1 step=x interval_ms=5\n",
                            "gangway-samples 1 step=1 interval_ms=5\n1 2 Q 3 4 5\n", "gangway-samples 1 step=1 interval_ms=5\n1 2 S 3 4\n",
                            "gangway-samples 1 step=1 interval_ms=5\n1 2 S 3 4 5 6\n", "gangway-samples 1 step=1 interval_ms=5\n1 -2 S 3 4 5\n"})
        CHECK_THROWS_AS(parse_samples(bad), Error);
    std::string big = "gangway-samples 1 step=1 interval_ms=5\n";
    for (std::size_t i = 0; i <= kMaxSampleRounds * kMaxSampledTasks; ++i) big += "1 2 S 3 4 5\n";
    CHECK_THROWS_WITH(parse_samples(big), ContainsSubstring("rows"));
}

TEST_CASE("the record carries the samples; an earlier record without them still reads", "[postmortem][samples][record]") {
    Job j;
    j.state(5, TaskState::stopped, 20);
    const NodeRecord& n = j.recs[2];
    const NodeRecord back = parse_node_record(to_json(n));
    REQUIRE(back.samples.size() == n.samples.size());
    for (std::size_t i = 0; i < n.samples.size(); ++i) {
        CHECK(back.samples[i].t_ns == n.samples[i].t_ns);
        CHECK(back.samples[i].rank == n.samples[i].rank);
        CHECK(back.samples[i].state == n.samples[i].state);
        CHECK(back.samples[i].cpu_ns == n.samples[i].cpu_ns);
    }
    NodeRecord none = n;
    none.samples.clear();
    CHECK(to_json(none).find("samples") == std::string::npos);
    CHECK(parse_node_record(to_json(none)).samples.empty());
    std::string json = to_json(n);
    const auto at = json.find("\"T\"");
    REQUIRE(at != std::string::npos);
    CHECK_THROWS_WITH(parse_node_record(std::string(json).replace(at, 3, "\"Q\"")), ContainsSubstring("state"));
    std::string six = to_json(none);
    six.insert(six.size() - 1, ",\"samples\":[[0,1,2,\"S\",3,4]]");
    CHECK_THROWS_WITH(parse_node_record(six), ContainsSubstring("7 values"));
    std::string many = to_json(none);
    std::string rows;
    for (std::size_t i = 0; i <= kMaxSampleRows; ++i) rows += std::string(i ? "," : "") + "[0,1,2,\"S\",3,4,1]";
    many.insert(many.size() - 1, ",\"samples\":[" + rows + "]");
    CHECK_THROWS_WITH(parse_node_record(many), ContainsSubstring("more than 8192 samples"));
}

TEST_CASE("a hang: the rank slurmstepd saw stopped while the others waited is named, whatever the dumps say", "[postmortem][samples][stall]") {
    // The SIGSTOP: rank 5 stopped 20 s before scancel; SLURM's SIGCONT
    // let it join the collective before the dumps, which show nothing.
    Job j;
    j.state(5, TaskState::stopped, 21);
    const Verdict v = judge(j.recs, {});
    CHECK(v.cause == Cause::hang);
    CHECK(v.hang_ranks == std::vector<std::uint32_t>{5});
    CHECK(v.node.empty());
    CHECK_FALSE(v.node_class);
    REQUIRE(v.stalls.size() == 1);
    CHECK(v.stalls[0].node == "n03");
    CHECK(v.stalls[0].for_s >= 15);
    const std::string line = render_line(v);
    INFO(line);
    CHECK_THAT(line, ContainsSubstring("hung until SLURM signalled every rank at "));
    CHECK_THAT(line, ContainsSubstring("rank 5 on n03 stopped (SIGSTOP or a debugger) for at least 15 s, while 7 other ranks waited"));
    CHECK(line.size() <= kMaxLine);
    CHECK_THAT(render_timeline(v, j.recs), ContainsSubstring("n03  rank 5  stopped"));

    SECTION("a round taken after SLURM's SIGCONT does not hide it") {
        for (auto& s : j.recs[2].samples)
            if (s.rank == 5 && s.t_ns == T - 5 * kS + 2 * kS / 7) s.state = TaskState::running;
        CHECK(judge(j.recs, {}).hang_ranks == std::vector<std::uint32_t>{5});
    }
    SECTION("one round alone is a moment, not a stall") {
        Job k;
        k.state(5, TaskState::stopped, 5);
        CHECK(judge(k.recs, {}).stalls.empty());
    }
    SECTION("stopped long before the end, then running again: not why it hung") {
        Job k;
        k.state(5, TaskState::stopped, 50);
        k.state(5, TaskState::sleeping, 30);
        CHECK(judge(k.recs, {}).stalls.empty());
    }
    SECTION("every rank stopped (the job suspended): nobody named") {
        Job k;
        for (std::uint32_t r = 0; r < 8; ++r) k.state(r, TaskState::stopped, 21);
        CHECK(judge(k.recs, {}).stalls.empty());
    }
    SECTION("a node's record twice: its samples count once") {
        j.recs.push_back(j.recs[2]);
        CHECK(judge(j.recs, {}).hang_ranks == std::vector<std::uint32_t>{5});
    }
    SECTION("samples of another step are not this step's") {
        for (auto& r : j.recs)
            for (auto& s : r.samples) s.step = 1;
        CHECK(judge(j.recs, {}).stalls.empty());
    }
}

TEST_CASE("a hang: a rank in uninterruptible sleep, a rank starved of CPU", "[postmortem][samples][stall]") {
    SECTION("D for 15 s") {
        Job j;
        j.state(2, TaskState::disk_wait, 16);
        const Verdict v = judge(j.recs, {});
        CHECK(v.hang_ranks == std::vector<std::uint32_t>{2});
        CHECK_THAT(render_line(v), ContainsSubstring("rank 2 on n02 in uninterruptible sleep (D: I/O or a driver) for at least 10 s"));
    }
    SECTION("runnable and waiting for a CPU 80 % of the last 10 s") {
        Job j;
        for (auto& s : j.recs[3].samples)
            if (s.rank == 6) {
                s.state = TaskState::running;
                s.wait_ns = std::uint64_t(s.t_ns - (T - 60 * kS)) * 8 / 10;
            }
        const Verdict v = judge(j.recs, {});
        CHECK(v.hang_ranks == std::vector<std::uint32_t>{6});
        CHECK_THAT(render_line(v), ContainsSubstring("rank 6 on n04 waited for a CPU 80% of its last 10 s"));
    }
    SECTION("busy (a spinning NCCL rank) is not starved") {
        Job j;
        for (auto& s : j.recs[3].samples)
            if (s.rank == 6) s.state = TaskState::running, s.cpu_ns = std::uint64_t(s.t_ns - (T - 60 * kS)), s.wait_ns = s.cpu_ns / 20;
        CHECK(judge(j.recs, {}).stalls.empty());
    }
    SECTION("no samples (a plugin before them): the dumps' rules as before") {
        Job j;
        for (auto& r : j.recs) r.samples.clear();
        const Verdict v = judge(j.recs, {});
        CHECK(v.cause == Cause::hang);
        CHECK(v.stalls.empty());
        CHECK_THAT(render_line(v), ContainsSubstring("no rank evidence was kept"));
    }
    SECTION("not a hang (a rank's own exit first): the samples change nothing") {
        Job j;
        j.state(5, TaskState::stopped, 21);
        j.recs[1].tasks[0].wait_status = 3 << 8, j.recs[1].tasks[0].t_ns = T - kS;
        CHECK(judge(j.recs, {}).cause != Cause::hang);
    }
}

TEST_CASE("a task's processes: cgroup.procs or the children files, bounded", "[postmortem][samples]") {
    int p[4] = {};
    CHECK(parse_pids("12\n13\n", p, 4) == 2);
    CHECK((p[0] == 12 && p[1] == 13));
    CHECK(parse_pids("12 13 14 ", p, 2) == 2);
    CHECK(parse_pids("x 0 -3 7", p, 4) == 1);
    CHECK(p[0] == 7);
    CHECK(parse_pids("", p, 4) == 0);
}

TEST_CASE("pressure: the some avg10 share, the file's P lines, the record's rows, the timeline", "[postmortem][samples][pressure]") {
    CHECK(pressure_some_avg10("some avg10=28.79 avg60=7.36 avg300=3.48 total=172793514\nfull avg10=0.00") == 2879u);
    CHECK(pressure_some_avg10("some avg10=100.00 avg60=1") == 10000u);
    CHECK(pressure_some_avg10("some avg10=0.5 avg60=0") == 50u);
    CHECK(pressure_some_avg10("some avg10=3 avg60=0") == 300u);
    CHECK_FALSE(pressure_some_avg10("full avg10=1.00"));
    CHECK_FALSE(pressure_some_avg10("some avg10=x"));
    CHECK_FALSE(pressure_some_avg10("some avg10=101.00"));
    CHECK_FALSE(pressure_some_avg10(""));

    char line[kMaxSampleLine];
    std::string text(line, format_sample_header(0, 5 * kS, line));
    text.append(line, format_sample_line({T, 0, 5, TaskState::stopped, 1, 2, 1}, line));
    const PressureSample p{T, 0, 2879, 15, 10000, PressureScope::node};
    text.append(line, format_pressure_line(p, line));
    CHECK(text.substr(text.rfind("P ")) == "P 1795000000000000000 2879 15 10000 n\n");
    const auto back = parse_samples(text);
    REQUIRE(back.pressure.size() == 1);
    CHECK(back.pressure[0].cpu == 2879);
    CHECK(back.pressure[0].io == 10000);
    CHECK(back.pressure[0].scope == PressureScope::node);
    CHECK(back.rows.size() == 1);
    for (const char* bad : {"P 1 2 3 4 x\n", "P 1 2 3 10001 n\n", "P 1 2 3 n\n"})
        CHECK_THROWS_AS(parse_samples("gangway-samples 1 step=0 interval_ms=5000\n" + std::string(bad)), Error);

    Job j;
    j.state(5, TaskState::stopped, 21);
    j.recs[2].pressure.push_back({T - 3 * kS, 0, 4512, 0, 30, PressureScope::step});
    j.recs[2].pressure.push_back({T + 3 * kS, 0, 9999, 9999, 9999, PressureScope::step});  // after the end: not shown
    const NodeRecord rt = parse_node_record(to_json(j.recs[2]));
    REQUIRE(rt.pressure.size() == 2);
    CHECK(rt.pressure[0].cpu == 4512);
    CHECK(rt.pressure[0].scope == PressureScope::step);
    std::string six = to_json(j.recs[0]);
    six.insert(six.size() - 1, ",\"pressure\":[[0,1,2,3,4]]");
    CHECK_THROWS_WITH(parse_node_record(six), ContainsSubstring("6 values"));
    const Verdict v = judge(j.recs, {});
    const std::string tl = render_timeline(v, j.recs);
    INFO(tl);
    CHECK_THAT(tl, ContainsSubstring("n03  pressure (the step cgroup's, some avg10): cpu 45.1 %, memory 0.0 %, io 0.3 %"));
    CHECK(tl.find("99.9") == std::string::npos);
}
