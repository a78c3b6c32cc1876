#include "catch_compat.hpp"

#include <map>
#include <set>
#include <sstream>

#include "../../lib/fleet/openmetrics.hpp"

using namespace gangway::fleet;

namespace {

Figure fig(std::string node, Metric m, double v, std::int64_t t = 1000, std::string device = "", std::string peer = "") {
    Figure f;
    f.check_id = "c" + std::to_string(t);
    f.time = t;
    f.node = std::move(node);
    f.metric = m;
    f.value = v;
    f.device = std::move(device);
    f.peer = std::move(peer);
    return f;
}

Flag flag(std::string node, Metric m, double recent, double baseline, std::string peer = "") {
    Flag f;
    f.node = std::move(node);
    f.metric = m;
    f.recent = recent;
    f.baseline = baseline;
    f.peer = std::move(peer);
    return f;
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

std::vector<std::string> samples(const std::string& text) {
    std::vector<std::string> out;
    for (auto& l : lines(text))
        if (!l.empty() && l[0] != '#') out.push_back(l);
    return out;
}

bool has_line(const std::string& text, const std::string& line) {
    for (const auto& l : lines(text))
        if (l == line) return true;
    return false;
}

}  // namespace

TEST_CASE("fleet metrics: label values are escaped and kept valid UTF-8") {
    CHECK(escape_label_value("node-01") == "node-01");
    CHECK(escape_label_value("a\\b") == "a\\\\b");
    CHECK(escape_label_value("say \"hi\"") == "say \\\"hi\\\"");
    CHECK(escape_label_value("two\nlines") == "two\\nlines");
    CHECK(escape_label_value("mlx5_0/1") == "mlx5_0/1");
    CHECK(escape_label_value("gr\xc3\xbc\xc3\x9f") == "gr\xc3\xbc\xc3\x9f");    // valid two-byte sequences stay
    CHECK(escape_label_value("\xe2\x82\xac") == "\xe2\x82\xac");                // the euro sign
    CHECK(escape_label_value("\xf0\x9f\x96\xa5") == "\xf0\x9f\x96\xa5");        // four bytes
    CHECK(escape_label_value("bad\xff") == "bad?");                             // never a UTF-8 byte
    CHECK(escape_label_value("\xc3") == "?");                                   // cut short
    CHECK(escape_label_value("\xc0\xaf") == "??");                              // overlong '/'
    CHECK(escape_label_value("\xed\xa0\x80") == "???");                         // a surrogate
    CHECK(escape_label_value("") == "");

    MetricsInput in;
    in.figures.push_back(fig("odd\"node\\\n", Metric::tcp_send, 1));
    const auto text = render_metrics(in, Exposition::openmetrics);
    CHECK(has_line(text, "gangway_node_tcp_send_bytes_per_second{node=\"odd\\\"node\\\\\\n\"} 1"));
}

TEST_CASE("fleet metrics: names, units and types as Prometheus' conventions say") {
    MetricsInput in;
    in.figures = {fig("n1", Metric::tcp_send, 1.25e10), fig("n1", Metric::tcp_recv, 1.5e9),
                  fig("n1", Metric::nccl_busbw, 4.5e10), fig("n1", Metric::gpu_h2d, 2.5e10, 1000, "0000:17:00.0"),
                  fig("n1", Metric::gpu_d2h, 2.6e10, 1000, "0000:17:00.0"),
                  fig("n1", Metric::port_rate, 5e10, 1000, "mlx5_0/1"),
                  fig("n1", Metric::link_bandwidth, 3e9, 1000, "", "n2"),
                  fig("n1", Metric::link_bandwidth, 2e9, 1000, "", "n3")};
    in.counts = {3, 7, 2, 1700000000};
    const auto om = render_metrics(in, Exposition::openmetrics);

    CHECK(has_line(om, "gangway_node_tcp_send_bytes_per_second{node=\"n1\"} 12500000000"));
    CHECK(has_line(om, "gangway_node_tcp_receive_bytes_per_second{node=\"n1\"} 1500000000"));
    CHECK(has_line(om, "gangway_node_nccl_busbw_bytes_per_second{node=\"n1\"} 45000000000"));
    CHECK(has_line(om, "gangway_gpu_h2d_bytes_per_second{node=\"n1\",gpu=\"0000:17:00.0\"} 25000000000"));
    CHECK(has_line(om, "gangway_gpu_d2h_bytes_per_second{node=\"n1\",gpu=\"0000:17:00.0\"} 26000000000"));
    CHECK(has_line(om, "gangway_port_rate_bytes_per_second{node=\"n1\",port=\"mlx5_0/1\"} 50000000000"));
    CHECK(has_line(om, "gangway_node_link_min_bytes_per_second{node=\"n1\"} 2000000000"));  // the slowest link, no peer label
    CHECK(has_line(om, "gangway_node_last_check_timestamp_seconds{node=\"n1\"} 1000"));
    MetricsInput odd;
    odd.figures = {fig("n1", Metric::tcp_send, 1.5), fig("n2", Metric::tcp_send, 1e300)};
    const auto odd_text = render_metrics(odd, Exposition::openmetrics);
    CHECK(has_line(odd_text, "gangway_node_tcp_send_bytes_per_second{node=\"n1\"} 1.5"));
    CHECK(has_line(odd_text, "gangway_node_tcp_send_bytes_per_second{node=\"n2\"} 1e+300"));
    CHECK(has_line(om, "gangway_node_degrading{node=\"n1\",metric=\"tcp_send\"} 0"));
    CHECK(has_line(om, "gangway_fleet_last_ingest_timestamp_seconds 1700000000"));
    CHECK(has_line(om, "# UNIT gangway_node_tcp_send_bytes_per_second bytes_per_second"));
    CHECK(has_line(om, "# UNIT gangway_fleet_last_ingest_timestamp_seconds seconds"));

    // OpenMetrics names a counter's family without _total, its samples with;
    // the family has its own HELP (promtool 2.42 wants it).
    CHECK(has_line(om, "# TYPE gangway_checks counter"));
    CHECK_THAT(om, Catch::Matchers::ContainsSubstring("# HELP gangway_checks "));
    CHECK(has_line(om, "gangway_checks_total{source=\"node_check\"} 3"));
    CHECK(has_line(om, "gangway_checks_total{source=\"job_check\"} 7"));
    CHECK(has_line(om, "# TYPE gangway_rejected_files counter"));
    CHECK(has_line(om, "gangway_rejected_files_total 2"));

    // The classic format names the family as its samples, and has no UNIT.
    const auto text = render_metrics(in, Exposition::prometheus_text);
    CHECK(has_line(text, "# TYPE gangway_checks_total counter"));
    CHECK_THAT(text, Catch::Matchers::ContainsSubstring("# HELP gangway_checks_total "));
    CHECK(has_line(text, "gangway_checks_total{source=\"node_check\"} 3"));
    CHECK_THAT(text, !Catch::Matchers::ContainsSubstring("# UNIT"));

    for (const auto* t : {&om, &text}) {
        std::string previous;
        std::set<std::string> seen;
        for (const auto& s : samples(*t)) {
            const std::string name = s.substr(0, s.find_first_of("{ "));
            CHECK(name.rfind("gangway_", 0) == 0);
            // A family's samples stand together (OpenMetrics requires it).
            if (name != previous) CHECK(seen.insert(name).second);
            previous = name;
            // No timestamps: the name with its labels, one space, the value.
            const std::string rest = s.substr(s.find('}') == std::string::npos ? 0 : s.find('}'));
            CHECK(std::count(rest.begin(), rest.end(), ' ') == 1);
        }
    }
}

TEST_CASE("fleet metrics: # EOF ends OpenMetrics text, once; the classic format has none") {
    for (bool empty : {true, false}) {
        MetricsInput in;
        if (!empty) in.figures.push_back(fig("n1", Metric::tcp_send, 1));
        const auto om = render_metrics(in, Exposition::openmetrics);
        const auto ls = lines(om);
        REQUIRE(!ls.empty());
        CHECK(ls.back() == "# EOF");
        CHECK(std::count(ls.begin(), ls.end(), "# EOF") == 1);
        CHECK(om.back() == '\n');
        CHECK_THAT(render_metrics(in, Exposition::prometheus_text), !Catch::Matchers::ContainsSubstring("# EOF"));
    }
    // No ingest yet: no last-ingest series rather than a time of 1970.
    CHECK_THAT(render_metrics({}, Exposition::openmetrics),
               !Catch::Matchers::ContainsSubstring("gangway_fleet_last_ingest_timestamp_seconds "));
}

TEST_CASE("fleet metrics: the latest figure of a series wins, whatever the order") {
    MetricsInput in;
    in.figures = {fig("n1", Metric::tcp_send, 3, 3000), fig("n1", Metric::tcp_send, 1, 1000),
                  fig("n1", Metric::gpu_h2d, 5, 500, "g0"), fig("n1", Metric::gpu_h2d, 4, 400, "g0"),
                  fig("n1", Metric::link_bandwidth, 1, 100, "", "n2"), fig("n1", Metric::link_bandwidth, 9, 200, "", "n2")};
    const auto om = render_metrics(in, Exposition::openmetrics);
    CHECK(has_line(om, "gangway_node_tcp_send_bytes_per_second{node=\"n1\"} 3"));
    CHECK(has_line(om, "gangway_gpu_h2d_bytes_per_second{node=\"n1\",gpu=\"g0\"} 5"));
    CHECK(has_line(om, "gangway_node_link_min_bytes_per_second{node=\"n1\"} 9"));
    CHECK(has_line(om, "gangway_node_last_check_timestamp_seconds{node=\"n1\"} 3000"));
}

TEST_CASE("fleet metrics: flags become 0/1 per node and kind, and series for flagged links only") {
    MetricsInput in;
    in.figures = {fig("n1", Metric::tcp_send, 1), fig("n2", Metric::tcp_send, 1), fig("n2", Metric::gpu_h2d, 1, 1000, "g0"),
                  fig("n1", Metric::link_bandwidth, 1, 1000, "", "n2"), fig("n2", Metric::link_bandwidth, 1, 1000, "", "n1")};
    in.flags = {flag("n2", Metric::gpu_h2d, 5e9, 2.5e10), flag("n1", Metric::link_bandwidth, 1e9, 1e10, "n2")};
    const auto om = render_metrics(in, Exposition::openmetrics);
    CHECK(has_line(om, "gangway_node_degrading{node=\"n2\",metric=\"gpu_h2d\"} 1"));
    CHECK(has_line(om, "gangway_node_degrading{node=\"n2\",metric=\"tcp_send\"} 0"));
    CHECK(has_line(om, "gangway_node_degrading{node=\"n1\",metric=\"tcp_send\"} 0"));
    // A flagged link flags the link, not its node.
    CHECK(has_line(om, "gangway_node_degrading{node=\"n1\",metric=\"link_bandwidth\"} 0"));
    CHECK(has_line(om, "gangway_link_degrading_bytes_per_second{node=\"n1\",peer=\"n2\"} 1000000000"));
    CHECK(has_line(om, "gangway_links_degrading 1"));
    CHECK_THAT(om, !Catch::Matchers::ContainsSubstring("peer=\"n1\""));  // the unflagged direction has no series
    CHECK(has_line(om, "gangway_fleet_series_dropped 0"));
}

TEST_CASE("fleet metrics: 2,048 nodes with many pairs stay within the series bound") {
    constexpr std::size_t nodes = 2048, gpus = 8, ports = 8, peers = 64, flagged_links = 5000;
    auto name = [](std::size_t i) { return "gpu" + std::to_string(i); };
    MetricsInput in;
    for (std::size_t n = 0; n < nodes; ++n) {
        for (Metric m : {Metric::tcp_send, Metric::tcp_recv, Metric::nccl_busbw}) in.figures.push_back(fig(name(n), m, 1e10));
        for (std::size_t g = 0; g < gpus; ++g) {
            in.figures.push_back(fig(name(n), Metric::gpu_h2d, 2e10, 1000, "0000:" + std::to_string(g) + ":00.0"));
            in.figures.push_back(fig(name(n), Metric::gpu_d2h, 2e10, 1000, "0000:" + std::to_string(g) + ":00.0"));
        }
        for (std::size_t p = 0; p < ports; ++p)
            in.figures.push_back(fig(name(n), Metric::port_rate, 5e10, 1000, "mlx5_" + std::to_string(p) + "/1"));
        for (std::size_t k = 1; k <= peers; ++k)
            in.figures.push_back(fig(name(n), Metric::link_bandwidth, 1e10 - double(k), 1000, "", name((n + k) % nodes)));
    }
    for (std::size_t i = 0; i < flagged_links; ++i)
        in.flags.push_back(flag(name(i % nodes), Metric::link_bandwidth, 1e9 + double(i), 1e10, name((i % nodes + 1 + i / nodes) % nodes)));
    for (std::size_t n = 0; n < nodes; n += 100) in.flags.push_back(flag(name(n), Metric::nccl_busbw, 1e9, 4e10));

    const auto om = render_metrics(in, Exposition::openmetrics);
    const auto s = samples(om);
    const std::size_t bound = series_bound(nodes, nodes * gpus, nodes * ports);
    CHECK(bound == 75782);
    CHECK(s.size() <= bound);
    std::size_t with_peer = 0;
    for (const auto& l : s)
        if (l.find("peer=") != std::string::npos) {
            ++with_peer;
            CHECK(l.rfind("gangway_link_degrading_bytes_per_second{", 0) == 0);
        }
    CHECK(with_peer == nodes);  // one per node at most, of 5,000 flagged
    CHECK(has_line(om, "gangway_links_degrading " + std::to_string(flagged_links)));
    CHECK(has_line(om, "gangway_fleet_series_dropped " + std::to_string(flagged_links - nodes)));
    // The worst flagged links are the ones kept.
    CHECK(has_line(om, "gangway_link_degrading_bytes_per_second{node=\"gpu0\",peer=\"gpu1\"} 1000000000"));
    CHECK_THAT(om, !Catch::Matchers::ContainsSubstring("1000004999"));
    // The per-pair figures (131,072 of them) made no series of their own.
    CHECK(s.size() < nodes * (13 + 2 * gpus + ports) + 6 + 1);
}

TEST_CASE("fleet metrics: a node's devices beyond the limit are dropped and counted") {
    MetricsInput in;
    for (std::size_t g = 0; g < kMaxDevicesPerNode + 36; ++g)
        in.figures.push_back(fig("n1", Metric::gpu_h2d, 1, 1000, "dev" + std::to_string(1000 + g)));
    const auto om = render_metrics(in, Exposition::openmetrics);
    std::size_t gpu_series = 0;
    for (const auto& l : samples(om))
        if (l.rfind("gangway_gpu_h2d_bytes_per_second{", 0) == 0) ++gpu_series;
    CHECK(gpu_series == kMaxDevicesPerNode);
    CHECK(has_line(om, "gangway_fleet_series_dropped 36"));
}

TEST_CASE("fleet metrics: the format follows the Accept header") {
    // What Prometheus 2.42 sends.
    CHECK(negotiate_exposition("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                               "text/plain;version=0.0.4;q=0.5,*/*;q=0.1") == Exposition::openmetrics);
    CHECK(negotiate_exposition("") == Exposition::prometheus_text);
    CHECK(negotiate_exposition("*/*") == Exposition::prometheus_text);  // curl
    CHECK(negotiate_exposition("text/plain;version=0.0.4") == Exposition::prometheus_text);
    CHECK(negotiate_exposition("Application/OpenMetrics-Text; version=1.0.0") == Exposition::openmetrics);
    CHECK(negotiate_exposition("application/openmetrics-text;q=0, text/plain") == Exposition::prometheus_text);
    CHECK(negotiate_exposition("text/plain;q=0.9, application/openmetrics-text;q=0.5") == Exposition::prometheus_text);
    CHECK(std::string(content_type(Exposition::openmetrics)).rfind("application/openmetrics-text; version=1.0.0", 0) == 0);
    CHECK(std::string(content_type(Exposition::prometheus_text)).rfind("text/plain; version=0.0.4", 0) == 0);
}
