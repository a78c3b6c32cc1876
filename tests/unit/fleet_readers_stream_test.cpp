// The fleet's readers series by series (issue 34, items 1-2): the store's one
// pass (readers.hpp) gives the answers that compute_trends, show_rows and the
// metrics gave from every figure of the window, on a synthetic fleet with
// its faults and folded days; the readers' memory grows with the series, not
// with the figures kept; a report is one row per node and day; and a store
// of schema 1 is converted by the first ingest, read-only readers refusing
// it with one line until then.
#include "catch_compat.hpp"

#include <sqlite3.h>

#include <map>

#include "cost_meter.hpp"
#include "temp_dir.hpp"
#include "../../lib/fleet/openmetrics.hpp"
#include "../../lib/fleet/show.hpp"
#include "../../lib/fleet/synth.hpp"
#include "../../lib/fleet/trend.hpp"
#include "../../lib/sys/fleet/metrics_input.hpp"
#include "../../lib/sys/fleet/readers.hpp"
#include "../../lib/sys/fleet/store.hpp"

using namespace gangway::fleet;
using gangway::sys::fleet::OpenMode;
using gangway::sys::fleet::ReadPlan;
using gangway::sys::fleet::Store;
using gangway::test::TempDir;

namespace {

constexpr std::int64_t kDay = 86400;

// The synthetic figures as the ingest stores them: one check per check id.
void store_figures(Store& s, const std::vector<Figure>& figs) {
    std::map<std::string, CheckRecord> checks;
    for (const Figure& f : figs) {
        CheckRecord& r = checks[f.check_id];
        r.check.id = f.check_id, r.check.source = f.source, r.check.uid = f.uid, r.check.time = f.time;
        r.check.verdict = "ok";
        r.figures.push_back(f);
    }
    for (auto& [id, r] : checks) REQUIRE(*s.insert(r));
}

// A small command-line sized history: 48 nodes, 40 days, the three faults
// of synth.hpp early enough to be in the window, and every figure stored.
struct Fleet {
    TempDir d;
    SynthSettings set;
    std::int64_t now = 0;
    Fleet() {
        set.nodes = 48, set.jobs_per_day = 24, set.max_job_nodes = 8;
        set.degrading_node = 7, set.node_from_day = 33, set.node_loss = 0.05;
        set.link_a = 20, set.link_b = 21, set.link_from_day = 34, set.link_loss = 0.08;
        set.liar_node = 30, set.liar_from_day = 35;
        auto s = Store::open(d.db());
        REQUIRE(s);
        for (int day = 0; day < 40; ++day) store_figures(*s, synth_day(set, day));
        now = set.start + 40 * kDay - 3600;
    }
};

}  // namespace

