// The reports' one schema (lib/fleet/report_schema): what the writers print
// the ingest reads back whole, and anything out of shape is one line.
#include "catch_compat.hpp"

#include <nlohmann/json.hpp>

#include "../../lib/base/error.hpp"
#include "../../lib/fleet/report_schema.hpp"

using namespace gangway;
using namespace gangway::fleet;
using Catch::Matchers::ContainsSubstring;

namespace {

preflight::Report job() {
    using namespace preflight;
    Report r;
    r.id = "42.0.1700000000.00c0ffee";
    r.time = 1700000000;
    r.job_id = "42";
    r.step_id = "0";
    r.mode = "full";
    r.bootstrap = "pmix";
    r.seconds = 1.25;
    r.deadline_s = 60;
    r.expected_bps = 1.25e9;
    r.slow_ratio = 0.5;
    for (int i = 0; i < 3; ++i) {
        NodeResult n;
        n.name = "node" + std::to_string(i);
        n.addr = "198.19.0." + std::to_string(10 + i);
        n.tx_bps = 1.2e9 + i;
        n.rx_bps = i == 2 ? std::optional<double>() : std::optional<double>(1.1e9);
        n.nic_mbps = i == 1 ? -1 : 10000;
        r.nodes.push_back(n);
    }
    r.nodes[2].status = NodeStatus::slow;
    r.nodes[2].reasons = {"sending 0.25 Gb/s against a good peer", "quote \" and \\ and \n"};
    r.links.push_back({0, 1, "bandwidth", true, 1.2e9, std::nullopt, ""});
    r.links.push_back({1, 2, "bandwidth", true, 0.25e9, std::nullopt, ""});
    r.links.push_back({1, 2, "confirm", true, 0.3e9, std::nullopt, ""});
    r.links.push_back({2, 0, "reach", false, std::nullopt, 0.4, "connect timed out"});
    r.stages.push_back({"bandwidth", StageStatus::ok, "3 links", 0.6});
    r.stages.push_back({"nccl", StageStatus::failed, "1 node", 2.5});
    r.gpus.push_back({1, 3, "NVIDIA H100 80GB HBM3", "0000:9a:00.0", "", 5, 16, 53.25, 52.5});
    r.gpus.push_back({2, 0, "NVIDIA H100 80GB HBM3", "0000:18:00.0", "lost", 0, 0, std::nullopt, std::nullopt});
    r.nccl.push_back({0, 8, 1048576.0, 10.5, 18.375, true, ""});
    r.nccl.push_back({0, 8, 1073741824.0, 212.5, 371.75, true, ""});
    r.ports.push_back({2, "mlx5_0/1", 400, true});
    r.ports.push_back({1, "mlx5_1/1", 200, false});
    r.findings = {"node2: version nccl is 2.19.3, the others have 2.21.5", "a finding about no node"};
    r.notes = {"TCP node0 -> node2 failed once"};
    return r;
}

health::Report node_run() {
    using namespace health;
    health::Report r;
    r.id = "node-check.node7.1700000100.deadbeef";
    r.node = "node7";
    r.level = "full";
    r.time = 1700000100;
    r.seconds = 1.5;
    r.verdict = Verdict::failed;
    r.stages = {{"sysfs", preflight::StageStatus::ok, "2 GPU(s)", 0.25}};
    r.records = {{Check::port_rate, "mlx5_0/1", "200", "Gb/s", "400", Status::failed, "mlx5_0/1 rate 200 of 400 Gb/s", true},
                 {Check::port_phys, "mlx5_1/1", "LinkUp", "", "LinkUp", Status::ok, "", false},
                 {Check::cuda, "gpu 0000:17:00.0", "53.1", "GB/s", "", Status::ok, "", false},
                 {Check::gpu_xid, "node", "", "", "", Status::skipped, "no kernel log", false}};
    r.gpus.push_back({0, 0, "NVIDIA H100 80GB HBM3", "0000:17:00.0", "", 5, 16, 53.5, 53.0});
    r.nccl.push_back({0, 2, 268435456.0, 100.5, 100.5, true, ""});
    return r;
}

bool same(const preflight::StageResult& a, const preflight::StageResult& b) {
    return a.name == b.name && a.status == b.status && a.detail == b.detail && a.seconds == b.seconds;
}
bool same(const preflight::GpuRecord& a, const preflight::GpuRecord& b) {
    return a.node == b.node && a.index == b.index && a.name == b.name && a.bus_id == b.bus_id && a.error == b.error &&
           a.pcie_gen == b.pcie_gen && a.pcie_width == b.pcie_width && a.h2d_gbps == b.h2d_gbps && a.d2h_gbps == b.d2h_gbps;
}
bool same(const preflight::NcclRecord& a, const preflight::NcclRecord& b) {
    return a.node == b.node && a.nranks == b.nranks && a.bytes == b.bytes && a.algbw_gbps == b.algbw_gbps &&
           a.busbw_gbps == b.busbw_gbps && a.data_ok == b.data_ok && a.error == b.error;
}
template <class T>
bool all_same(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!same(a[i], b[i])) return false;
    return true;
}

}  // namespace

