#include "catch_compat.hpp"

#include <cmath>
#include <limits>

#include "../../lib/base/saturate.hpp"
#include "../../lib/fleet/report_schema.hpp"
#include "../../lib/preflight/report.hpp"

#include <nlohmann/json.hpp>

using namespace gangway::preflight;

namespace {

Report sample(NodeStatus third = NodeStatus::ok) {
    Report r;
    r.job_id = "42";
    r.step_id = "0";
    r.mode = "quick";
    r.bootstrap = "tcp";
    r.expected_bps = 1.25e9;
    r.slow_ratio = 0.5;
    r.seconds = 1.5;
    for (int i = 0; i < 4; ++i) {
        NodeResult n;
        n.name = (i < 2 ? "node0" : "node") + std::to_string(8 + i);
        n.addr = "198.19.0." + std::to_string(11 + i);
        n.tx_bps = 1.2e9;
        n.rx_bps = 1.2e9;
        n.nic_mbps = 10000;
        r.nodes.push_back(n);
    }
    r.nodes[2].status = third;
    if (third != NodeStatus::ok) r.nodes[2].reasons.push_back("sending 0.25 Gb/s against a good peer");
    for (unsigned i = 0; i < 4; ++i) {
        LinkResult l;
        l.from = i;
        l.to = (i + 1) % 4;
        l.stage = "bandwidth";
        l.bps = (i == 2 || l.to == 2) && third == NodeStatus::slow ? 0.25e9 : 1.2e9;
        r.links.push_back(l);
    }
    r.stages.push_back({"bandwidth", StageStatus::ok, "4 links", 0.6});
    return r;
}

}  // namespace

TEST_CASE("verdicts and exit codes tell healthy, degraded and unreachable apart") {
    CHECK(verdict(sample()) == Verdict::ok);
    CHECK(exit_code(verdict(sample())) == 0);
    CHECK(verdict(sample(NodeStatus::slow)) == Verdict::degraded);
    CHECK(exit_code(Verdict::degraded) == 3);
    CHECK(verdict(sample(NodeStatus::mismatch)) == Verdict::degraded);
    for (auto s : {NodeStatus::unreachable, NodeStatus::missing, NodeStatus::lost}) {
        CHECK(verdict(sample(s)) == Verdict::unreachable);
        CHECK(exit_code(verdict(sample(s))) == 4);
    }
    auto r = sample();
    r.findings.push_back("link node08 -> node09 slow");
    CHECK(verdict(r) == Verdict::degraded);
    CHECK(bad_nodes(sample(NodeStatus::slow)) == std::vector<std::string>{"node10"});
}

TEST_CASE("the table names each node with its status, figures and reason") {
    const auto t = render_table(sample(NodeStatus::slow));
    CHECK(t.find("degraded") != std::string::npos);
    CHECK(t.find("node10") != std::string::npos);
    CHECK(t.find("slow") != std::string::npos);
    CHECK(t.find("against a good peer") != std::string::npos);
    CHECK(t.find("9.60") != std::string::npos);   // 1.2e9 B/s in Gb/s
    CHECK(t.find("10.00") != std::string::npos);  // expected
}

TEST_CASE("the JSON report carries nodes, links, stages and the verdict") {
    auto r = sample(NodeStatus::unreachable);
    r.nodes[0].reasons.push_back("quote \" and backslash \\ and\nnewline");
    r.deadline_s = 60;
    const auto j = nlohmann::json::parse(gangway::fleet::render_job_check(r));
    CHECK(j["deadline_s"] == 60);
    r.gpus.push_back({1, 3, "NVIDIA H100 80GB HBM3", "0000:9a:00.0", "", 5, 16, 53.25, std::nullopt});
    r.ports.push_back({2, "mlx5_0/1", 400, true});
    r.nccl.push_back({0, 8, 1073741824.0, 212.4, 371.7, true, ""});
    const auto j2 = nlohmann::json::parse(gangway::fleet::render_job_check(r));
    CHECK(j2["gpus"][0] == nlohmann::json::parse(R"({"node": "node09", "index": 3, "name": "NVIDIA H100 80GB HBM3", "bus_id": "0000:9a:00.0",
        "pcie_gen": 5, "pcie_width": 16, "h2d_gbps": 53.25, "d2h_gbps": null, "error": ""})"));
    CHECK(j2["ports"][0] == nlohmann::json::parse(R"({"node": "node10", "name": "mlx5_0/1", "rate_gbps": 400, "usable": true})"));
    CHECK(j2["nccl"][0] == nlohmann::json::parse(R"({"node": "node08", "ranks": 8, "bytes": 1073741824, "algbw_gbps": 212.4,
        "busbw_gbps": 371.7, "data_ok": true, "error": ""})"));
    CHECK(j["gpus"].is_array());  // none: an empty list, not a missing key
    CHECK(j["gpus"].empty());
    CHECK(j["kind"] == "gangway-job-check");
    CHECK(j["schema"] == 2);
    CHECK(j["verdict"] == "unreachable");
    CHECK(j["exit_code"] == 4);
    CHECK(j["nodes"][2]["name"] == "node10");
    CHECK(j["nodes"][2]["addr"] == "198.19.0.13");
    CHECK(j["nodes"][2]["status"] == "unreachable");
    CHECK(j["links"][0]["from"] == "node08");
    CHECK(j["links"][0]["to"] == "node09");
    CHECK(j["links"][0]["stage"] == "bandwidth");
    CHECK(j["links"][0]["ok"] == true);
    CHECK(j["links"][0]["bps"] == 1.2e9);
    CHECK(j["nodes"][0]["reasons"][0] == "quote \" and backslash \\ and\nnewline");
    CHECK(gangway::fleet::render_job_check(r).find("quote \\\" and backslash \\\\ and\\nnewline") != std::string::npos);
}