TEST_CASE("fleet readers: the one pass gives what compute_trends, show_rows and the metrics gave from every figure") {
    Fleet fl;
    auto s = Store::open(fl.d.db());
    REQUIRE(s);
    // Days before the last 20 folded into daily medians: inside the 30-day window, both paths read them.
    auto folded = s->fold(fl.now, 20);
    REQUIRE(folded);
    REQUIRE(folded->figures > 0);

    TrendSettings set;  // 30 days, 3 recent
    auto figs = s->figures(fl.now - set.history_s, fl.now + gangway::sys::fleet::kMaxClockSkewS + 1, {});
    REQUIRE(figs);
    const TrendResult old = compute_trends(*figs, fl.now, set);
    REQUIRE(old.flags.size() >= 2);  // the node and the link, as the synthetic fleet is made

    ReadPlan plan;
    plan.now = fl.now, plan.settings = set, plan.show = true, plan.latest = true;
    plan.latest_until = fl.now + gangway::sys::fleet::kMaxClockSkewS + 1;
    auto view = gangway::sys::fleet::read_store(*s, plan);
    REQUIRE(view);
    const TrendResult& now = view->trends;

    REQUIRE(now.flags.size() == old.flags.size());
    for (std::size_t i = 0; i < old.flags.size(); ++i) {
        const Flag &a = old.flags[i], &b = now.flags[i];
        INFO(a.node << " " << a.peer << " " << to_string(a.metric));
        CHECK(a.node == b.node);
        CHECK(a.peer == b.peer);
        CHECK(a.device == b.device);
        CHECK(a.metric == b.metric);
        CHECK(a.recent == b.recent);
        CHECK(a.baseline == b.baseline);
        CHECK(a.peers == b.peers);
        CHECK(a.since == b.since);
        CHECK(a.checks == b.checks);
        CHECK(a.users == b.users);
        CHECK(a.root == b.root);
    }
    REQUIRE(now.series.size() == old.series.size());
    for (std::size_t i = 0; i < old.series.size(); ++i) {
        const SeriesTrend &a = old.series[i], &b = now.series[i];
        INFO(a.node << " " << a.peer << " " << a.device << " " << to_string(a.metric));
        CHECK(std::tie(a.node, a.peer, a.device, a.peer_class, a.metric) == std::tie(b.node, b.peer, b.device, b.peer_class, b.metric));
        CHECK(std::tie(a.recent_n, a.baseline_n, a.last, a.last_time) == std::tie(b.recent_n, b.baseline_n, b.last, b.last_time));
        CHECK(a.recent == b.recent);
        CHECK(a.baseline == b.baseline);
        CHECK(a.peers == b.peers);
        CHECK(a.t_own == b.t_own);
        CHECK(a.t_peers == b.t_peers);
        CHECK(a.degrading == b.degrading);
    }
    REQUIRE(now.classes.size() == old.classes.size());
    for (std::size_t i = 0; i < old.classes.size(); ++i) {
        CHECK(old.classes[i].series == now.classes[i].series);
        CHECK(old.classes[i].typical_recent_n == now.classes[i].typical_recent_n);
        CHECK(old.classes[i].noise_own == now.classes[i].noise_own);
        CHECK(old.classes[i].noise_peers == now.classes[i].noise_peers);
    }

    // fleet show's rows: show_rows of the window's figures (show reads up to now + 1).
    std::vector<Figure> shown;
    for (const Figure& f : *figs)
        if (f.time < fl.now + 1) shown.push_back(f);
    const auto rows = show_rows(shown);
    REQUIRE(rows.size() == view->show.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const ShowRow &a = rows[i], &b = view->show[i];
        INFO(a.node << " " << to_string(a.metric));
        CHECK(std::tie(a.node, a.metric, a.last, a.last_figures, a.last_time, a.checks) ==
              std::tie(b.node, b.metric, b.last, b.last_figures, b.last_time, b.checks));
    }

    // The metrics' text: from every figure and the old flags, and from the latest of each series and the new ones.
    MetricsInput all, latest;
    all.figures = *figs, all.flags = old.flags;
    latest.figures = view->latest, latest.flags = now.flags;
    CHECK(render_metrics(all, Exposition::openmetrics) == render_metrics(latest, Exposition::openmetrics));
}

TEST_CASE("fleet readers: memory grows with the series, not with the figures kept") {
    // 128 nodes of 4 GPUs (512 series), checked every 12 hours or every 90
    // minutes for 30 days: the second store keeps 8 times the figures. What
    // a reader holds is the series' summaries and one node's figures at a
    // time (a node here has 4 of the 512 series).
    auto peak = [](int every_minutes, std::size_t& figures) {
        TempDir d;
        const std::int64_t now = 1800000000;
        {
            auto s = Store::open(d.db());
            REQUIRE(s);
            int k = 0;
            for (std::int64_t t = now - 30 * kDay + 60; t < now; t += every_minutes * 60)
                for (int g = 0; g < 4; ++g) {  // one root check of 32 nodes at a time
                    CheckRecord r;
                    r.check = CheckRow{"c" + std::to_string(k++), Source::node_check, 0, t, "", "ok", {}};
                    for (int n = g * 32; n < g * 32 + 32; ++n)
                        for (int gpu = 0; gpu < 4; ++gpu) {
                            Figure f;
                            f.node = "node" + std::to_string(n), f.device = "gpu" + std::to_string(gpu);
                            f.peer_class = "H100", f.metric = Metric::gpu_h2d;
                            f.value = 25e9 * (1 + 0.01 * ((k * 7 + n * 3 + gpu) % 5 - 2));
                            r.figures.push_back(f);
                            ++figures;
                        }
                    REQUIRE(*s->insert(r));
                }
        }
        std::size_t text = 0;
        const auto c = gangway::test::cost_of([&] {
            auto in = gangway::sys::fleet::read_metrics_input(d.db(), now);
            REQUIRE(in);
            text = render_metrics(*in, Exposition::openmetrics).size();
        });
        CHECK(text > 0);
        return c.peak_bytes;
    };
    std::size_t few = 0, many = 0;
    const std::size_t peak_few = peak(720, few), peak_many = peak(90, many);
    INFO("figures " << few << " and " << many << ": peak heap " << peak_few << " and " << peak_many << " bytes");
    REQUIRE(many >= 8 * few - 600);
    // Schema 1's readers held every figure of the window (some 250 bytes
    // each): 8 times the figures, 8 times the memory.
    CHECK(peak_many < peak_few * 3 / 2);
    CHECK(peak_many < many * 16);
}

