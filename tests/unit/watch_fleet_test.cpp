// The running jobs' stragglers and hangs in the fleet (issue 43): kept in
// the store as fleet serve names them, counted by `fleet metrics`, and the
// nodes root confirmed as stragglers in several jobs flagged. The ranks'
// word alone (an unconfirmed event) never counts for a node.
#include "catch_compat.hpp"

#include "temp_dir.hpp"
#include "../../lib/fleet/openmetrics.hpp"
#include "../../lib/fleet/watch_events.hpp"
#include "../../lib/sys/fleet/store.hpp"

using namespace gangway::fleet;
using gangway::sys::fleet::OpenMode;
using gangway::sys::fleet::Store;
using gangway::test::TempDir;
using Catch::Matchers::ContainsSubstring;

namespace {
constexpr std::int64_t kNow = 1'796'000'000;
WatchEvent event(std::uint32_t job, WatchKind kind, const std::string& node, bool confirmed, std::int64_t t) {
    return WatchEvent{t, t, job, 0, kind, node, confirmed, std::string(watch_kind_name(kind)) + ": " + node};
}
}  // namespace

TEST_CASE("the watch's events in the store: one row a job, step, kind and node, its first time kept") {
    TempDir d;
    auto s = Store::open(d.db());
    REQUIRE(s);
    REQUIRE(s->upsert_watch_event(event(7, WatchKind::straggler, "n10", false, kNow - 50)));
    // Named again later, now with root's evidence: one row, its first time kept, confirmed.
    REQUIRE(s->upsert_watch_event(event(7, WatchKind::straggler, "n10", true, kNow - 10)));
    // And never unconfirmed again by a later judgement that lacked the evidence.
    REQUIRE(s->upsert_watch_event(event(7, WatchKind::straggler, "n10", false, kNow - 5)));
    REQUIRE(s->upsert_watch_event(event(8, WatchKind::straggler, "n11", false, kNow - 5)));  // the ranks' word only
    REQUIRE(s->upsert_watch_event(event(9, WatchKind::hang, "n10", true, kNow - 400)));
    REQUIRE(s->upsert_watch_event(event(9, WatchKind::hang, "n12", false, kNow - 400)));
    const auto all = s->watch_events(0, kNow + 1, {});
    REQUIRE(all);
    REQUIRE(all->size() == 4);
    const WatchEvent& e = all->back();  // newest last: job 7's or 8's
    CHECK((e.job == 7 || e.job == 8));
    const auto n10 = s->watch_events(0, kNow + 1, {"n10"});
    REQUIRE(n10);
    REQUIRE(n10->size() == 2);
    CHECK(n10->front().kind == WatchKind::hang);
    CHECK(n10->back().first == kNow - 50);
    CHECK(n10->back().last == kNow - 5);
    CHECK(n10->back().confirmed);
    // The metrics: the confirmed straggler named lately, the confirmed hang.
    const auto running = s->running_stragglers(kNow - kStragglerFreshS);
    REQUIRE(running);
    REQUIRE(running->size() == 1);
    CHECK(running->front().job == 7);
    CHECK(running->front().node == "n10");
    CHECK(s->running_stragglers(kNow)->empty());  // none named since
    const auto hangs = s->hang_counts();
    REQUIRE(hangs);
    REQUIRE(hangs->size() == 1);
    CHECK(hangs->front().node == "n10");
    CHECK(hangs->front().count == 1);
    // A store an earlier gangway made, read-only: no table, no events, no failure.
    TempDir old;
    {
        auto made = Store::open(old.db());
        REQUIRE(made);
    }
    auto ro = Store::open(old.db(), OpenMode::read_only);
    REQUIRE(ro);
    CHECK(ro->hang_counts());
}

TEST_CASE("a node root confirmed as a straggler in two jobs within 14 days is flagged; the ranks' word is not") {
    std::vector<WatchEvent> rows{event(1, WatchKind::straggler, "n10", true, kNow - 86400),
                                 event(1, WatchKind::straggler, "n10", true, kNow - 86000),  // another step of job 1
                                 event(2, WatchKind::straggler, "n10", true, kNow - 100),
                                 event(3, WatchKind::straggler, "n11", false, kNow - 100),
                                 event(4, WatchKind::straggler, "n11", false, kNow - 50),
                                 event(5, WatchKind::straggler, "n12", true, kNow - 20 * 86400),
                                 event(6, WatchKind::straggler, "n12", true, kNow - 60),
                                 event(7, WatchKind::hang, "n13", true, kNow - 60),
                                 event(8, WatchKind::hang, "n13", true, kNow - 50)};
    rows[1].step = 1;
    const auto r = repeat_stragglers(rows, kNow, {});
    REQUIRE(r.size() == 1);
    CHECK(r[0].node == "n10");
    CHECK(r[0].stops == 2);
    CHECK(r[0].jobs == std::vector<std::uint32_t>{1, 2});
    CHECK(r[0].since == kNow - 86400);
    CHECK_THAT(render_repeat_stragglers(r), ContainsSubstring("n10 job_straggler - 2 - - "));
    CHECK(repeat_stragglers(rows, kNow, {"n11", "n12"}).empty());
}

TEST_CASE("fleet metrics: gangway_job_straggler and gangway_job_hangs_total") {
    MetricsInput in;
    in.stragglers = {{7, "n10"}};
    in.hangs = {{"n10", 2}};
    const std::string om = render_metrics(in, Exposition::openmetrics);
    CHECK_THAT(om, ContainsSubstring("# TYPE gangway_job_straggler gauge\n"));
    CHECK_THAT(om, ContainsSubstring("gangway_job_straggler{job=\"7\",node=\"n10\"} 1\n"));
    CHECK_THAT(om, ContainsSubstring("# TYPE gangway_job_hangs counter\n"));
    CHECK_THAT(om, ContainsSubstring("gangway_job_hangs_total{node=\"n10\"} 2\n"));
    CHECK_THAT(render_metrics(in, Exposition::prometheus_text), ContainsSubstring("gangway_job_hangs_total{node=\"n10\"} 2\n"));
}