TEST_CASE("report schema: a job check's report reads back as it was written") {
    const auto r = job();
    const std::string text = fleet::render_job_check(r);
    const auto back = job_check_from_json(parse_report_json(text));
    CHECK(back.id == r.id);
    CHECK(back.time == r.time);
    CHECK(back.job_id == r.job_id);
    CHECK(back.step_id == r.step_id);
    CHECK(back.mode == r.mode);
    CHECK(back.bootstrap == r.bootstrap);
    CHECK(back.seconds == r.seconds);
    CHECK(back.deadline_s == r.deadline_s);
    CHECK(back.expected_bps == r.expected_bps);
    CHECK(back.slow_ratio == r.slow_ratio);
    REQUIRE(back.nodes.size() == r.nodes.size());
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        CHECK(back.nodes[i].name == r.nodes[i].name);
        CHECK(back.nodes[i].addr == r.nodes[i].addr);
        CHECK(back.nodes[i].status == r.nodes[i].status);
        CHECK(back.nodes[i].tx_bps == r.nodes[i].tx_bps);
        CHECK(back.nodes[i].rx_bps == r.nodes[i].rx_bps);
        CHECK(back.nodes[i].nic_mbps == r.nodes[i].nic_mbps);
        CHECK(back.nodes[i].reasons == r.nodes[i].reasons);
    }
    REQUIRE(back.links.size() == r.links.size());
    for (std::size_t i = 0; i < r.links.size(); ++i) {
        CHECK(back.links[i].from == r.links[i].from);
        CHECK(back.links[i].to == r.links[i].to);
        CHECK(back.links[i].stage == r.links[i].stage);
        CHECK(back.links[i].ok == r.links[i].ok);
        CHECK(back.links[i].bps == r.links[i].bps);
        CHECK(back.links[i].ms == r.links[i].ms);
        CHECK(back.links[i].error == r.links[i].error);
    }
    CHECK(all_same(back.stages, r.stages));
    CHECK(all_same(back.gpus, r.gpus));
    CHECK(all_same(back.nccl, r.nccl));
    REQUIRE(back.ports.size() == 2);
    CHECK(back.ports[1].node == 1);
    CHECK(back.ports[1].name == "mlx5_1/1");
    CHECK(back.ports[1].rate_gbps == 200);
    CHECK_FALSE(back.ports[1].usable);
    CHECK(back.findings == r.findings);
    CHECK(back.notes == r.notes);
    // And the same text again: nothing lost or added on the way.
    CHECK(fleet::render_job_check(back) == text);
}

TEST_CASE("report schema: a node check's run reads back as it was written") {
    const auto r = node_run();
    const std::string text = fleet::render_node_check(r);
    const auto back = node_check_from_json(parse_report_json(text));
    CHECK(back.id == r.id);
    CHECK(back.node == r.node);
    CHECK(back.level == r.level);
    CHECK(back.time == r.time);
    CHECK(back.seconds == r.seconds);
    CHECK(back.verdict == r.verdict);
    CHECK(all_same(back.stages, r.stages));
    REQUIRE(back.records.size() == r.records.size());
    for (std::size_t i = 0; i < r.records.size(); ++i) {
        CHECK(back.records[i].check == r.records[i].check);
        CHECK(back.records[i].device == r.records[i].device);
        CHECK(back.records[i].figure == r.records[i].figure);
        CHECK(back.records[i].unit == r.records[i].unit);
        CHECK(back.records[i].expected == r.records[i].expected);
        CHECK(back.records[i].status == r.records[i].status);
        CHECK(back.records[i].confirmed == r.records[i].confirmed);
        CHECK(back.records[i].reason == r.records[i].reason);
    }
    CHECK(all_same(back.gpus, r.gpus));
    CHECK(all_same(back.nccl, r.nccl));
    CHECK(fleet::render_node_check(back) == text);
}

