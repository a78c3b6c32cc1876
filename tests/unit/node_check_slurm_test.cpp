// What the node check does with its records (lib/health): the state between
// runs, the repeat rule, the verdict, and SLURM (drain, resume, or leave the
// node alone), and the records as JSON.
#include "catch_compat.hpp"

#include "../../lib/base/error.hpp"
#include "../../lib/fleet/report_schema.hpp"
#include "../../lib/health/confirm.hpp"
#include "../../lib/health/judge.hpp"
#include "../../lib/health/render.hpp"
#include "../../lib/health/slurm_action.hpp"
#include "../../lib/health/state.hpp"
#include "../../lib/sys/stages/stage.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

using namespace gangway;
using namespace gangway::health;
using Catch::Matchers::ContainsSubstring;

namespace {

Record bad(Check c, const std::string& dev, const std::string& reason) {
    return {c, dev, "8", "lanes", "16", Status::failed, reason, false};
}
Record good(Check c, const std::string& dev) { return {c, dev, "16", "lanes", "16", Status::ok, "", false}; }

}  // namespace

TEST_CASE("the state file: written and read back; anything else refused") {
    State s;
    s.time = 1700000000;
    s.healthy_runs = 3;
    s.drained = "gangway: gpu 0000:17:00.0 PCIe x8 of x16";
    s.kmsg_seq = 4242;
    s.counters = {{"mlx5_0/1 link_downed", 3}, {"mlx5_0/1 symbol_error", 0}};
    s.failed = {{Check::pcie_width, "gpu 0000:17:00.0"}, {Check::port_errors, "mlx5_0/1 link_downed"}};
    const auto text = render_state(s);
    const auto back = parse_state(text);
    CHECK(back.time == s.time);
    CHECK(back.healthy_runs == 3);
    CHECK(back.drained == s.drained);
    CHECK(back.kmsg_seq == 4242u);
    CHECK(back.counters == s.counters);
    CHECK(back.failed == s.failed);
    CHECK(render_state(back) == text);
    CHECK(parse_state(render_state(State{})).time == 0);
    CHECK_THROWS_WITH(parse_state("hello\n"), ContainsSubstring("is not a node check state file"));
    CHECK_THROWS_WITH(parse_state("gangway-node-check-state 1\ntime soon\n"), ContainsSubstring("line 2 (time) is malformed"));
    CHECK_THROWS_WITH(parse_state("gangway-node-check-state 1\nfailed no-such-check x\n"), ContainsSubstring("malformed"));
    CHECK_THROWS(parse_state("gangway-node-check-state 1\nsurprise 1\n"));
    CHECK(parse_check("pcie-width") == Check::pcie_width);
    CHECK_FALSE(parse_check("pcie"));
}

TEST_CASE("the repeat rule: measured again at once, or failed on the last run; an Xid is evidence itself") {
    std::vector<Record> rs{bad(Check::pcie_width, "gpu a", "x"), bad(Check::port_errors, "mlx5_0/1 link_downed", "y"),
                           bad(Check::port_state, "mlx5_1/1", "z"), bad(Check::gpu_xid, "gpu b", "w"),
                           good(Check::pcie_width, "gpu c")};
    State prev;
    // First run: only the re-measured sysfs failure and the Xid count.
    confirm(rs, {{Check::pcie_width, "gpu a"}, {Check::port_errors, "mlx5_0/1 link_downed"}}, prev, 1000, 3600);
    CHECK(rs[0].confirmed);
    CHECK_FALSE(rs[1].confirmed);  // counter growth cannot be re-measured at once
    CHECK_FALSE(rs[2].confirmed);  // the re-test found it fine
    CHECK(rs[3].confirmed);
    CHECK_FALSE(rs[4].confirmed);
    CHECK(verdict(rs, false) == Verdict::failed);
    // The next run: the counter grew again, the port failed again; recent enough.
    prev.time = 1000;
    prev.failed = {{Check::port_errors, "mlx5_0/1 link_downed"}, {Check::port_state, "mlx5_1/1"}};
    std::vector<Record> next{bad(Check::port_errors, "mlx5_0/1 link_downed", "y"), bad(Check::port_state, "mlx5_1/1", "z")};
    confirm(next, {}, prev, 1300, 3600);
    CHECK(next[0].confirmed);
    CHECK(next[1].confirmed);
    // Too long ago (the node was down for a day): new evidence again.
    for (auto& r : next) r.confirmed = false;
    confirm(next, {}, prev, 1000 + 7200, 3600);
    CHECK_FALSE(next[0].confirmed);
    CHECK(verdict(next, false) == Verdict::pending);
}