TEST_CASE("fleet store: a report is one row per node and day, however many figures it has") {
    TempDir d;
    auto s = Store::open(d.db());
    REQUIRE(s);
    CheckRecord r;
    r.check = CheckRow{"job-1", Source::job_check, 1001, 1800000000, "7", "ok", {"a", "b", "c"}};
    const std::vector<std::string> nodes{"a", "b", "c"};
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        for (int gpu = 0; gpu < 8; ++gpu)
            for (Metric m : {Metric::gpu_h2d, Metric::gpu_d2h}) {
                Figure f;
                f.node = nodes[i], f.device = "gpu" + std::to_string(gpu), f.metric = m, f.value = 5e10;
                r.figures.push_back(f);
            }
        Figure l;  // a link from each node to the next: kept under the first of the two by name
        l.node = nodes[i], l.peer = nodes[(i + 1) % 3], l.metric = Metric::link_bandwidth, l.value = 1e9;
        r.figures.push_back(l);
    }
    REQUIRE(*s->insert(r));
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(d.db().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    auto one = [&](const char* sql) {
        sqlite3_stmt* st = nullptr;
        REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
        REQUIRE(sqlite3_step(st) == SQLITE_ROW);
        const std::int64_t v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return v;
    };
    CHECK(one("SELECT count(*) FROM points") == 3);
    CHECK(one("SELECT sum(length(data)) / 24 FROM points") == std::int64_t(r.figures.size()));
    CHECK(one("SELECT count(*) FROM series") == std::int64_t(r.figures.size()));
    sqlite3_close(db);
    auto back = s->figures(0, 1900000000, {});
    REQUIRE(back);
    CHECK(back->size() == r.figures.size());
    for (const Figure& f : *back) CHECK(f.check_id == "job-1");

    // A link whose first node by name (its row's) has no figure of its own is read all the same.
    CheckRecord only;
    only.check = CheckRow{"job-2", Source::job_check, 1001, 1800000100, "8", "ok", {"z", "y"}};
    Figure zy;
    zy.node = "z", zy.peer = "y", zy.metric = Metric::link_bandwidth, zy.value = 2e9;
    only.figures.push_back(zy);
    REQUIRE(*s->insert(only));
    auto all = s->figures(0, 1900000000, {"z"});
    REQUIRE(all);
    REQUIRE(all->size() == 1);
    CHECK((*all)[0].peer == "y");
    CHECK((*all)[0].value == 2e9);
}