TEST_CASE("report schema: a job check's rows: per-node, per-pair and per-device figures in bytes per second") {
    const std::string text = fleet::render_job_check(job());
    const auto rec = parse_report(text, 1001);
    CHECK(rec.check.id == "u1001-42.0.1700000000.00c0ffee");
    CHECK(rec.check.source == Source::job_check);
    CHECK(rec.check.uid == 1001);
    CHECK(rec.check.time == 1700000000);
    CHECK(rec.check.job_id == "42");
    CHECK(rec.check.verdict == "degraded");
    CHECK(rec.check.nodes == std::vector<std::string>{"node0", "node1", "node2"});
    auto count = [&](Metric m) {
        std::size_t n = 0;
        for (const auto& f : rec.figures) n += f.metric == m;
        return n;
    };
    CHECK(count(Metric::tcp_send) == 3);
    CHECK(count(Metric::tcp_recv) == 2);       // node2's is null
    CHECK(count(Metric::link_bandwidth) == 2); // 0->1, and 1->2 once (its confirmation wins); reach is no bandwidth
    CHECK(count(Metric::gpu_h2d) == 1);        // the lost GPU has none
    CHECK(count(Metric::gpu_d2h) == 1);
    CHECK(count(Metric::nccl_busbw) == 1);     // the sweep's largest size only
    CHECK(count(Metric::port_rate) == 1);      // the unusable port is left out
    for (const auto& f : rec.figures) {
        CHECK(f.check_id == rec.check.id);
        CHECK(f.time == 1700000000);
        CHECK(f.uid == 1001);
        if (f.metric == Metric::link_bandwidth && f.node == "node1") {
            CHECK(f.peer == "node2");
            CHECK(f.value == 0.3e9);
        }
        if (f.metric == Metric::gpu_h2d) {
            CHECK(f.node == "node1");
            CHECK(f.device == "0000:9a:00.0");
            CHECK(f.peer_class == "NVIDIA H100 80GB HBM3");
            CHECK(f.value == 53.25e9);
        }
        if (f.metric == Metric::nccl_busbw) CHECK(f.value == 371.75e9);
        if (f.metric == Metric::port_rate) CHECK(f.value == 50e9);  // 400 Gb/s
        if (f.metric == Metric::tcp_send && f.node == "node0") CHECK(f.peer_class == "10000 Mb/s");
    }
    // Findings: node2's two reasons and the report's two findings, the first naming node2.
    REQUIRE(rec.findings.size() == 4);
    CHECK(rec.findings[2].node == "node2");
    CHECK(rec.findings[3].node.empty());
}

TEST_CASE("report schema: a node check's rows, and an id that one user cannot take from another") {
    const std::string text = fleet::render_node_check(node_run());
    const auto rec = parse_report(text, 0);
    CHECK(rec.check.id == "u0-node-check.node7.1700000100.deadbeef");
    CHECK(rec.check.verdict == "failed");
    CHECK(rec.check.nodes == std::vector<std::string>{"node7"});
    std::size_t ports = 0, h2d = 0, nccl = 0;
    for (const auto& f : rec.figures) {
        ports += f.metric == Metric::port_rate;
        h2d += f.metric == Metric::gpu_h2d;
        nccl += f.metric == Metric::nccl_busbw;
        if (f.metric == Metric::port_rate) CHECK(f.value == 25e9);  // 200 Gb/s
    }
    CHECK(ports == 1);
    CHECK(h2d == 1);
    CHECK(nccl == 1);
    REQUIRE(rec.findings.size() == 1);
    CHECK(rec.findings[0].text == "mlx5_0/1 rate 200 of 400 Gb/s");
    // The same text from a user's file is that user's check, not root's.
    CHECK(parse_report(text, 1001).check.id == "u1001-node-check.node7.1700000100.deadbeef");
    // No id: a hash of the text, the same each time.
    auto r = node_run();
    r.id.clear();
    const std::string t2 = fleet::render_node_check(r);
    CHECK(parse_report(t2, 0).check.id == parse_report(t2, 0).check.id);
    CHECK(parse_report(t2, 0).check.id.rfind("u0-h", 0) == 0);
}