TEST_CASE("verdicts and the healthy-run count") {
    std::vector<Record> ok{good(Check::pcie_width, "gpu a")};
    CHECK(verdict(ok, false) == Verdict::healthy);
    CHECK(verdict(ok, true) == Verdict::inconclusive);
    State prev;
    prev.healthy_runs = 4;
    prev.drained = "gangway: x";
    prev.kmsg_seq = 9;
    prev.counters = {{"a", 1}};
    auto s = next_state(prev, ok, Verdict::healthy, 50, std::nullopt);
    CHECK(s.healthy_runs == 5);
    CHECK(s.time == 50);
    CHECK(s.drained == "gangway: x");
    CHECK(s.kmsg_seq == 9u);
    CHECK(s.counters == prev.counters);  // not read this run: the baseline stays
    CHECK(next_state(prev, ok, Verdict::inconclusive, 50, std::nullopt).healthy_runs == 4);
    std::vector<Record> failing{bad(Check::port_state, "mlx5_1/1", "z")};
    s = next_state(prev, failing, Verdict::pending, 60, std::map<std::string, std::uint64_t>{{"a", 2}});
    CHECK(s.healthy_runs == 0);
    CHECK(s.failed.count({Check::port_state, "mlx5_1/1"}));
    CHECK(s.counters.at("a") == 2);
}

TEST_CASE("scontrol show node: state and reason, either layout") {
    const std::string multi =
        "NodeName=node11 Arch=x86_64 CoresPerSocket=4\n"
        "   CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=0.00\n"
        "   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
        "   Reason=gangway: gpu 0000:17:00.0 PCIe x8 of x16 [root@2026-11-25T10:00:00]\n";
    auto n = parse_show_node(multi);
    CHECK(n.name == "node11");
    CHECK(n.state == "IDLE+DRAIN");
    CHECK(n.reason == "gangway: gpu 0000:17:00.0 PCIe x8 of x16");
    CHECK(n.drain());
    CHECK_FALSE(n.down());
    n = parse_show_node("NodeName=node08 Arch=x86_64 State=DOWN* CPUTot=4 Reason=Not responding [slurm@2026-11-25T10:00:00]\n");
    CHECK(n.down());
    CHECK_FALSE(n.drain());
    CHECK(n.reason == "Not responding");
    n = parse_show_node("NodeName=node09 State=MIXED NextState=IDLE CPUTot=4\n");
    CHECK(n.state == "MIXED");
    CHECK(n.reason.empty());
    CHECK_FALSE(n.drain());
    CHECK(parse_show_node("NodeName=n State=DOWN+DRAIN+NOT_RESPONDING Reason=maint\n").drain());
    CHECK_THROWS_WITH(parse_show_node("Node node99 not found\n"), ContainsSubstring("scontrol named no node"));
}

TEST_CASE("the drain reason: gangway's prefix, the first confirmed failure, quiet characters, bounded") {
    std::vector<Record> rs{bad(Check::pcie_width, "gpu a", "gpu 0000:17:00.0 PCIe x8 of x16"),
                           bad(Check::port_state, "mlx5_1/1", "mlx5_1/1 port DOWN, not ACTIVE"), bad(Check::gpu_ecc, "gpu b", "not confirmed")};
    rs[0].confirmed = rs[1].confirmed = true;
    CHECK(drain_reason(rs) == "gangway: gpu 0000:17:00.0 PCIe x8 of x16 (+1 more)");
    rs[1].confirmed = false;
    CHECK(drain_reason(rs) == "gangway: gpu 0000:17:00.0 PCIe x8 of x16");
    rs[0].reason = "quote\" dollar$ back`tick\\ new\nline " + std::string(300, 'x');
    const auto r = drain_reason(rs);
    CHECK(r.size() <= kMaxReason);
    CHECK(r.find_first_of("\"$`\\\n") == std::string::npos);
    CHECK(drain_reason({good(Check::pcie_width, "g")}).empty());
}

