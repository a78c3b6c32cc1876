// The fleet's trends (issue 25, item 4, and its first "Done when"): a year of
// a synthetic 256-node fleet with a node losing 1 % a day, a link losing 2 %
// a day and one user's jobs calling a healthy node slow; the two faults are
// flagged within a week of their start and nothing else ever is.
#include "catch_compat.hpp"

#include <cmath>
#include <deque>
#include <set>

#include "../../lib/base/error.hpp"
#include "../../lib/fleet/synth.hpp"
#include "../../lib/fleet/trend.hpp"

using namespace gangway::fleet;

namespace {

constexpr std::int64_t kDay = 86400;

// A window of the last `days` days of a synthetic history, slid one day at a
// time, so that a year is drawn once and never held whole.
class Window {
public:
    Window(const SynthSettings& s, int days) : s_(s), days_(days) {}
    // The figures of days [day - days, day), i.e. up to the start of `day`.
    const std::vector<Figure>& until(int day) {
        while (next_ < day) {
            q_.push_back(synth_day(s_, next_++));
            if (static_cast<int>(q_.size()) > days_) q_.pop_front();
        }
        all_.clear();
        for (const auto& d : q_) all_.insert(all_.end(), d.begin(), d.end());
        return all_;
    }
    std::int64_t at(int day) const { return s_.start + day * kDay; }

private:
    SynthSettings s_;
    int days_, next_ = 0;
    std::deque<std::vector<Figure>> q_;
    std::vector<Figure> all_;
};

std::string what(const Flag& f) { return f.peer.empty() ? f.node + " " + to_string(f.metric) : f.node + "->" + f.peer; }

Figure fig(const std::string& node, std::int64_t t, double v, Source src = Source::node_check, std::uint32_t uid = 0,
           Metric m = Metric::gpu_h2d, const std::string& cls = "H100") {
    Figure f;
    f.check_id = node + "@" + std::to_string(t) + "/" + std::to_string(uid);
    f.time = t, f.value = v, f.source = src, f.uid = uid, f.node = node, f.metric = m, f.peer_class = cls;
    f.device = m == Metric::gpu_h2d ? "gpu0" : "";
    return f;
}

// A small fleet by hand: `nodes` nodes, one figure a node every 6 hours for
// 30 days, each `value(node, t)`, from root's node checks.
template <class Value>
std::vector<Figure> hand_fleet(int nodes, std::int64_t now, Value value, Source src = Source::node_check,
                               std::uint32_t uid = 0) {
    std::vector<Figure> out;
    for (int n = 0; n < nodes; ++n)
        for (std::int64_t t = now - 30 * kDay + 3600; t <= now; t += 6 * 3600) {
            const double wobble = 1 + 0.01 * ((t / 3600 + n * 7) % 5 - 2);  // +-2 %, no randomness needed
            out.push_back(fig(synth_node_name(static_cast<std::size_t>(n)), t, value(n, t) * wobble, src, uid));
        }
    return out;
}

}  // namespace

TEST_CASE("fleet trends: a year of 256 nodes flags the degrading node and link within a week, and nothing else") {
    const SynthSettings s;  // 256 nodes, the three faults (synth.hpp)
    const TrendSettings ts;
    Window w(s, 30);
    const std::string node = synth_node_name(s.degrading_node);
    const std::string link = synth_node_name(s.link_a) + "->" + synth_node_name(s.link_b);
    std::set<int> days;
    for (int d = 35; d < 365; d += 42) days.insert(d);  // the daily sweep is the next test's, on 64 nodes
    // The days just before each fault starts and a week after.
    for (int d : {s.node_from_day, s.node_from_day + 7, s.link_from_day, s.link_from_day + 7, s.liar_from_day + 3,
                  s.liar_from_day + 7})
        days.insert(d);
    for (int d : days) {
        const auto r = compute_trends(w.until(d), w.at(d), ts);
        INFO("day " << d);
        bool node_flagged = false, link_flagged = false;
        for (const Flag& f : r.flags) {
            INFO("flag " << what(f) << " recent " << f.recent << " baseline " << f.baseline << " peers " << f.peers);
            if (f.node == node && f.peer.empty() && f.metric == Metric::gpu_h2d) {
                node_flagged = true;
                CHECK(f.root);  // root's node checks saw it
                CHECK(f.since >= w.at(s.node_from_day));
                CHECK(!f.checks.empty());
                CHECK(f.checks.size() <= kFlagMaxChecks);
            } else if (what(f) == link) {
                link_flagged = true;
                CHECK(f.users >= 2);  // job checks of several users
                CHECK(f.since >= w.at(s.link_from_day));
            } else {
                FAIL("a healthy node or link is flagged");
            }
            CHECK(f.recent < f.baseline);
            CHECK(f.recent < f.peers);
        }
        CHECK(node_flagged == (d >= s.node_from_day + 7));
        CHECK(link_flagged == (d >= s.link_from_day + 7));
    }
}

