// The heatmap's size at large steps (issue 14, item 5): a full matrix for
// small steps, blocks of nodes above kHeatmapFullMax, never nodes² elements.
#include "catch_compat.hpp"

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "../../lib/fleet/report_schema.hpp"
#include "../../lib/preflight/report.hpp"

using namespace gangway::preflight;

namespace {

std::string node_name(std::size_t i) {
    std::string s = std::to_string(i);
    return "gpu-node" + std::string(5 - s.size(), '0') + s;
}

std::size_t count(const std::string& hay, const std::string& needle) {
    std::size_t n = 0;
    for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
    return n;
}

// A quick check's links at `n` nodes as the stages make them: reach to 3
// peers, `rounds` ring-shift bandwidth rounds, and, with `rails`, RDMA rounds
// per rail; `dense` adds 64 more bandwidth peers per node, which touches
// every block pair. Node 7 is slow and node 1000 (when there) unreachable.
Report big(std::size_t n, unsigned rounds, unsigned rails, bool dense) {
    Report r;
    r.mode = "quick";
    r.expected_bps = 1.25e9;
    for (std::size_t i = 0; i < n; ++i) r.nodes.push_back({node_name(i), "10.0.0.1", NodeStatus::ok, {}, 1e9, 1e9, 10000});
    r.nodes[7].status = NodeStatus::slow;
    if (n > 1000) r.nodes[1000].status = NodeStatus::unreachable;
    auto link = [&](std::size_t a, std::size_t b, const std::string& stage, double bps) {
        LinkResult l;
        l.from = unsigned(a);
        l.to = unsigned(b % n);
        l.stage = stage;
        if (stage == "reach") l.ms = 0.2;
        else l.bps = bps;
        r.links.push_back(l);
    };
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t k = 1; k <= 3; ++k) link(i, i + k * 97, "reach", 0);
        for (std::size_t k = 1; k <= rounds; ++k) link(i, i + k, "bandwidth", i == 7 ? 0.2e9 : 1.2e9);
        for (unsigned rail = 0; rail < rails; ++rail)
            link(i, i + 1, "rdma mlx5_" + std::to_string(rail) + "/1", 48e9);
        if (dense)
            for (std::size_t k = 0; k < 64; ++k) link(i, i + 1 + k * (n / 64), "bandwidth", 1.1e9);
    }
    r.links.push_back({0, 1000 % unsigned(n), "reach", false, std::nullopt, std::nullopt, "connect: timed out"});
    return r;
}

}  // namespace

TEST_CASE("heatmap at 2048 nodes: blocks of nodes, a few MB at most, the bad nodes named") {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string svg = render_svg(big(2048, 4, 8, true));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO("SVG bytes: " << svg.size() << ", seconds: " << s);
    CHECK(svg.size() < 4u * 1024 * 1024);  // 571 MB before; 9 panels of 64 x 64 blocks at most
    CHECK(s < 10);
    CHECK(svg.rfind("<svg", 0) == 0);
    CHECK(svg.find("</svg>") != std::string::npos);
    CHECK(svg.find("a cell is the worst pair of two blocks of 32 nodes (every pair is in the JSON report)") !=
          std::string::npos);
    // 64 x 64 cells at most per panel, never one per pair.
    CHECK(count(svg, "<rect ") <= 9 * (64 * 64 + 2) + 1);
    // A block's cell names its worst pair: the slow node 7 in the first block (7 -> 8 measured faster too,
    // and a pair keeps its best figure).
    CHECK(svg.find("TCP, data network: gpu-node00000..gpu-node00031 -> gpu-node00000..gpu-node00031: ") != std::string::npos);
    CHECK(svg.find("worst 1.6 Gb/s (gpu-node00007 -> gpu-node00009)") != std::string::npos);
    CHECK(svg.find("1 failed (gpu-node00000 -> gpu-node01000)") != std::string::npos);
    // Per node: the count and the nodes not ok, by name.
    CHECK(svg.find("2046 of 2048 nodes ok") != std::string::npos);
    CHECK(svg.find("gpu-node00007: slow") != std::string::npos);
    CHECK(svg.find("gpu-node01000: unreachable") != std::string::npos);
    CHECK(svg.find("gpu-node00008: ok") == std::string::npos);
    // The block holding a bad node has a red label with the range in its title.
    CHECK(svg.find("gpu-node00992..gpu-node01023: 1 not ok") != std::string::npos);
    // Each RDMA rail keeps its own panel.
    CHECK(svg.find("rdma mlx5_7/1: sender (row)") != std::string::npos);
}