TEST_CASE("drain, resume or leave alone") {
    std::vector<Record> failing{bad(Check::pcie_width, "gpu a", "gpu 0000:17:00.0 PCIe x8 of x16")};
    failing[0].confirmed = true;
    const std::string ours = "gangway: gpu 0000:17:00.0 PCIe x8 of x16";
    SlurmNode idle{"n1", "IDLE", ""}, mixed{"n1", "MIXED", ""}, admin{"n1", "IDLE+DRAIN", "bad DIMM, ticket 42"},
        other{"n1", "IDLE+DRAIN", "NHC: check_fs_mount failed"}, down{"n1", "DOWN*", "Not responding"},
        epilog{"n1", "IDLE+DRAIN", "gangway: slow sending 0.4 Gb/s (job 42)"}, drained_by_us{"n1", "IDLE+DRAIN", ours};

    auto d = decide(idle, Verdict::failed, failing, 0, 2, "");
    CHECK(d.action == Action::drain);
    CHECK(d.reason == ours);
    CHECK(decide(mixed, Verdict::failed, failing, 0, 2, "").action == Action::drain);
    // Someone else's drain, a down node: never changed.
    for (const auto& n : {admin, other, down, epilog}) {
        d = decide(n, Verdict::failed, failing, 0, 2, "");
        CHECK(d.action == Action::none);
        CHECK_THAT(d.why, ContainsSubstring("not gangway's to change"));
        CHECK(decide(n, Verdict::healthy, {}, 5, 2, "").action == Action::none);  // and never resumed
    }
    // Ours: kept while failing, resumed after resume_after healthy runs.
    CHECK(decide(drained_by_us, Verdict::failed, failing, 0, 2, ours).action == Action::none);
    CHECK(decide(drained_by_us, Verdict::healthy, {}, 1, 2, ours).action == Action::none);
    CHECK(decide(drained_by_us, Verdict::pending, {}, 0, 2, ours).action == Action::none);
    CHECK(decide(drained_by_us, Verdict::inconclusive, {}, 5, 2, ours).action == Action::none);
    d = decide(drained_by_us, Verdict::healthy, {}, 2, 2, ours);
    CHECK(d.action == Action::resume);
    CHECK_THAT(d.why, ContainsSubstring("2 healthy runs"));
    // An admin resumed our drain, or rewrote its reason: it is no longer ours.
    CHECK(decide(idle, Verdict::healthy, {}, 3, 2, ours).action == Action::forget);
    SlurmNode rewritten{"n1", "IDLE+DRAIN", ours + " - looking, bob"};
    CHECK(decide(rewritten, Verdict::healthy, {}, 3, 2, ours).action == Action::forget);
    // ... and a failure after an admin resumed it drains again.
    CHECK(decide(idle, Verdict::failed, failing, 0, 2, ours).action == Action::drain);
    // SLURM is asked only when there may be something to do.
    CHECK(needs_slurm(Verdict::failed, 0, 2, ""));
    CHECK_FALSE(needs_slurm(Verdict::healthy, 9, 2, ""));
    CHECK_FALSE(needs_slurm(Verdict::pending, 0, 2, ours));
    CHECK_FALSE(needs_slurm(Verdict::healthy, 1, 2, ours));
    CHECK(needs_slurm(Verdict::healthy, 2, 2, ours));
    CHECK_FALSE(needs_slurm(Verdict::inconclusive, 9, 2, ours));
}

TEST_CASE("records as JSON and as one line") {
    health::Report r;
    r.node = "node08";
    r.level = "quick";
    r.time = 1700000000;
    r.verdict = Verdict::failed;
    r.stages = {{"sysfs", preflight::StageStatus::ok, "2 GPU(s)", 0.01}, {"nvml", preflight::StageStatus::aborted, "did not finish within 4.0 s", 4}};
    r.records = {bad(Check::pcie_width, "gpu 0000:17:00.0", "gpu 0000:17:00.0 PCIe x8 of x16"),
                 {Check::port_phys, "mlx5_1/1", "Polling", "", "LinkUp", Status::failed, "mlx5_1/1 physical link Polling", false}};
    r.records[0].confirmed = true;
    const auto js = fleet::render_node_check(r);
    CHECK(std::count(js.begin(), js.end(), '\n') == 1);  // one line, for a log or a spool
    const auto j = nlohmann::json::parse(js);
    CHECK(j["kind"] == "gangway-node-check");
    CHECK(j["schema"] == 1);
    CHECK(j["records"][0] == nlohmann::json::parse(R"({"node": "node08", "check": "pcie-width", "device": "gpu 0000:17:00.0",
        "figure": 8, "unit": "lanes", "expected": 16, "status": "failed", "confirmed": true, "reason": "gpu 0000:17:00.0 PCIe x8 of x16"})"));
    CHECK(j["records"][1]["figure"] == "Polling");
    CHECK(j["records"][1]["unit"] == "");
    CHECK(j["records"][1]["expected"] == "LinkUp");
    CHECK(j["verdict"] == "failed");
    CHECK(failure_line(r.records, true) == "gpu 0000:17:00.0 PCIe x8 of x16");
    CHECK(failure_line(r.records, false) == "gpu 0000:17:00.0 PCIe x8 of x16; mlx5_1/1 physical link Polling");
    CHECK(unfinished_line(r.stages) == "nvml: did not finish within 4.0 s");
    CHECK_THAT(render_table(r), ContainsSubstring("FAILED: gpu 0000:17:00.0 PCIe x8 of x16"));
    CHECK_THAT(render_table(r), ContainsSubstring("failed once: mlx5_1/1 physical link Polling"));
}

TEST_CASE("an internal error, however often it repeats, never drains a node") {
    // The node check's stages run under sys::with_deadline; what throws there is
    // gangway's own fault. Run by run as run_node_check does it: records, the
    // repeat rule against the previous run's state, the verdict, and SLURM.
    const SlurmNode idle{"n1", "IDLE", ""};
    State previous;
    std::int64_t now = 1700000000;
    for (int run = 0; run < 5; ++run, now += 60) {
        const auto o = sys::with_deadline("cuda", 5, []() -> sys::StageOutcome { throw Error("nvmlInit: out of memory"); });
        auto records = stage_records(Check::cuda, o.result, o.findings, o.gpus);
        confirm(records, {}, previous, now, 3600);
        const Verdict v = verdict(records, o.result.status == preflight::StageStatus::aborted);
        CHECK(v == Verdict::inconclusive);
        CHECK(decide(idle, v, records, previous.healthy_runs, 2, "").action == Action::none);
        previous = next_state(previous, records, v, now, std::nullopt);
    }
}