TEST_CASE("fleet trends: a smaller fleet swept daily over a season flags nothing but its faults") {
    SynthSettings s;
    s.seed = 7, s.nodes = 64, s.jobs_per_day = 40, s.max_job_nodes = 16;
    s.node_from_day = 45, s.link_from_day = 1000, s.liar_from_day = 33, s.liar_node = 20, s.liar_jobs_per_day = 10;
    s.degrading_node = 5;
    Window w(s, 30);
    int first = -1;
    for (int d = 31; d < 75; ++d) {
        const auto r = compute_trends(w.until(d), w.at(d), {});
        INFO("day " << d);
        for (const Flag& f : r.flags) {
            INFO("flag " << what(f));
            REQUIRE(f.node == synth_node_name(5));
            REQUIRE(f.peer.empty());
            if (first < 0) first = d;
        }
    }
    CHECK(first > 45);
    CHECK(first <= 52);
}

TEST_CASE("fleet trends: one user's jobs alone never flag a node, however many they run") {
    const std::int64_t now = 1767225600 + 100 * kDay;
    // 8 healthy nodes from root's checks; user 1001 runs a job every hour on
    // n003 for the last 3 days and reports it at half its figure.
    // n004 is 4 % slower than the rest, always: below its peers, not below itself.
    auto figs = hand_fleet(8, now, [](int n, std::int64_t) { return n == 4 ? 24e9 : 25e9; });
    for (std::int64_t t = now - 3 * kDay + 60; t <= now; t += 3600)
        figs.push_back(fig("n003", t, 12.5e9, Source::job_check, 1001));
    auto r = compute_trends(figs, now);
    CHECK(r.flags.empty());
    // Its recent median is low: the rule, not the figures, keeps it unflagged.
    bool seen = false;
    for (const auto& t : r.series)
        if (t.node == "n003") {
            seen = true;
            REQUIRE(t.recent);
            CHECK(*t.recent < 20e9);
            CHECK_FALSE(t.degrading);
        }
    CHECK(seen);

    SECTION("a second user saying the same makes it a flag") {
        for (std::int64_t t = now - 3 * kDay + 90; t <= now; t += 3600)
            figs.push_back(fig("n003", t, 12.5e9, Source::job_check, 1002));
        r = compute_trends(figs, now);
        REQUIRE(r.flags.size() == 1);
        CHECK(r.flags[0].node == "n003");
        CHECK(r.flags[0].users == 2);
        CHECK_FALSE(r.flags[0].root);
    }
    SECTION("a user's node check is still that user's word; root's job check is root's (issue 34, item 4)") {
        // What a report is (its kind) says nothing of trust: the owner does.
        auto own = figs;
        for (std::int64_t t = now - 3 * kDay + 120; t <= now; t += 3600)
            own.push_back(fig("n003", t, 12.5e9, Source::node_check, 1001));
        CHECK(compute_trends(own, now).flags.empty());
        auto admin = figs;
        for (std::int64_t t = now - 3 * kDay + 120; t <= now; t += 3600)
            admin.push_back(fig("n003", t, 12.5e9, Source::job_check, 0));
        r = compute_trends(admin, now);
        REQUIRE(r.flags.size() == 1);
        CHECK(r.flags[0].node == "n003");
        CHECK(r.flags[0].root);
    }
    SECTION("nor can one user push a node's history up to make its honest figures look low") {
        // User 1001 reports n004 at twice its figure for the 27 days before
        // the recent window: n004's honest figures would then lie below its
        // own baseline as well as below its peers.
        for (std::int64_t t = now - 30 * kDay + 60; t < now - 3 * kDay; t += 1800)
            figs.push_back(fig("n004", t, 50e9, Source::job_check, 1001));
        r = compute_trends(figs, now);
        for (const auto& f : r.flags) CHECK(f.node != "n004");
    }
}

TEST_CASE("fleet trends: a drop root's node checks see is flagged, with its evidence") {
    const std::int64_t now = 1767225600 + 100 * kDay;
    const auto figs = hand_fleet(8, now, [&](int n, std::int64_t t) { return n == 2 && t > now - 3 * kDay ? 20e9 : 25e9; });
    const auto r = compute_trends(figs, now);
    REQUIRE(r.flags.size() == 1);
    const Flag& f = r.flags[0];
    CHECK(f.node == "n002");
    CHECK(f.metric == Metric::gpu_h2d);
    CHECK(f.device == "gpu0");
    CHECK(f.root);
    CHECK(f.users == 0);
    CHECK(f.recent == Approx(20e9).epsilon(0.03));
    CHECK(f.baseline == Approx(25e9).epsilon(0.03));
    CHECK(f.peers == Approx(25e9).epsilon(0.03));
    CHECK(f.since > now - 3 * kDay);
    CHECK(f.since < now - 3 * kDay + 6 * 3600);
    CHECK(f.checks.size() == 12);
    for (const auto& t : r.series) CHECK(t.degrading == (t.node == "n002"));
}

