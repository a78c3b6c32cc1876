// The post-mortem's records (issue 33): a task's end as the plugin's one line,
// a node's record as JSON; both round-trip, and both refuse, in one line,
// anything a writer of theirs would not write, within their limits.
#include "catch_compat.hpp"

#include <sys/wait.h>

#include <csignal>
#include <string>

#include "../../lib/base/error.hpp"
#include "../../lib/postmortem/record.hpp"
#include "cost_meter.hpp"

using namespace gangway;
using namespace gangway::postmortem;
using Catch::Matchers::ContainsSubstring;

namespace {

TaskEnd sample_task() {
    TaskEnd t;
    t.t_ns = 1'795'000'000'123'456'789;
    t.node = "r1-gpu100";
    t.job = 1234;
    t.step = 0;
    t.rank = 5;
    t.local_rank = 1;
    t.pid = 41'000;
    t.wait_status = SIGKILL;  // as waitpid gives a SIGKILLed child's status
    t.oom_kills = 1;
    t.requeue_on_fail = true;
    return t;
}

bool same(const TaskEnd& a, const TaskEnd& b) {
    return a.t_ns == b.t_ns && a.node == b.node && a.job == b.job && a.step == b.step && a.rank == b.rank &&
           a.local_rank == b.local_rank && a.pid == b.pid && a.wait_status == b.wait_status &&
           a.oom_kills == b.oom_kills && a.requeue_on_fail == b.requeue_on_fail;
}

NodeRecord sample_record() {
    NodeRecord r;
    r.node = "r1-gpu100";
    r.job = 1234;
    r.job_nodes = {"r1-gpu100", "r1-gpu101"};
    r.window_start_ns = 1'795'000'000'000'000'000;
    r.window_end_ns = 1'795'000'100'000'000'000;
    r.tasks = {sample_task()};
    TaskEnd other = sample_task();
    other.rank = 4, other.local_rank = 0, other.wait_status = 3 << 8, other.oom_kills = 0, other.pid = 40'999;
    r.tasks.push_back(other);
    r.evidence = {{r.window_start_ns + 5, Sign::gpu_xid, "0000:17:00.0", 79, 0, "NVRM: Xid (PCI:0000:17:00): 79, pid=123"},
                  {r.window_start_ns + 9, Sign::oom_kill, "", 0, 41'000, "Out of memory: Killed process 41000 (python)"}};
    r.dumps = {{5, {1, 2, 3}, {1, 2}, "RuntimeError: boom", "",
                {{2, 1'795'000'000'100'000'000, 0, 0}, {3, 1'795'000'000'200'000'000, 1'795'000'000'200'000'100, 1'795'000'000'300'000'000}}},
               {4, {}, {}, "", "tp0", {}}};
    return r;
}

// `parse` refuses `input` with one short line naming `what`; the line, for more checks.
template <class F>
std::string refused_in_one_line(F&& parse, const std::string& input, const std::string& what) {
    INFO(input.substr(0, 200));
    try {
        parse();
    } catch (const Error& e) {
        const std::string m = e.what();
        CHECK(m.find('\n') == std::string::npos);
        CHECK(m.size() < 400);
        CHECK_THAT(m, ContainsSubstring(what));
        return m;
    }
    FAIL("taken");
    return "";
}

}  // namespace

TEST_CASE("a task's end: the plugin's line round-trips", "[postmortem][record]") {
    const TaskEnd t = sample_task();
    const std::string line = format_task_end(t);
    CHECK(line ==
          "gangway-task 1 t_ns=1795000000123456789 node=r1-gpu100 job=1234 step=0 rank=5 local_rank=1 pid=41000 "
          "wait_status=9 oom_kills=1 requeue=1\n");
    CHECK(same(parse_task_end(line), t));
    // Without its newline too (a reader that split lines).
    CHECK(same(parse_task_end(line.substr(0, line.size() - 1)), t));
    // The extremes of every field.
    TaskEnd x;
    x.t_ns = INT64_MIN, x.node = "n", x.job = UINT32_MAX, x.step = UINT32_MAX, x.rank = UINT32_MAX;
    x.local_rank = UINT32_MAX, x.pid = INT32_MIN, x.wait_status = -1, x.oom_kills = UINT64_MAX;
    CHECK(same(parse_task_end(format_task_end(x)), x));
}

TEST_CASE("a task's end: a node name that would break the line is written so that it still parses", "[postmortem][record]") {
    TaskEnd t = sample_task();
    t.node = "evil node=x\nline";
    const auto back = parse_task_end(format_task_end(t));
    CHECK(back.node == "evil?node?x?line");
    t.node = "";
    CHECK(parse_task_end(format_task_end(t)).node == "?");
    t.node = std::string(1000, 'a');
    CHECK(parse_task_end(format_task_end(t)).node.size() == kMaxNodeName);
}

TEST_CASE("a task's end: the plugin's fixed buffer holds the widest line, the same bytes as the string", "[postmortem][record]") {
    // slurmstepd formats into a kMaxTaskLine buffer (issue 32 item 6): every
    // field at its widest and a node name at its limit still fit.
    TaskEnd w;
    w.t_ns = INT64_MIN, w.node = std::string(kMaxNodeName + 10, 'n'), w.job = UINT32_MAX, w.step = UINT32_MAX;
    w.rank = UINT32_MAX, w.local_rank = UINT32_MAX, w.pid = INT32_MIN, w.wait_status = INT32_MIN;
    w.oom_kills = UINT64_MAX, w.requeue_on_fail = true;
    for (const TaskEnd& t : {sample_task(), w}) {
        char buf[kMaxTaskLine];
        const std::size_t n = format_task_end(t, buf);
        REQUIRE(n <= kMaxTaskLine);
        CHECK(std::string(buf, n) == format_task_end(t));
        CHECK(buf[n - 1] == '\n');
    }
    char buf[kMaxTaskLine];
    CHECK(format_task_end(w, buf) == 452);  // the longest there is
    const TaskEnd back = parse_task_end(std::string(buf, format_task_end(w, buf)));
    CHECK(back.node == std::string(kMaxNodeName, 'n'));
    CHECK(back.t_ns == INT64_MIN);
    CHECK(back.wait_status == INT32_MIN);
    CHECK(back.oom_kills == UINT64_MAX);
}

TEST_CASE("a task's end: anything else is refused in one line", "[postmortem][record]") {
    const std::string good = format_task_end(sample_task());
    auto replaced = [&](const std::string& from, const std::string& to) {
        std::string s = good;
        s.replace(s.find(from), from.size(), to);
        return s;
    };
    const std::string bad[] = {
        "",
        "gangway-task 2 t_ns=1",
        "gangway-task 1",
        "gangway-task 1 ",
        "gangway-task 10 t_ns=1",
        replaced("rank=5", "rank=-5"),
        replaced("rank=5", "rank=5x"),
        replaced("rank=5", "rank=4294967296"),
        replaced("rank=5", "rank="),
        replaced("job=1234 step=0", "step=0 job=1234"),           // another order
        replaced("job=1234", "job=1234 job=1234"),               // a key twice
        replaced(" requeue=1", ""),                              // a key missing
        replaced("requeue=1", "requeue=yes"),
        replaced("requeue=1\n", "requeue=1 extra=2\n"),          // a key too many
        replaced("node=r1-gpu100", "node="),
        replaced("node=r1-gpu100", "node=r1\x01gpu"),
        replaced("step=0 ", "step=0  "),                         // two blanks: an empty field
        good + "x",                                              // after the newline
        good + std::string(600, 'x'),
    };
    for (const auto& line : bad) refused_in_one_line([&] { parse_task_end(line); }, line, "task record");
}

TEST_CASE("a node's record: JSON round-trips", "[postmortem][record]") {
    const NodeRecord r = sample_record();
    const std::string j = to_json(r);
    const NodeRecord b = parse_node_record(j);
    CHECK(b.node == r.node);
    CHECK(b.job == r.job);
    CHECK(b.job_nodes == r.job_nodes);
    CHECK(b.window_start_ns == r.window_start_ns);
    CHECK(b.window_end_ns == r.window_end_ns);
    REQUIRE(b.tasks.size() == 2);
    CHECK(same(b.tasks[0], r.tasks[0]));
    CHECK(same(b.tasks[1], r.tasks[1]));
    REQUIRE(b.evidence.size() == 2);
    CHECK(b.evidence[0].sign == Sign::gpu_xid);
    CHECK(b.evidence[0].device == "0000:17:00.0");
    CHECK(b.evidence[0].code == 79);
    CHECK(b.evidence[1].sign == Sign::oom_kill);
    CHECK(b.evidence[1].pid == 41'000);
    CHECK(b.evidence[1].text == r.evidence[1].text);
    REQUIRE(b.dumps.size() == 2);
    CHECK(b.dumps[0].rank == 5);
    CHECK(b.dumps[0].entered == std::vector<std::uint64_t>{1, 2, 3});
    CHECK(b.dumps[0].completed == std::vector<std::uint64_t>{1, 2});
    CHECK(b.dumps[0].exception == "RuntimeError: boom");
    CHECK(b.dumps[1].group == "tp0");  // a dump's process group round-trips
    // Its timed collectives too; a dump without them writes none (an earlier reader's record).
    REQUIRE(b.dumps[0].timed.size() == 2);
    CHECK(b.dumps[0].timed[1].seq == 3);
    CHECK(b.dumps[0].timed[1].entered_ns == 1'795'000'000'200'000'000);
    CHECK(b.dumps[0].timed[1].started_ns == 1'795'000'000'200'000'100);
    CHECK(b.dumps[0].timed[1].completed_ns == 1'795'000'000'300'000'000);
    CHECK(b.dumps[1].timed.empty());
    CHECK(j.find(R"("group":"tp0"})") != std::string::npos);
    CHECK(to_json(b) == j);
    // Every sign has its name and back.
    for (int i = 0; i <= int(Sign::gpu_lost); ++i) CHECK(parse_sign(to_string(Sign(i))) == Sign(i));
    CHECK_FALSE(parse_sign("xid").has_value());
}

TEST_CASE("a node's record: bytes that are not UTF-8 are written, not thrown", "[postmortem][record]") {
    NodeRecord r = sample_record();
    r.dumps[0].exception = "ValueError: \xff\xfe";
    const NodeRecord b = parse_node_record(to_json(r));
    CHECK(b.dumps[0].exception.substr(0, 12) == "ValueError: ");
}

TEST_CASE("a node's record: unknown keys are passed over, within the limits", "[postmortem][record]") {
    std::string j = to_json(sample_record());
    j.insert(1, R"("future":{"a":[1,2,{"b":null}],"c":1.5},)");
    const auto pos = j.find(R"({"t_ns")");
    j.insert(pos + 1, R"("extra":[true],)");
    const NodeRecord b = parse_node_record(j);
    CHECK(b.tasks.size() == 2);
    CHECK(b.tasks[0].rank == 5);
}

TEST_CASE("a node's record: anything else is refused in one line naming the field", "[postmortem][record]") {
    const std::string good = to_json(sample_record());
    auto replaced = [&](const std::string& from, const std::string& to) {
        std::string s = good;
        const auto at = s.find(from);
        REQUIRE(at != std::string::npos);
        s.replace(at, from.size(), to);
        return s;
    };
    const std::pair<std::string, std::string> bad[] = {
        {"", "not valid JSON"},
        {"[]", "array"},
        {"1", "not a JSON object"},
        {"{}", "lacks \"kind\""},
        {good + "x", "not valid JSON"},
        {replaced("gangway-node-record", "gangway-check"), "kind"},
        {replaced(R"("timed":[[2,)", R"("timed":[[2,1,)"), "\"dumps[0].timed[0]\" of more than 4 numbers"},
        {replaced(R"("timed":[[2,1795000000100000000,0,0])", R"("timed":[[2,1795000000100000000,0])"), "not 4 numbers"},
        {replaced(R"("timed":[[2,)", R"("timed":[[-2,)"), "\"dumps[0].timed[0]\""},
        {replaced(R"("timed":[[2,)", R"("timed":[7,[2,)"), "not a list"},
        {replaced(R"("timed":[[2,)", R"("timed":[[[2],)"), "is not one"},
        {replaced(R"("schema":1)", R"("schema":2)"), "schema"},
        {replaced(R"("job":1234,"job_nodes")", R"("job":-1,"job_nodes")"), "\"job\""},
        {replaced(R"("rank":5,)", R"("rank":"5",)"), "\"tasks[0].rank\""},
        {replaced(R"("rank":5,)", R"("rank":5.0,)"), "\"tasks[0].rank\""},
        {replaced(R"("rank":5,)", R"("rank":5,"rank":6,)"), "twice"},
        {replaced(R"("rank":5,)", ""), "lacks \"rank\" in \"tasks[0]\""},
        {replaced(R"("sign":"gpu_xid")", R"("sign":"xid")"), "\"evidence[0].sign\""},
        {replaced(R"("requeue_on_fail":true)", R"("requeue_on_fail":1)"), "requeue_on_fail"},
        {replaced(R"("tasks":[)", R"("tasks":[1,)"), "not an object"},
        {replaced(R"("entered":[1,2,3])", R"("entered":[1,-2,3])"), "\"dumps[0].entered\""},
        {replaced(R"("entered":[1,2,3])", R"("entered":{})"), "object"},
        {replaced(R"("node":"r1-gpu100","job":1234)", R"("node":"","job":1234)"), "empty"},
    };
    for (const auto& [text, says] : bad) {
        const std::string m = refused_in_one_line([&] { parse_node_record(text); }, text, "node record");
        CHECK_THAT(m, ContainsSubstring(says));
    }
}

TEST_CASE("a node's record: the limits hold, at the value that crosses them", "[postmortem][record][budget]") {
    using gangway::test::cost_of;
    // Each list one over its limit.
    NodeRecord r = sample_record();
    r.tasks.assign(kMaxTasks + 1, sample_task());
    CHECK_THROWS_WITH(parse_node_record(to_json(r)), ContainsSubstring("more than 4096 tasks"));
    r = sample_record();
    r.evidence.assign(kMaxEvidence + 1, r.evidence[0]);
    CHECK_THROWS_WITH(parse_node_record(to_json(r)), ContainsSubstring("more than 256 evidence"));
    r = sample_record();
    r.dumps[0].entered.assign(kMaxSeqs + 1, 7);
    CHECK_THROWS_WITH(parse_node_record(to_json(r)), ContainsSubstring("\"dumps[0].entered\" of more than 4096"));
    r = sample_record();
    r.evidence[0].text = std::string(kMaxEvidenceText + 1, 'x');
    CHECK_THROWS_WITH(parse_node_record(to_json(r)), ContainsSubstring("\"evidence[0].text\" of 201 bytes"));
    r = sample_record();
    r.dumps[0].timed.assign(kMaxTimed + 1, r.dumps[0].timed[0]);
    CHECK_THROWS_WITH(parse_node_record(to_json(r)), ContainsSubstring("\"dumps[0].timed\" of more than 32 collectives"));
    r = sample_record();
    r.dumps.assign(300, RankDump{1, std::vector<std::uint64_t>(kMaxSeqs, 1), std::vector<std::uint64_t>(kMaxSeqs, 1), "", "", {}});
    CHECK_THROWS_WITH(parse_node_record(to_json(r)), ContainsSubstring("sequence numbers in all"));
    // Too big, too deep, too long a string: refused before anything is built.
    CHECK_THROWS_WITH(parse_node_record(std::string(kMaxRecordBytes + 1, ' ')), ContainsSubstring("over the limit"));
    CHECK_THROWS_WITH(parse_node_record(R"({"x":)" + std::string(100, '[')), ContainsSubstring("deeper than 8"));
    CHECK_THROWS_WITH(parse_node_record(R"({"x":")" + std::string(5000, 'a') + "\"}"), ContainsSubstring("string of 5000"));

    // 16 MiB of an unknown key's numbers: the parse keeps none of them (no JSON tree).
    std::string flood = R"({"flood":[)";
    while (flood.size() < kMaxRecordBytes - 16) flood += "0,";
    flood += "0]}";
    const auto c = cost_of([&] { parse_node_record(flood); });
    CHECK(c.refused);  // the record lacks its keys, at its end
    CHECK_THAT(c.error, ContainsSubstring("lacks \"kind\""));
    CHECK(c.peak_bytes < 64 * 1024);
}

TEST_CASE("a node's record: the worst 16 MiB texts stay within 3 n + 1 MiB of heap", "[postmortem][record][budget]") {
    using gangway::test::cost_of;
    auto fill_to = [](std::string head, const std::string& item, const std::string& tail) {
        while (head.size() + item.size() + tail.size() < kMaxRecordBytes) head += item;
        if (head.back() == ',') head.pop_back();
        return head + tail;
    };
    std::string sevens;  // 4,096 sequence numbers, a dump's most
    for (std::size_t i = 0; i < kMaxSeqs; ++i) sevens += i ? ",7" : "7";
    const std::string texts[] = {
        // sequence numbers: refused at the millionth and one
        fill_to(R"({"dumps":[)", R"({"rank":1,"entered":[)" + sevens + R"(],"completed":[],"exception":""},)", "]}"),
        // the longest node names, as many as fit
        fill_to(R"({"job_nodes":[)", "\"" + std::string(255, 'n') + "\",", "]}"),
        // the longest exceptions
        fill_to(R"({"dumps":[)", R"({"rank":1,"entered":[],"completed":[],"exception":")" + std::string(4096, 'e') + "\"},", "]}"),
        // timed collectives, 32 a dump (4 numbers a row count among the 2^20)
        fill_to(R"({"dumps":[)", [] {
            std::string d = R"({"rank":1,"entered":[],"completed":[],"exception":"","timed":[)";
            for (std::size_t i = 0; i < kMaxTimed; ++i) d += i ? ",[0,0,0,0]" : "[0,0,0,0]";
            return d + "]},";
        }(), "]}"),
        // the most tasks (refused at 4,097), then nothing
        fill_to(R"({"tasks":[)", R"({"t_ns":1,"node":"n","job":1,"step":0,"rank":0,"local_rank":0,"pid":1,"wait_status":0,"oom_kills":0,"requeue_on_fail":false},)", "]}"),
    };
    for (const auto& t : texts) {
        REQUIRE(t.size() <= kMaxRecordBytes);
        const auto c = cost_of([&] { parse_node_record(t); });
        INFO(t.substr(0, 80) << "...: " << t.size() << " bytes, " << c.peak_bytes << " bytes of heap, refused: " << c.error);
        CHECK(c.refused);  // none is a whole record
        CHECK(c.peak_bytes <= 3 * t.size() + (1u << 20));
        CHECK(c.error.size() < 400);
    }
}