TEST_CASE("heatmap: a realistic 2048-node quick check is well under 1 MB") {
    const std::string svg = render_svg(big(2048, 2, 0, false));
    INFO("SVG bytes: " << svg.size());
    CHECK(svg.size() < 1024 * 1024);
}

TEST_CASE("heatmap up to 128 nodes: one cell per measured pair, the grid drawn once") {
    const std::string svg = render_svg(big(128, 2, 0, false));
    CHECK(svg.find("blocks of") == std::string::npos);
    CHECK(svg.find("TCP, data network: gpu-node00007 -> gpu-node00008: 1.6") != std::string::npos);
    CHECK(svg.find("TCP, data network: gpu-node00127 -> gpu-node00000: 9.6") != std::string::npos);
    CHECK(svg.find("TCP, data network: gpu-node00000 -> gpu-node00104: x") != std::string::npos);  // 1000 % 128
    CHECK(svg.find("TCP, data network: not measured") != std::string::npos);
    // Cells for the measured pairs (2 per node) and the failed one, the diagonal, the grid (its pattern and
    // its rectangle), the background and the colour scale's two: O(nodes), not 128².
    CHECK(count(svg, "<rect ") == 128 * 2 + 1 + 128 + 2 + 1 + 2);
    CHECK(svg.size() < 512 * 1024);
    // Every node's label; the slow one in red.
    CHECK(svg.find("fill=\"#c00000\">gpu-node00007</text>") != std::string::npos);
    // 129 nodes: blocks of 3.
    CHECK(render_svg(big(129, 2, 0, false)).find("blocks of 3 nodes") != std::string::npos);
}

TEST_CASE("the JSON report at 2048 nodes is linear in nodes and links") {
    const Report r = big(2048, 4, 8, false);
    const auto t0 = std::chrono::steady_clock::now();
    const std::string j = gangway::fleet::render_job_check(r);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO("JSON bytes: " << j.size() << " for " << r.links.size() << " links, seconds: " << s);
    CHECK(count(j, "\"from\": ") == r.links.size());
    CHECK(j.size() < (r.nodes.size() + r.links.size()) * 200);
    CHECK(s < 10);
    CHECK(render_table(r).find("gpu-node01000") != std::string::npos);
}

TEST_CASE("links naming a node past the report's are left out of the heatmap") {
    Report r = big(16, 1, 0, false);
    r.links.push_back({99, 0, "bandwidth", true, 1e9, std::nullopt, ""});
    r.links.push_back({0, 99, "rdma", false, std::nullopt, std::nullopt, "x"});
    const std::string svg = render_svg(r);
    CHECK(svg.find("</svg>") != std::string::npos);
    CHECK(svg.find("rdma") == std::string::npos);
}

namespace {

// The fill of the cell whose title is `title` ("" when there is none).
std::string fill_of(const std::string& svg, const std::string& title) {
    const auto t = svg.find("<title>" + title + "</title>");
    if (t == std::string::npos) return "";
    const auto f = svg.rfind("fill=\"", t);
    return f == std::string::npos ? "" : svg.substr(f + 6, 7);
}

// Four nodes in a ring, the links' rates as given (bytes/s), expected 1.25e9.
Report ring(const std::vector<double>& bps, std::vector<std::string> names = {"n0", "n1", "n2", "n3"}) {
    Report r;
    r.mode = "quick";
    r.expected_bps = 1.25e9;
    r.slow_ratio = 0.5;
    for (const auto& name : names) r.nodes.push_back({name, "10.0.0.1", NodeStatus::ok, {}, 1e9, 1e9, 10000});
    for (unsigned i = 0; i < bps.size(); ++i) {
        LinkResult l;
        l.from = i;
        l.to = (i + 1) % unsigned(names.size());
        l.stage = "bandwidth";
        l.bps = bps[i];
        r.links.push_back(l);
    }
    return r;
}

int attr(const std::string& svg, const std::string& name) {
    const auto p = svg.find(name + "=\"");
    return p == std::string::npos ? -1 : std::stoi(svg.substr(p + name.size() + 2));
}

}  // namespace

