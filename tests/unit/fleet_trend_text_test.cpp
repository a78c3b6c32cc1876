// `gangway fleet show`'s trend table, `fleet flagged`'s lines and the SVG
// plots, from a small fleet with one node and one link going down.
#include "catch_compat.hpp"

#include "../../lib/fleet/trend_svg.hpp"
#include "../../lib/fleet/trend_text.hpp"

using namespace gangway::fleet;
using Catch::Matchers::ContainsSubstring;

namespace {

constexpr std::int64_t kNow = 1767225600 + 100 * 86400;

std::size_t count(const std::string& hay, const std::string& needle) {
    std::size_t n = 0;
    for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
    return n;
}

// Six nodes every 6 hours for 30 days from root; node b2 drops to 80 % for the
// last 3 days; links a0->a1 ... from two users' jobs, a3-a4 dropping to half.
std::vector<Figure> fleet() {
    std::vector<Figure> out;
    int k = 0;
    for (std::int64_t t = kNow - 30 * 86400 + 3600; t <= kNow; t += 6 * 3600, ++k) {
        const bool recent = t > kNow - 3 * 86400;
        const double wobble = 1 + 0.01 * (k % 5 - 2);
        for (int n = 0; n < 6; ++n) {
            Figure f;
            f.check_id = "node-" + std::to_string(n) + "-" + std::to_string(k);
            f.time = t, f.node = "b" + std::to_string(n), f.device = "0000:1b:00.0", f.peer_class = "H100";
            f.metric = Metric::gpu_h2d;
            f.value = 25e9 * wobble * (n == 2 && recent ? 0.8 : 1);
            out.push_back(f);
            Figure l;
            l.check_id = "job-" + std::to_string(k), l.time = t + 60, l.source = Source::job_check;
            l.uid = 1000 + static_cast<std::uint32_t>(k % 2);
            l.node = "a" + std::to_string(n), l.peer = "a" + std::to_string((n + 1) % 6), l.peer_class = "100G";
            l.metric = Metric::link_bandwidth;
            l.value = 12e9 * wobble * (n == 3 && recent ? 0.5 : 1);
            out.push_back(l);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("fleet trend text: the table, the flagged lines and the plots") {
    const auto figs = fleet();
    const auto r = compute_trends(figs, kNow);
    REQUIRE(r.flags.size() == 2);

    const std::string flagged = render_flagged(r, {});
    CHECK(count(flagged, "\n") == 2);
    CHECK_THAT(flagged, ContainsSubstring("a3->a4 link_bandwidth - "));
    CHECK_THAT(flagged, ContainsSubstring("b2 gpu_h2d 0000:1b:00.0 "));
    CHECK_THAT(flagged, ContainsSubstring(" 25000000000 "));  // b2's baseline, bytes per second
    CHECK_THAT(flagged, ContainsSubstring("Z\n"));
    CHECK(render_flagged(r, {"a4"}).rfind("a3->a4 ", 0) == 0);  // a link matches at either end
    CHECK(render_flagged(r, {"b0"}).empty());
    CHECK(utc_text(0) == "1970-01-01T00:00:00Z");

    const std::string table = render_trend_table(show_rows(figs), r, true);
    CHECK_THAT(table, ContainsSubstring("BASELINE"));
    CHECK(count(table, "\nb") == 6);   // a row per node and metric
    CHECK(count(table, "\na") == 6);
    CHECK(count(table, "degrading") == 3);  // b2's GPU; a3 and a4, the link's ends
    CHECK_THAT(table, ContainsSubstring("degrading 0000:1b:00.0"));
    CHECK_THAT(table, ContainsSubstring("degrading -> a4"));
    CHECK_THAT(table, ContainsSubstring("degrading -> a3"));
    CHECK_THAT(table, ContainsSubstring("-19.6 %"));  // its recent median against its baseline
    CHECK_THAT(table, ContainsSubstring("25.0 GB/s"));
    CHECK_THAT(table, ContainsSubstring("noise gpu_h2d H100: 6 series"));
    CHECK(render_trend_table({}, r, false).find("noise") == std::string::npos);

    const std::string svg = render_trend_svg(figs, r, kNow, {}, {});
    CHECK(svg.rfind("<svg ", 0) == 0);
    CHECK_THAT(svg, ContainsSubstring("</svg>\n"));
    CHECK_THAT(svg, ContainsSubstring("b2 (degrading)"));
    CHECK_THAT(svg, ContainsSubstring("a3 -&gt; a4: degrading"));
    CHECK(count(svg, "<svg") == 1);
    CHECK(count(svg, "<path") > 6);
}

TEST_CASE("fleet trend svg: its size is bounded however big the fleet") {
    std::vector<Figure> figs;
    for (int n = 0; n < 300; ++n)
        for (int d = 0; d < 30; ++d) {
            Figure f;
            f.check_id = "c" + std::to_string(d), f.time = kNow - d * 86400 - 60, f.node = "node" + std::to_string(n);
            f.metric = Metric::tcp_send, f.value = 1e9;
            figs.push_back(f);
        }
    const auto r = compute_trends(figs, kNow);
    const std::string svg = render_trend_svg(figs, r, kNow, {}, {});
    CHECK_THAT(svg, ContainsSubstring("and 268 more node(s)"));
    CHECK(svg.size() < 200000);
    const std::string empty = render_trend_svg({}, compute_trends({}, kNow), kNow, {}, {"nosuch"});
    CHECK_THAT(empty, ContainsSubstring("no figures in the window"));
}