TEST_CASE("fleet store: schema 1 is converted by the first ingest; a reader refuses it until then") {
    TempDir d;
    {
        sqlite3* db = nullptr;
        REQUIRE(sqlite3_open(d.db().c_str(), &db) == SQLITE_OK);
        const char* v1 = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES('schema', '1');
CREATE TABLE checks(row INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, source TEXT NOT NULL, uid INTEGER NOT NULL,
  time INTEGER NOT NULL, job_id TEXT NOT NULL, verdict TEXT NOT NULL);
CREATE TABLE check_nodes(check_row INTEGER NOT NULL, node TEXT NOT NULL, PRIMARY KEY(check_row, node)) WITHOUT ROWID;
CREATE TABLE figures(check_row INTEGER NOT NULL, node TEXT NOT NULL, device TEXT NOT NULL, peer TEXT NOT NULL,
  peer_class TEXT NOT NULL, metric TEXT NOT NULL, value REAL NOT NULL, time INTEGER NOT NULL,
  source TEXT NOT NULL, uid INTEGER NOT NULL);
CREATE TABLE findings(check_row INTEGER NOT NULL, node TEXT NOT NULL, text TEXT NOT NULL, time INTEGER NOT NULL);
CREATE TABLE daily(node TEXT NOT NULL, day INTEGER NOT NULL, device TEXT NOT NULL, peer TEXT NOT NULL,
  peer_class TEXT NOT NULL, metric TEXT NOT NULL, source TEXT NOT NULL, uid INTEGER NOT NULL,
  value REAL NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(node, day, device, peer, peer_class, metric, source, uid)) WITHOUT ROWID;
INSERT INTO checks VALUES(1, 'c1', 'job_check', 1001, 1000000, '9', 'ok');
INSERT INTO figures VALUES(1, 'n2', '', 'n1', '', 'link_bandwidth', 1.5e9, 1000000, 'job_check', 1001);
INSERT INTO figures VALUES(1, 'n1', 'gpu0', '', 'H100', 'gpu_h2d', 2.5e10, 1000000, 'job_check', 1001);
INSERT INTO figures VALUES(1, 'n1', '', '', '', 'some_future_metric', 1, 1000000, 'job_check', 1001);
INSERT INTO daily VALUES('n1', 864000, 'gpu0', '', 'H100', 'gpu_h2d', 'node_check', 0, 2.4e10, 7);
)sql";
        REQUIRE(sqlite3_exec(db, v1, nullptr, nullptr, nullptr) == SQLITE_OK);
        sqlite3_close(db);
    }
    auto ro = Store::open(d.db(), OpenMode::read_only);
    REQUIRE_FALSE(ro);
    CHECK_THAT(ro.error(), Catch::Matchers::ContainsSubstring("schema 1"));
    CHECK_THAT(ro.error(), Catch::Matchers::ContainsSubstring("gangway fleet ingest"));

    auto rw = Store::open(d.db());
    REQUIRE(rw);
    // The converted store has schema 2's stops table too (issue 33): empty, and written to.
    REQUIRE(rw->stops(0, 2000000, {}));
    CHECK(rw->stops(0, 2000000, {})->empty());
    gangway::fleet::StopRow stop;
    stop.time = 1000;
    stop.job = 9;
    CHECK(*rw->insert_stop(stop));
    auto figs = rw->figures(0, 2000000, {});
    REQUIRE(figs);
    REQUIRE(figs->size() == 3);  // the metric this gangway does not know is left out, as schema 1's readers did
    CHECK((*figs)[0].node == "n1");
    CHECK((*figs)[0].daily);
    CHECK((*figs)[0].count == 7);
    CHECK((*figs)[0].value == 2.4e10);
    CHECK((*figs)[0].time == 864000);
    CHECK((*figs)[1].node == "n1");
    CHECK((*figs)[1].check_id == "c1");
    CHECK((*figs)[1].value == 2.5e10);
    CHECK((*figs)[1].uid == 1001);
    CHECK((*figs)[1].source == Source::job_check);
    CHECK((*figs)[2].node == "n2");
    CHECK((*figs)[2].peer == "n1");
    CHECK((*figs)[2].metric == Metric::link_bandwidth);
    // Converted once: a reader opens it now, and the check is still one check.
    auto again = Store::open(d.db(), OpenMode::read_only);
    REQUIRE(again);
    CheckRecord dup;
    dup.check = CheckRow{"c1", Source::job_check, 1001, 1000000, "9", "ok", {}};
    auto ins = rw->insert(dup);
    REQUIRE(ins);
    CHECK_FALSE(*ins);
}