TEST_CASE("heatmap colours: against the expected rate, on the check's slow rule, not against the fastest link") {
    // 1.5x expected, expected, 0.6x, 0.4x (slow: below half of the expected rate).
    const std::string svg = render_svg(ring({1.875e9, 1.25e9, 0.75e9, 0.5e9}));
    const std::string above = fill_of(svg, "TCP, data network: n0 -> n1: 15.0");
    const std::string at = fill_of(svg, "TCP, data network: n1 -> n2: 10.0");
    const std::string fine = fill_of(svg, "TCP, data network: n2 -> n3: 6.0");
    const std::string slow = fill_of(svg, "TCP, data network: n3 -> n0: 4.0");
    // A link at or above the expectation is green, whatever the fastest link measured
    // (against the fastest, 10.0 of 15.0 was drawn part way to yellow).
    CHECK(above == "#00c828");
    CHECK(at == above);
    // Above the slow bound, not red; below it, red: the colours say what the check says.
    CHECK(fine != slow);
    CHECK(fine.substr(1, 2) != "dc");
    CHECK(slow == "#dc2828");
    // The scale is drawn, with the slow bound's and the expectation's figures.
    CHECK(svg.find("TCP against the expected rate, Gb/s") != std::string::npos);
    CHECK(svg.find(">5.00</text>") != std::string::npos);
    CHECK(svg.find(">10.00</text>") != std::string::npos);
    CHECK(svg.find("red: slow (under 50 %); green: as expected or faster") != std::string::npos);
}

TEST_CASE("heatmap canvas: wide enough for its title and long node names") {
    const std::string longname = "r12-gpu-node-0007.cluster.example.org";
    const std::string svg = render_svg(ring({1.2e9, 1.2e9, 1.2e9, 1.2e9}, {longname, "b", "c", "d"}));
    const int width = attr(svg, "width");
    // The heading starts at x 10: its estimated width must fit (an estimate that errs wide).
    const std::string heading = "TCP, data network: sender (row) to receiver (column), Gb/s; expected 10.00";
    CHECK(width >= 10 + int(heading.size()) * 6 + 10);
    // The matrix starts right of the longest row label.
    const auto at = svg.find("text-anchor=\"end\" fill=\"black\">" + longname);
    REQUIRE(at != std::string::npos);
    const auto x = svg.rfind("<text x=\"", at);
    const int label_end = std::stoi(svg.substr(x + 9));
    CHECK(label_end >= int(longname.size()) * 6);  // the name ends at label_end: it must not start left of 0
}

// Not a test: writes SVGs for tests/heatmap_render.sh (rsvg-convert renders
// them and checks that nothing is drawn past the canvas). Hidden ("[.]"):
// runs only when named, with GANGWAY_HEATMAP_DIR set.
TEST_CASE("write heatmaps for rendering", "[.heatmap-render]") {
    const char* dir = std::getenv("GANGWAY_HEATMAP_DIR");
    REQUIRE(dir != nullptr);
    auto write = [&](const std::string& name, const Report& r) {
        std::ofstream(std::string(dir) + "/" + name + ".svg") << render_svg(r);
    };
    write("ring4", ring({1.2e9, 1.2e9, 0.2e9, 0.2e9}, {"node08", "node09", "node10", "node11"}));
    write("longnames", ring({1.2e9, 1.2e9, 0.2e9, 0.2e9},
                            {"r12-gpu-node-0007.cluster.example.org", "r12-gpu-node-0008.cluster.example.org",
                             "MMMMMMMMMMMMMMMMMMMMMMMM", "WWWWWWWWWWWWWWWWWW"}));
    write("n128", big(128, 2, 0, false));
    write("n2048_rails", big(2048, 2, 2, false));
    Report one = ring({}, {"solo"});
    write("single", one);
}
