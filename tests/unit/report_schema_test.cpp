// The reports' one schema (lib/fleet/report_schema): what the writers print
// the ingest reads back whole, and anything out of shape is one line.
#include "catch_compat.hpp"

#include <nlohmann/json.hpp>

#include "../../lib/base/error.hpp"
#include "../../lib/fleet/report_schema.hpp"
#include "cost_meter.hpp"

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

namespace {

// parse_report (the one pass) and parse_report_tree (the whole tree) on the
// same text: the same rows, or the same one-line refusal.
void same_either_way(const std::string& in, const ReportLimits& lim = {}) {
    INFO(in.substr(0, 160));
    std::string e1, e2;
    CheckRecord a, b;
    try {
        a = parse_report(in, 1000, lim);
    } catch (const Error& e) {
        e1 = e.what();
    }
    try {
        b = parse_report_tree(in, 1000, lim);
    } catch (const Error& e) {
        e2 = e.what();
    }
    CHECK(e1 == e2);
    if (!e1.empty() || !e2.empty()) return;
    CHECK(a.check.id == b.check.id);
    CHECK(a.check.source == b.check.source);
    CHECK(a.check.time == b.check.time);
    CHECK(a.check.job_id == b.check.job_id);
    CHECK(a.check.verdict == b.check.verdict);
    CHECK(a.check.nodes == b.check.nodes);
    REQUIRE(a.figures.size() == b.figures.size());
    for (std::size_t i = 0; i < a.figures.size(); ++i) {
        const Figure &x = a.figures[i], &y = b.figures[i];
        CHECK((x.check_id == y.check_id && x.time == y.time && x.source == y.source && x.uid == y.uid && x.node == y.node &&
               x.device == y.device && x.peer == y.peer && x.peer_class == y.peer_class && x.metric == y.metric &&
               x.value == y.value && x.daily == y.daily && x.count == y.count));
    }
    REQUIRE(a.findings.size() == b.findings.size());
    for (std::size_t i = 0; i < a.findings.size(); ++i)
        CHECK((a.findings[i].check_id == b.findings[i].check_id && a.findings[i].node == b.findings[i].node &&
               a.findings[i].text == b.findings[i].text));
}

// `j` with its keys in the order `first` names them, then the rest.
nlohmann::ordered_json keys_first(const nlohmann::ordered_json& j, std::initializer_list<const char*> first) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const char* k : first)
        if (j.contains(k)) out[k] = j.at(k);
    for (const auto& [k, v] : j.items())
        if (!out.contains(k)) out[k] = v;
    return out;
}

}  // namespace

TEST_CASE("report schema: the one-pass parse gives the tree's rows, or its refusal, whatever the report's shape") {
    const std::string written = render_job_check(job());
    const auto base = nlohmann::ordered_json::parse(written);
    same_either_way(written);                         // as the writer prints it: all taken in one pass
    same_either_way(render_node_check(node_run()));  // a node check: nothing taken
    same_either_way(base.dump());                     // on one line
    // Orders a writer does not make: the kind last (nothing taken before it
    // is known), links and GPUs before the nodes they name.
    same_either_way(keys_first(base, {"schema", "id", "time", "nodes", "links", "gpus", "nccl", "ports"}).dump());
    same_either_way(keys_first(base, {"kind", "schema", "links", "nodes"}).dump());
    same_either_way(keys_first(base, {"kind", "schema", "gpus", "ports", "nodes"}).dump());
    same_either_way(keys_first(base, {"kind", "nodes", "ports", "nccl", "gpus", "links"}).dump());
    // Elements the tree refuses, at the start, in the middle and at the end
    // of what the one pass had taken: the same line, from the same element.
    auto with = [&](auto&& change) {
        auto j = base;
        change(j);
        same_either_way(j.dump());
    };
    with([](auto& j) { j["gpus"][1]["index"] = "three"; });
    with([](auto& j) { j["gpus"][0]["node"] = "node9"; });
    with([](auto& j) { j["nodes"][2]["name"] = "node0"; });
    with([](auto& j) { j["nodes"][1]["name"] = "bad name"; });
    with([](auto& j) { j["nodes"][0]["reasons"] = {1}; });
    with([](auto& j) { j["links"][3]["to"] = "node7"; });
    with([](auto& j) { j["links"][2] = 5; });
    with([](auto& j) { j["ports"][1].erase("usable"); });
    with([](auto& j) { j["nccl"].push_back(nlohmann::ordered_json::array()); });
    with([](auto& j) { j.erase("ports"); });
    with([](auto& j) { j["ports"] = nlohmann::ordered_json::object(); });
    with([](auto& j) { j["time"] = "soon"; });                 // a top-level field after the arrays were taken
    with([](auto& j) { j["schema"] = 1; });
    with([](auto& j) { j["stages"][0]["status"] = "maybe"; });
    with([](auto& j) { j["findings"].push_back(7); });
    with([](auto& j) { j["kind"] = "gangway-node-check"; });
    // The node cap counts the nodes taken: refused alike.
    ReportLimits few;
    few.max_nodes = 2;
    same_either_way(written, few);
    // Not JSON after the nodes were taken: the parse's own line.
    same_either_way(written.substr(0, written.find("\"links\"")) + "\"links\": [}");
}

TEST_CASE("report schema: a large job check's JSON is never held whole: its elements become rows as they are read") {
    // 256 nodes of 8 GPUs and 8 ports, links in a ring: as a job check's
    // report is written (635 KB). Parsed into a tree first, then rows, it
    // took 5.6 bytes of heap a byte of text at its peak (4.6 with the rows'
    // room reserved); read element by element into rows it takes 3.7, the
    // rows and the report's structs (issue 34: a 2,048-node report's ingest
    // peaked at 60 MB resident, now 44).
    preflight::Report r = job();
    r.nodes.clear(), r.links.clear(), r.gpus.clear(), r.nccl.clear(), r.ports.clear();
    constexpr unsigned kNodes = 256;
    for (unsigned i = 0; i < kNodes; ++i) {
        preflight::NodeResult n;
        n.name = "gpu" + std::to_string(10000 + i);
        n.addr = "198.19.1." + std::to_string(i % 250);
        n.tx_bps = 1.2e9, n.rx_bps = 1.1e9, n.nic_mbps = 10000;
        r.nodes.push_back(n);
        r.links.push_back({i, (i + 1) % kNodes, "bandwidth", true, 1.2e9 + i, std::nullopt, ""});
        for (int g = 0; g < 8; ++g) {
            r.gpus.push_back({i, g, "NVIDIA H100 80GB HBM3", "0000:1" + std::to_string(g) + ":00.0", "", 5, 16, 53.25, 52.5});
            r.ports.push_back({i, "mlx5_" + std::to_string(g) + "/1", 400, true});
        }
        r.nccl.push_back({i, 8, 1073741824.0, 212.5, 371.75, true, ""});
    }
    const std::string text = render_job_check(r);
    CheckRecord rec;
    const auto c = gangway::test::cost_of([&] { rec = parse_report(text, 1000); });
    REQUIRE_FALSE(c.refused);
    CHECK(rec.figures.size() == kNodes * (2 + 1 + 16 + 1 + 8));
    INFO(c.peak_bytes << " bytes of heap at most for " << text.size() << " bytes of report");
    CHECK(c.peak_bytes <= 4 * text.size());
}