TEST_CASE("report schema: size, depth, count, type, kind and version limits are one line each") {
    auto one_line = [](const std::string& text, const std::string& want, const ReportLimits& lim = {}) {
        try {
            parse_report(text, 1000, lim);
            FAIL("accepted: " << text.substr(0, 80));
        } catch (const Error& e) {
            const std::string m = e.what();
            CHECK(m.find('\n') == std::string::npos);
            CHECK_THAT(m, ContainsSubstring(want));
        }
    };
    const std::string good = fleet::render_job_check(job());
    ReportLimits small;
    small.max_bytes = 100;
    one_line(good, "over the limit of 100", small);
    one_line("{\"kind\": " + std::string(20, '[') + std::string(20, ']') + "}", "deeper than 8");
    ReportLimits few;
    few.max_values = 50;
    one_line(good, "more than 50 JSON values", few);
    ReportLimits narrow;
    narrow.max_nodes = 2;
    one_line(good, "3 nodes, over the limit of 2", narrow);
    ReportLimits short_strings;
    short_strings.max_string = 10;
    one_line(good, "string over 10 bytes", short_strings);
    one_line("{\"kind\": \"gangway-job-check\", \"schema\": 2", "not valid JSON");
    one_line("[1, 2]", "not a JSON object");
    one_line("{\"schema\": \"gangway-preflight/1\"}", "older gangway");
    one_line("{\"kind\": \"something-else\", \"schema\": 1}", "not one gangway writes");
    one_line("{\"kind\": \"gangway-job-check\", \"schema\": 3}", "schema is 3");
    one_line("{\"kind\": \"gangway-job-check\", \"schema\": 2}", "has no report.id");
    auto j = nlohmann::ordered_json::parse(good);
    j["nodes"][1]["tx_bps"] = "fast";
    one_line(j.dump(), "nodes[1].tx_bps is not a number");
    j = nlohmann::ordered_json::parse(good);
    j["links"][0]["to"] = "elsewhere";
    one_line(j.dump(), "names node \"elsewhere\"");
    j = nlohmann::ordered_json::parse(good);
    j["nodes"][0]["status"] = "wonderful";
    one_line(j.dump(), "\"wonderful\", a word this gangway does not know");
    j = nlohmann::ordered_json::parse(good);
    j["time"] = 1e300;
    one_line(j.dump(), "time is not an integer");
    j = nlohmann::ordered_json::parse(fleet::render_node_check(node_run()));
    j["records"][0]["node"] = "another";
    one_line(j.dump(), "about another node");
    // Node names as SLURM spells them, nothing else (issue 31, item 11): no
    // newline, NUL, space or slash reaches the store.
    for (const std::string& bad : {std::string("r01\nr02"), std::string("r01\0", 4), std::string("a b"), std::string("../x"),
                                  std::string(""), std::string(256, 'n')}) {
        j = nlohmann::ordered_json::parse(good);
        j["nodes"][0]["name"] = bad;
        one_line(j.dump(), "is not a node name");
        j = nlohmann::ordered_json::parse(fleet::render_node_check(node_run()));
        j["node"] = bad;
        one_line(j.dump(), "is not a node name");
    }
    // The per-report caps on figures and findings (issue 31, item 8).
    ReportLimits few_series;
    few_series.max_series = 3;
    one_line(good, "figures, over the limit of 3 a report", few_series);
    ReportLimits few_findings;
    few_findings.max_findings = 1;
    one_line(good, "findings, over the limit of 1 a report", few_findings);
    // An unknown key beyond the schema's count is refused before it is kept.
    j = nlohmann::ordered_json::parse(good);
    j["extra"] = 1;
    one_line(j.dump(), "more than 22 keys");
}

TEST_CASE("report schema: the writers' objects fit the parse's key cap") {
    // kMaxReportKeys is the widest object the writers print: both reports read back.
    const auto a = nlohmann::ordered_json::parse(fleet::render_job_check(job()));
    const auto b = nlohmann::ordered_json::parse(fleet::render_node_check(node_run()));
    CHECK(a.size() == kMaxReportKeys);
    CHECK(b.size() <= kMaxReportKeys);
    CHECK_NOTHROW(parse_report(fleet::render_job_check(job()), 1000));
    CHECK_NOTHROW(parse_report(fleet::render_node_check(node_run()), 0));
}
