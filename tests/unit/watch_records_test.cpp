// The running job's records as text (lib/watch/pace_json): a rank's pace
// report, the user's own file, and a node's progress record, which crosses
// the network. Both parsers refuse what the format does not allow, and what
// is written reads back the same.
#include "catch_compat.hpp"

#include "../../lib/base/error.hpp"
#include "../../lib/watch/pace_json.hpp"

using namespace gangway;
using namespace gangway::watch;
using Catch::Matchers::ContainsSubstring;

namespace {
const char* kPace =
    R"({"kind":"gangway-rank-pace","schema":1,"rank":5,"time_ns":1796000000000000000,)"
    R"("groups":{"0":{"entered":812,"completed":811,"enters":[[810,1796000000000000100],[811,1796000000100000000],[812,0]]},)"
    R"("1":{"entered":3,"completed":3,"enters":[]}}})";

NodeProgress a_record() {
    NodeProgress p;
    p.job = 42, p.step = 0, p.node = "node10", p.uid = 1000, p.t_ns = 1796000000200000000, p.interval_ns = 10'000'000'000;
    p.on_hang = OnHang::cancel;
    p.ranks = {4, 5};
    p.paces.push_back(parse_pace(kPace));
    postmortem::TaskSample s;
    s.t_ns = 1796000000000000000, s.rank = 5, s.state = postmortem::TaskState::stopped, s.cpu_ns = 7, s.wait_ns = 3, s.procs = 2;
    p.samples.push_back(s);
    postmortem::PressureSample ps;
    ps.t_ns = s.t_ns, ps.cpu = 1234, ps.memory = 0, ps.io = 10000;
    p.pressure.push_back(ps);
    return p;
}
}  // namespace

TEST_CASE("a rank's pace report as the hook writes it") {
    const Pace p = parse_pace(kPace);
    CHECK(p.rank == 5);
    CHECK(p.t_ns == 1796000000000000000);
    REQUIRE(p.groups.size() == 2);
    CHECK(p.groups[0].group == "0");
    CHECK(p.groups[0].entered == 812);
    CHECK(p.groups[0].completed == 811);
    // A collective the recorder had no time for (0) is left out.
    REQUIRE(p.groups[0].enters.size() == 2);
    CHECK(p.groups[0].enters[1].seq == 811);
    CHECK(p.groups[0].enters[1].t_ns == 1796000000100000000);
    CHECK(parse_pace(pace_json(p)).groups[0].enters.size() == 2);
    CHECK(pace_json(parse_pace(pace_json(p))) == pace_json(p));
}

TEST_CASE("a pace report the format does not allow is refused in one line") {
    const auto refused = [](const std::string& text, const char* why) {
        CHECK_THROWS_WITH(parse_pace(text), ContainsSubstring(why));
    };
    refused("[]", "is not a JSON object");
    refused(R"({"kind":"gangway-rank-dump","rank":1})", "not a gangway pace report");
    refused(R"({"kind":"gangway-rank-pace","rank":-1,"time_ns":1,"groups":{}})", "\"rank\"");
    refused(R"({"kind":"gangway-rank-pace","rank":1,"time_ns":1,"groups":[]})", "\"groups\"");
    refused(R"({"kind":"gangway-rank-pace","rank":1,"time_ns":1,"groups":{"0":{"entered":1,"completed":2}}})",
            "completed more than it entered");
    refused(R"({"kind":"gangway-rank-pace","rank":1,"time_ns":1,"groups":{"0":{"entered":9,"completed":2,"enters":[[3,5],[3,6]]}}})",
            "increasing order");
    refused(R"({"kind":"gangway-rank-pace","rank":1,"time_ns":1,"groups":{"0":{"entered":2,"completed":2,"enters":[[3,5]]}}})",
            "after the newest entered");
    refused(R"({"kind":"gangway-rank-pace","rank":1,"time_ns":1,"groups":{"a\nb":{"entered":2,"completed":2}}})",
            "printable bytes");
    std::string nine = R"({"kind":"gangway-rank-pace","rank":1,"time_ns":1,"groups":{)";
    for (int i = 0; i < 9; ++i) nine += (i ? "," : "") + std::string("\"g") + std::to_string(i) + "\":{\"entered\":1,\"completed\":1}";
    refused(nine + "}}", "more than 8");
    refused(std::string(kMaxPaceBytes + 1, ' '), "bytes, more than");
    std::string deep = R"({"kind":"gangway-rank-pace","rank":1,"time_ns":1,"groups":{"0":{"entered":1,"completed":1,"enters":[[[[[[1]]]]]]}}})";
    refused(deep, "nested deeper");
}

TEST_CASE("a node's progress record reads back as it was written") {
    const NodeProgress p = a_record();
    const std::string text = progress_json(p);
    const NodeProgress q = parse_progress(text);
    CHECK(q.job == 42);
    CHECK(q.node == "node10");
    CHECK(q.uid == 1000);
    CHECK(q.on_hang == OnHang::cancel);
    CHECK(q.ranks == std::vector<std::uint32_t>{4, 5});
    REQUIRE(q.paces.size() == 1);
    CHECK(q.paces[0].groups[0].entered == 812);
    REQUIRE(q.samples.size() == 1);
    CHECK(q.samples[0].state == postmortem::TaskState::stopped);
    CHECK(q.samples[0].wait_ns == 3);
    REQUIRE(q.pressure.size() == 1);
    CHECK(q.pressure[0].io == 10000);
    CHECK(progress_json(q) == text);
}

TEST_CASE("a progress record that points outside its node is refused") {
    // A rank's report for a rank root does not place on the node (the user's
    // word about another node's rank) never reaches the judgement.
    NodeProgress p = a_record();
    p.ranks = {4};
    CHECK_THROWS_WITH(parse_progress(progress_json(p)), ContainsSubstring("not one of its node's ranks"));
    p = a_record();
    p.node = "node 10";
    CHECK_THROWS_WITH(parse_progress(progress_json(p)), ContainsSubstring("not a node name"));
    std::string text = progress_json(a_record());
    const auto at = text.find("\"cancel\"");
    REQUIRE(at != std::string::npos);
    CHECK_THROWS_WITH(parse_progress(text.replace(at, 8, "\"drain\"")), ContainsSubstring("on_hang"));
    text = progress_json(a_record());
    const auto st = text.find("\"T\"");
    REQUIRE(st != std::string::npos);
    CHECK_THROWS_WITH(parse_progress(text.replace(st, 3, "\"Q\"")), ContainsSubstring("unknown task state"));
    CHECK(parse_on_hang("requeue") == OnHang::requeue);
    CHECK_FALSE(parse_on_hang("off"));
}