TEST_CASE("stage statuses keep their words in the table, the JSON and on the wire") {
    for (auto s : {StageStatus::ok, StageStatus::failed, StageStatus::skipped, StageStatus::aborted})
        CHECK(parse_stage_status(to_string(s)) == s);
    CHECK(std::string(to_string(StageStatus::aborted)) == "aborted");
    CHECK_FALSE(parse_stage_status("OK"));
    CHECK_FALSE(parse_stage_status(""));
    auto r = sample();
    r.stages.push_back({"rdma", StageStatus::failed, "1 faulty node(s)", 2});
    CHECK(render_table(r).find("  stage rdma: failed (1 faulty node(s))\n") != std::string::npos);
    CHECK(render_table(r).find("stage bandwidth") == std::string::npos);  // ok stages stay out of the table
    const auto j = nlohmann::json::parse(gangway::fleet::render_job_check(r));
    CHECK(j["stages"][0]["name"] == "bandwidth");
    CHECK(j["stages"][0]["status"] == "ok");
    CHECK(j["stages"][0]["detail"] == "4 links");
    CHECK(j["stages"][1]["name"] == "rdma");
    CHECK(j["stages"][1]["status"] == "failed");
    CHECK(j["stages"][1]["detail"] == "1 faulty node(s)");
}

TEST_CASE("the heatmap shows one cell per measured pair and marks the bad node") {
    const auto svg = render_svg(sample(NodeStatus::slow));
    CHECK(svg.rfind("<svg", 0) == 0);
    CHECK(svg.find("</svg>") != std::string::npos);
    CHECK(svg.find("TCP, data network: node10 -> node11: 2.0") != std::string::npos);  // slow cell, 0.25e9 B/s = 2 Gb/s
    CHECK(svg.find("TCP, data network: node08 -> node09: 9.6") != std::string::npos);
    CHECK(svg.find("node10: slow") != std::string::npos);
    CHECK(svg.find("#c00000") != std::string::npos);  // the bad node's labels in red
    CHECK(svg.find("rdma") == std::string::npos);      // no RDMA links: one panel
}

TEST_CASE("the heatmap gives RDMA rails their own panel, not mixed into TCP's") {
    auto r = sample(NodeStatus::ok);
    LinkResult l;
    l.from = 0;
    l.to = 1;
    l.stage = "rdma mlx5_0/1";
    l.bps = 48e9;  // 384 Gb/s: would dwarf TCP's cells if it shared their scale
    r.links.push_back(l);
    l.from = 1;
    l.to = 2;
    l.ok = false;
    l.bps.reset();
    l.error = "status 12";
    r.links.push_back(l);
    const auto svg = render_svg(r);
    CHECK(svg.find("rdma mlx5_0/1: node08 -> node09: 384.0") != std::string::npos);
    CHECK(svg.find("rdma mlx5_0/1: node09 -> node10: x") != std::string::npos);
    CHECK(svg.find("TCP, data network: node08 -> node09: 9.6") != std::string::npos);  // TCP's figure unchanged
    CHECK(svg.find("TCP, data network: node09 -> node10: x") == std::string::npos);  // the RDMA failure stays in its panel
}

TEST_CASE("a task reads node 0's verdict word; an unknown word is unreachable, never ok") {
    for (Verdict v : {Verdict::ok, Verdict::degraded, Verdict::unreachable}) CHECK(parse_verdict(to_string(v)) == v);
    CHECK(parse_verdict("") == Verdict::unreachable);
    CHECK(parse_verdict("OK") == Verdict::unreachable);
    CHECK(parse_verdict("okay") == Verdict::unreachable);
}

TEST_CASE("figures out of any integer's range render without undefined behaviour (issue 15, item 10)") {
    auto r = sample(NodeStatus::ok);
    // A speaker's "bytes" is a u64 on the wire: 2^64-1 is beyond long long.
    r.nccl.push_back({0, 8, 18446744073709551615.0, 1.0, 1.0, true, ""});
    r.nccl.push_back({0, 8, std::nan(""), 1.0, 1.0, true, ""});
    const auto j = nlohmann::json::parse(gangway::fleet::render_job_check(r));
    CHECK(j["nccl"][0]["bytes"] == 9223372036854775807LL);
    CHECK(j["nccl"][1]["bytes"] == 0);
    // A NaN or infinite rate in the heatmap is a cell without a colour scale, not UB.
    r.links.push_back({0, 1, "bandwidth", true, std::nan(""), std::nullopt, ""});
    r.links.push_back({1, 0, "bandwidth", true, HUGE_VAL, std::nullopt, ""});
    CHECK(render_svg(r).find("<svg") != std::string::npos);
}

TEST_CASE("saturate: a double beyond an integer type's range gives its nearest end") {
    using gangway::saturate;
    CHECK(saturate<long long>(1e300) == std::numeric_limits<long long>::max());
    CHECK(saturate<long long>(-1e300) == std::numeric_limits<long long>::min());
    CHECK(saturate<long long>(9223372036854775808.0) == std::numeric_limits<long long>::max());
    CHECK(saturate<int>(std::nan(""), -1) == -1);
    CHECK(saturate<unsigned>(-5.0) == 0u);
    CHECK(saturate<int>(-2.7) == -2);
    CHECK(saturate<long>(400000.0) == 400000);
}