TEST_CASE("fleet trends: a whole class dropping together is no node's fault") {
    const std::int64_t now = 1767225600 + 100 * kDay;
    const auto figs = hand_fleet(8, now, [&](int, std::int64_t t) { return t > now - 3 * kDay ? 15e9 : 25e9; });
    const auto r = compute_trends(figs, now);
    CHECK(r.flags.empty());
    for (const auto& t : r.series) {
        REQUIRE(t.change());
        CHECK(*t.change() < -0.3);
    }
}

TEST_CASE("fleet trends: edge cases") {
    const std::int64_t now = 1767225600 + 100 * kDay;
    SECTION("an empty history") {
        const auto r = compute_trends({}, now);
        CHECK(r.series.empty());
        CHECK(r.flags.empty());
        CHECK(r.classes.empty());
    }
    SECTION("one node: no peers, never flagged, its row still shown") {
        const auto figs = hand_fleet(1, now, [&](int, std::int64_t t) { return t > now - 3 * kDay ? 10e9 : 25e9; });
        const auto r = compute_trends(figs, now);
        CHECK(r.flags.empty());
        REQUIRE(r.series.size() == 1);
        CHECK(r.series[0].baseline);
        CHECK(r.series[0].recent);
        CHECK_FALSE(r.series[0].peers);
        CHECK(*r.series[0].change() < -0.5);
    }
    SECTION("a new node with no history is judged by nothing yet") {
        auto figs = hand_fleet(8, now, [](int, std::int64_t) { return 25e9; });
        for (std::int64_t t = now - kDay; t <= now; t += 3600) figs.push_back(fig("new01", t, 5e9));
        const auto r = compute_trends(figs, now);
        CHECK(r.flags.empty());
        bool seen = false;
        for (const auto& t : r.series)
            if (t.node == "new01") {
                seen = true;
                CHECK(t.recent);
                CHECK_FALSE(t.baseline);
                CHECK(t.peers);
                CHECK(t.baseline_n == 0);
            }
        CHECK(seen);
    }
    SECTION("a peer class of one is not compared with the others") {
        auto figs = hand_fleet(8, now, [](int, std::int64_t) { return 25e9; });
        for (std::int64_t t = now - 30 * kDay; t <= now; t += 3600) {
            auto f = fig("odd01", t, t > now - 3 * kDay ? 5e9 : 40e9);
            f.peer_class = "A100";
            figs.push_back(f);
        }
        const auto r = compute_trends(figs, now);
        CHECK(r.flags.empty());
        for (const auto& t : r.series)
            if (t.node == "odd01") CHECK_FALSE(t.peers);
    }
    SECTION("figures outside the window and odd values are ignored") {
        std::vector<Figure> figs{fig("n000", now + 10, 1e9), fig("n000", now - 31 * kDay, 1e9)};
        figs.push_back(fig("n000", now - 10, std::nan("")));
        figs.push_back(fig("n000", now - 10, -5));
        CHECK(compute_trends(figs, now).series.empty());
    }
    SECTION("a link's two directions are one series") {
        std::vector<Figure> figs;
        for (int i = 0; i < 3; ++i) {
            auto f = fig("b", now - i * 60, 1e9, Source::job_check, 1001, Metric::link_bandwidth, "100G");
            f.peer = "a";
            figs.push_back(f);
            f.node = "a", f.peer = "b";
            figs.push_back(f);
        }
        const auto r = compute_trends(figs, now);
        REQUIRE(r.series.size() == 1);
        CHECK(r.series[0].node == "a");
        CHECK(r.series[0].peer == "b");
        CHECK(r.series[0].recent_n == 6);
    }
    SECTION("settings that make no sense are refused") {
        TrendSettings s;
        s.recent_s = s.history_s;
        CHECK_THROWS_AS(compute_trends({}, now, s), gangway::Error);
        s = {};
        s.k = -1;
        CHECK_THROWS_AS(compute_trends({}, now, s), gangway::Error);
    }
}

TEST_CASE("fleet trends: the synthetic history is the same for the same seed") {
    SynthSettings s;
    s.nodes = 16, s.jobs_per_day = 10;
    const auto a = synth_day(s, 3), b = synth_day(s, 3);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].value == b[i].value);
        CHECK(a[i].node == b[i].node);
    }
    s.seed = 2;
    CHECK(synth_day(s, 3)[0].value != a[0].value);
}
