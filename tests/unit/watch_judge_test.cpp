// The running job's judgement (issue 43) on synthetic jobs: N nodes of R
// ranks whose every rank computes for a period (plus jitter from a fixed
// seed) between collectives that complete when the last rank entered; a
// node may be slowed for a while, a rank may stop or leave the collectives
// to compute; each node's clock may be off. The nodes' records are what the
// agents would send: each rank's newest report (written at the interval's
// multiples of its node's clock), root's samples of the tasks and the
// node's pressure.
#include "catch_compat.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../../lib/watch/judge.hpp"

using namespace gangway;
using namespace gangway::watch;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;
using postmortem::PressureSample;
using postmortem::TaskSample;
using postmortem::TaskState;

namespace {

constexpr std::int64_t kMs = 1'000'000, kS = 1'000 * kMs;
constexpr std::int64_t T0 = 1'795'000'000 * kS;  // a multiple of the interval
constexpr std::int64_t kInterval = 10 * kS, kRound = 5 * kS;

std::uint64_t splitmix(std::uint64_t& s) {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
double unit(std::uint64_t& s) { return double(splitmix(s) >> 11) / double(1ULL << 53); }

enum class Leave { none, stopped, busy };

struct Sim {
    std::uint32_t nodes = 4, per_node = 2;
    std::int64_t period = 100 * kMs;  // each rank's compute between collectives
    std::int64_t jitter = 30 * kMs;   // up to this much more, each rank each collective
    double spike = 0;                 // the share of a rank's collectives it enters 5 periods late
    std::int64_t comm = 2 * kMs;      // a collective's own time once every rank entered
    std::uint64_t seed = 1;
    std::int64_t start = T0 - 300 * kS;
    std::vector<std::int64_t> offset;  // per node: its clock ahead of the true time
    struct Slow {
        std::uint32_t node;
        std::int64_t from, to, extra;
        int rank = -1;  // one rank of the node only
        std::uint64_t every = 1;  // only every this many collectives (a quota's throttling: bursts)
    };
    std::vector<Slow> slow;
    Leave leave = Leave::none;  // a rank that leaves the collectives at leave_at
    std::uint32_t leave_rank = 0;
    std::int64_t leave_at = 0;
    std::vector<double> wait_share;                 // per node: its tasks' share of time waiting for a CPU
    std::vector<std::uint32_t> cpu_p, mem_p, io_p;  // per node: its pressure
    std::string group = "0";

    std::vector<std::vector<std::int64_t>> enter;  // [rank][seq - 1]: true time
    std::vector<std::int64_t> done;                // [seq - 1]: when it completed
    std::uint64_t waiting_in = 0;                  // the collective the others wait in (a rank left)

    std::uint32_t ranks() const { return nodes * per_node; }
    std::uint32_t node_of(std::uint32_t r) const { return r / per_node; }
    static std::string name(std::uint32_t n) {
        char b[16];
        std::snprintf(b, sizeof b, "n%02u", n + 1);
        return b;
    }
    std::int64_t off(std::uint32_t n) const { return n < offset.size() ? offset[n] : 0; }
    std::int64_t extra(std::uint32_t r, std::int64_t t, std::uint64_t seq = 0) const {
        std::int64_t e = 0;
        for (const auto& s : slow)
            if (s.node == node_of(r) && (s.rank < 0 || std::uint32_t(s.rank) == r) && t >= s.from && t < s.to && seq % s.every == 0)
                e += s.extra;
        return e;
    }

    void run(std::int64_t until) {
        std::uint64_t rng = seed;
        enter.assign(ranks(), {});
        done.clear();
        std::int64_t t = start;
        for (std::uint64_t seq = 1;; ++seq) {
            std::int64_t last = t;
            bool all = true;
            for (std::uint32_t r = 0; r < ranks(); ++r) {
                std::int64_t e = t + period + std::int64_t(unit(rng) * double(jitter)) + extra(r, t, seq);
                if (unit(rng) < spike) e += 5 * period;
                if (leave != Leave::none && r == leave_rank && e >= leave_at) {
                    all = false;
                    continue;
                }
                enter[r].push_back(e);
                last = std::max(last, e);
            }
            if (!all) {
                waiting_in = seq;
                return;
            }
            t = last + comm;
            done.push_back(t);
            if (t > until) return;
        }
    }

    bool reports_at(std::uint32_t r, std::int64_t true_t) const {
        return !(leave == Leave::stopped && r == leave_rank && true_t >= leave_at);
    }

    // Rank r's report written at its node's time p.
    Pace pace(std::uint32_t r, std::int64_t p) const {
        const std::int64_t o = off(node_of(r)), tp = p - o;
        Pace out;
        out.rank = r, out.t_ns = p;
        GroupPace g;
        g.group = group;
        const auto& en = enter[r];
        const std::size_t entered = std::size_t(std::upper_bound(en.begin(), en.end(), tp) - en.begin());
        const std::size_t completed = std::size_t(std::upper_bound(done.begin(), done.end(), tp) - done.begin());
        g.entered = entered, g.completed = std::min(entered, completed);
        for (std::size_t i = entered > kMaxEnters ? entered - kMaxEnters : 0; i < entered; ++i) g.enters.push_back({i + 1, en[i] + o});
        out.groups.push_back(std::move(g));
        return out;
    }

    TaskSample sample(std::uint32_t r, std::int64_t node_t) const {
        const std::uint32_t n = node_of(r);
        const std::int64_t t = node_t - off(n), since = t - start;
        const double w = n < wait_share.size() ? wait_share[n] : 0.02;
        TaskSample s;
        s.t_ns = node_t, s.rank = r, s.procs = 1;
        s.state = TaskState::running;
        s.wait_ns = std::uint64_t(w * double(since));
        s.cpu_ns = std::uint64_t(0.6 * double(since));
        if (leave != Leave::none && r == leave_rank && t >= leave_at) {
            const double before = 0.6 * double(leave_at - start);
            if (leave == Leave::stopped) {
                s.state = TaskState::stopped, s.cpu_ns = std::uint64_t(before);
            } else {
                s.cpu_ns = std::uint64_t(before + 0.97 * double(t - leave_at));
            }
        }
        return s;
    }

    // Node n's record read at its time rt: each rank's newest report, the
    // newest 24 rounds of samples, the node's pressure each round.
    NodeProgress record(std::uint32_t n, std::int64_t rt) const {
        NodeProgress rec;
        rec.job = 77, rec.node = name(n), rec.t_ns = rt, rec.interval_ns = kInterval;
        for (std::uint32_t r = n * per_node; r < (n + 1) * per_node; ++r) {
            rec.ranks.push_back(r);
            std::int64_t p = rt - rt % kInterval;
            while (p > start && !reports_at(r, p - off(n))) p -= kInterval;
            if (p > start) rec.paces.push_back(pace(r, p));
        }
        for (int k = 23; k >= 0; --k) {
            const std::int64_t t = rt - k * kRound;
            for (std::uint32_t r : rec.ranks) rec.samples.push_back(sample(r, t));
            PressureSample ps;
            ps.t_ns = t;
            ps.cpu = n < cpu_p.size() ? cpu_p[n] : 100;
            ps.memory = n < mem_p.size() ? mem_p[n] : 50;
            ps.io = n < io_p.size() ? io_p[n] : 30;
            rec.pressure.push_back(ps);
        }
        return rec;
    }

    // What root holds at `now`: each node's newest kMaxHistory records, read
    // 1 s after each interval's multiple.
    std::vector<NodeProgress> history(std::int64_t now) const {
        std::vector<NodeProgress> h;
        for (std::uint32_t n = 0; n < nodes; ++n) {
            const std::int64_t newest = ((now + off(n) - kS) / kInterval) * kInterval + kS;
            for (std::size_t k = kMaxHistory; k-- > 0;) h.push_back(record(n, newest - std::int64_t(k) * kInterval));
        }
        return h;
    }

    Judgement judge_at(std::int64_t now, const JudgeSettings& s = {}) const { return watch::judge(history(now), now, s); }

    // The median time between collectives that completed in [from, to).
    std::int64_t step(std::int64_t from, std::int64_t to) const {
        std::vector<std::int64_t> gaps;
        for (std::size_t i = 1; i < done.size(); ++i)
            if (done[i - 1] >= from && done[i] < to) gaps.push_back(done[i] - done[i - 1]);
        std::sort(gaps.begin(), gaps.end());
        return gaps.empty() ? 0 : gaps[gaps.size() / 2];
    }
};

}  // namespace

TEST_CASE("a healthy job under heavy jitter: nothing named, whatever the seed", "[watch][judge]") {
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        Sim sim;
        sim.seed = seed, sim.jitter = 80 * kMs, sim.spike = 0.02;
        sim.run(T0 + 200 * kS);
        for (std::int64_t now = T0 + 2 * kS; now <= T0 + 120 * kS; now += kInterval) {
            INFO("seed " << seed << " at " << (now - T0) / kS << " s");
            const Judgement j = sim.judge_at(now);
            CHECK_FALSE(j.straggler);
            CHECK_FALSE(j.hang);
            CHECK(j.ranks_reporting == 8);
            CHECK(j.ranks_expected == 8);
            CHECK(j.notes.empty());
            // The period, the mean jitter's worst of 8 ranks, a spike now and then.
            CHECK(j.pace_ns > 150 * kMs);
            CHECK(j.pace_ns < 220 * kMs);
            std::uint64_t newest = 0;
            for (std::uint32_t r = 0; r < sim.ranks(); ++r) newest = std::max(newest, sim.pace(r, now - now % kInterval).groups[0].entered);
            CHECK(j.collectives == newest);
            CHECK(judgement_line(j).empty());
        }
    }
}

TEST_CASE("a node slowed mid-run is named within `sustain` intervals, with its ranks and the slowdown", "[watch][judge]") {
    Sim sim;
    const std::int64_t from = T0 + 33 * kS;
    sim.slow.push_back({2, from, T0 + 1000 * kS, 60 * kMs});
    sim.run(T0 + 200 * kS);
    const JudgeSettings s;
    std::int64_t first = 0;
    for (std::int64_t now = T0 + 2 * kS; now <= T0 + 150 * kS; now += kInterval) {
        INFO("at " << (now - T0) / kS << " s");
        const Judgement j = sim.judge_at(now);
        if (now < from + (s.sustain - 1) * kInterval) CHECK_FALSE(j.straggler);
        if (j.straggler && !first) first = now;
        if (now >= from + (s.sustain + 1) * kInterval + 2 * kS) REQUIRE(j.straggler);
        CHECK_FALSE(j.hang);
    }
    CHECK(first != 0);
    const Judgement j = sim.judge_at(T0 + 122 * kS);
    REQUIRE(j.straggler);
    const Straggler& st = *j.straggler;
    CHECK(st.node == "n03");
    CHECK(st.ranks == std::vector<std::uint32_t>{4, 5});
    CHECK(st.group == "0");
    CHECK(st.intervals >= 8);
    CHECK(st.lead_ns > 45 * kMs);
    CHECK(st.lead_ns < 75 * kMs);
    const double truth = double(sim.step(from + 20 * kS, T0 + 122 * kS)) / double(sim.step(sim.start, from));
    CHECK(truth > 1.3);
    CHECK(st.slowdown == Approx(truth).epsilon(0.1));
    CHECK(st.reason == Reason::none);  // root's samples are alike everywhere
    CHECK(st.evidence.empty());
    CHECK_THAT(judgement_line(j), StartsWith("straggler: n03 (ranks 4, 5), "));

    SECTION("one rank of the node slowed: only it is named") {
        Sim one;
        one.nodes = 3, one.per_node = 4;
        one.slow.push_back({1, T0 - 100 * kS, T0 + 1000 * kS, 60 * kMs, 5});
        one.run(T0 + 200 * kS);
        const Judgement k = one.judge_at(T0 + 62 * kS);
        REQUIRE(k.straggler);
        CHECK(k.straggler->node == "n02");
        CHECK(k.straggler->ranks == std::vector<std::uint32_t>{5});
    }
}

TEST_CASE("a node that recovers is no longer named", "[watch][judge]") {
    Sim sim;
    sim.slow.push_back({1, T0 - 100 * kS, T0 + 60 * kS, 80 * kMs});
    sim.run(T0 + 200 * kS);
    const Judgement during = sim.judge_at(T0 + 52 * kS);
    REQUIRE(during.straggler);
    CHECK(during.straggler->node == "n02");
    CHECK(during.straggler->intervals >= 10);
    for (std::int64_t now = T0 + 72 * kS; now <= T0 + 140 * kS; now += kInterval) {
        INFO("at " << (now - T0) / kS << " s");
        CHECK_FALSE(sim.judge_at(now).straggler);
    }
}

TEST_CASE("a node's clock off by less than min_lead is not a straggler", "[watch][judge]") {
    Sim sim;
    sim.period = 50 * kMs, sim.jitter = 2 * kMs;  // min_share of the pace is ~10 ms: min_lead decides
    sim.offset = {0, 15 * kMs, 0, 0};
    sim.run(T0 + 200 * kS);
    const Judgement j = sim.judge_at(T0 + 92 * kS);
    CHECK(j.pace_ns < 60 * kMs);
    CHECK_FALSE(j.straggler);
    SECTION("beyond min_lead an offset looks like a slow node: the threshold is what keeps clocks out") {
        sim.offset = {0, 30 * kMs, 0, 0};
        const Judgement k = sim.judge_at(T0 + 92 * kS);
        REQUIRE(k.straggler);
        CHECK(k.straggler->node == "n02");
    }
}

TEST_CASE("a straggler's figures must be recent: a job that stopped reporting names no straggler", "[watch][judge]") {
    Sim sim;
    sim.slow.push_back({2, T0 - 100 * kS, T0 + 1000 * kS, 60 * kMs});
    sim.leave = Leave::stopped, sim.leave_rank = 0, sim.leave_at = T0 + 23 * kS;
    sim.run(T0 + 300 * kS);
    REQUIRE(sim.judge_at(T0 + 22 * kS).straggler);
    CHECK_FALSE(sim.judge_at(T0 + 52 * kS).straggler);  // the newest collectives in common ended at T0 + 23 s
    const Judgement j = sim.judge_at(T0 + 113 * kS);
    CHECK_FALSE(j.straggler);
    REQUIRE(j.hang);
    CHECK(j.hang->missing == std::vector<std::uint32_t>{0});
}

TEST_CASE("a job on one node has no straggler", "[watch][judge]") {
    Sim sim;
    sim.nodes = 1, sim.per_node = 4;
    sim.slow.push_back({0, T0 - 100 * kS, T0 + 1000 * kS, 80 * kMs});
    sim.run(T0 + 200 * kS);
    const Judgement j = sim.judge_at(T0 + 62 * kS);
    CHECK(j.pace_ns > 0);
    CHECK_FALSE(j.straggler);
}

TEST_CASE("a stopped rank: a hang naming it, confirmed by root, after the limit only", "[watch][judge]") {
    Sim sim;
    sim.leave = Leave::stopped, sim.leave_rank = 5, sim.leave_at = T0 + 23 * kS;
    sim.run(T0 + 300 * kS);
    REQUIRE(sim.waiting_in > 0);
    // The others entered it; rank 5 did not.
    CHECK(sim.enter[4].size() == sim.waiting_in);
    CHECK(sim.enter[5].size() == sim.waiting_in - 1);

    // Its newest report (T0 + 20 s) is more than 1.5 intervals old.
    CHECK(sim.judge_at(T0 + 36 * kS).ranks_reporting == 7);
    CHECK(sim.judge_at(T0 + 34 * kS).ranks_reporting == 8);
    const Judgement early = sim.judge_at(T0 + 23 * kS + 45 * kS);
    CHECK_FALSE(early.hang);
    CHECK_FALSE(early.straggler);
    CHECK(early.ranks_reporting == 7);
    CHECK(early.notes == std::vector<std::string>{"7 of 8 ranks reported"});

    const Judgement j = sim.judge_at(T0 + 23 * kS + 90 * kS);
    REQUIRE(j.hang);
    const Hang& h = *j.hang;
    CHECK(h.group == "0");
    CHECK(h.waiting_in == sim.waiting_in);
    CHECK(h.missing == std::vector<std::uint32_t>{5});
    CHECK(h.nodes == std::vector<std::string>{"n03"});
    CHECK(h.limit_ns == JudgeSettings{}.hang_min_ns);
    CHECK(h.since_ns >= sim.leave_at);
    CHECK(h.since_ns <= sim.leave_at + kInterval);
    CHECK(h.for_ns == T0 + 113 * kS - h.since_ns);
    CHECK(h.confirmed);
    CHECK(h.evidence == "rank 5 stopped (T) on n03");
    CHECK_FALSE(j.straggler);
    CHECK_THAT(judgement_line(j), StartsWith("hang: rank 5 (n03) did not enter collective " + std::to_string(sim.waiting_in) +
                                             " of group 0 that the others wait in for "));
    CHECK_THAT(judgement_line(j), ContainsSubstring("; rank 5 stopped (T) on n03"));

    SECTION("its stale report dropped by its agent: still missing, root placed it") {
        auto hist = sim.history(T0 + 113 * kS);
        for (auto& r : hist) r.paces.erase(std::remove_if(r.paces.begin(), r.paces.end(), [](const Pace& p) { return p.rank == 5; }), r.paces.end());
        const Judgement late = judge(hist, T0 + 113 * kS);
        REQUIRE(late.hang);
        CHECK(late.hang->missing == std::vector<std::uint32_t>{5});
        CHECK(late.hang->confirmed);
    }
    SECTION("in uninterruptible sleep rather than stopped") {
        auto hist = sim.history(T0 + 113 * kS);
        for (auto& r : hist)
            for (auto& s : r.samples)
                if (s.state == TaskState::stopped) s.state = TaskState::disk_wait;
        const Judgement k = judge(hist, T0 + 113 * kS);
        REQUIRE(k.hang);
        CHECK(k.hang->confirmed);
        CHECK(k.hang->evidence == "rank 5 in uninterruptible sleep (D) on n03");
    }
    SECTION("no root samples of it: not confirmed") {
        auto hist = sim.history(T0 + 113 * kS);
        for (auto& r : hist) r.samples.clear();
        const Judgement k = judge(hist, T0 + 113 * kS);
        REQUIRE(k.hang);
        CHECK_FALSE(k.hang->confirmed);
        CHECK(k.hang->evidence == "no root samples of rank 5");
        CHECK_THAT(judgement_line(k), StartsWith("hang (unconfirmed): rank 5 (n03)"));
    }
}

TEST_CASE("a rank stopped mid-collective: the others still in the one before are its victims, not named", "[watch][judge]") {
    // Seen in CI on 26.05: rank 5 stopped after sending part of its ring's
    // chunks; ranks 0-3 completed the collective and entered the next,
    // ranks 4-7 wait in it still, asleep. Only rank 5 (n03) holds the job.
    Sim sim;
    sim.leave = Leave::stopped, sim.leave_rank = 5, sim.leave_at = T0 + 23 * kS;
    sim.run(T0 + 300 * kS);
    REQUIRE(sim.waiting_in > 1);
    const std::uint64_t last = sim.waiting_in - 1;
    const std::int64_t now = T0 + 113 * kS;
    auto hist = sim.history(now);
    for (auto& rec : hist) {
        for (auto& p : rec.paces) {
            if (p.rank < 4 || p.t_ns < sim.leave_at) continue;
            GroupPace& g = p.groups.at(0);
            g.entered = std::min<std::uint64_t>(g.entered, last), g.completed = std::min<std::uint64_t>(g.completed, last - 1);
            g.enters.erase(std::remove_if(g.enters.begin(), g.enters.end(), [&](const GroupPace::Enter& e) { return e.seq > last; }), g.enters.end());
        }
        for (auto& s : rec.samples)  // asleep in gloo's wait: no CPU since
            if (s.rank >= 4 && s.rank != 5 && s.t_ns >= sim.leave_at) s.cpu_ns = std::uint64_t(0.6 * double(sim.leave_at - sim.start));
    }
    const Judgement j = judge(hist, now);
    REQUIRE(j.hang);
    CHECK(j.hang->missing == std::vector<std::uint32_t>{5});
    CHECK(j.hang->nodes == std::vector<std::string>{"n03"});
    CHECK(j.hang->confirmed);
    CHECK(j.hang->evidence == "rank 5 stopped (T) on n03");

    SECTION("a victim in D for one sample (a page fault) is not taken for the hang") {
        for (auto& rec : hist) {
            TaskSample* newest = nullptr;
            for (auto& t : rec.samples)
                if (t.rank == 6 && (!newest || t.t_ns > newest->t_ns)) newest = &t;
            if (newest) newest->state = TaskState::disk_wait;
        }
        const Judgement k = judge(hist, now);
        REQUIRE(k.hang);
        CHECK(k.hang->missing == std::vector<std::uint32_t>{5});
    }
    SECTION("none of them held by root's view: every one that did not enter is named") {
        for (auto& rec : hist)
            for (auto& s : rec.samples)
                if (s.state == TaskState::stopped) s.state = TaskState::sleeping;
        const Judgement k = judge(hist, now);
        REQUIRE(k.hang);
        CHECK(k.hang->missing == std::vector<std::uint32_t>{4, 5, 6, 7});
        CHECK(k.hang->nodes == std::vector<std::string>{"n03", "n04"});
    }
}

TEST_CASE("a rank busy on a CPU outside the collectives: an unconfirmed hang", "[watch][judge]") {
    Sim sim;
    sim.leave = Leave::busy, sim.leave_rank = 5, sim.leave_at = T0 + 23 * kS;
    sim.run(T0 + 300 * kS);
    const Judgement j = sim.judge_at(T0 + 113 * kS);
    CHECK(j.ranks_reporting == 8);  // it still reports
    REQUIRE(j.hang);
    CHECK(j.hang->missing == std::vector<std::uint32_t>{5});
    CHECK_FALSE(j.hang->confirmed);
    CHECK(j.hang->evidence == "rank 5 on n03 is on a CPU 97% of the time: busy outside collectives, not hung");
}

TEST_CASE("a long pace lengthens the hang's limit", "[watch][judge]") {
    Sim sim;
    sim.period = 8 * kS, sim.jitter = 100 * kMs;  // hang_paces x 8 s: 80 s rather than 60
    sim.leave = Leave::stopped, sim.leave_rank = 2, sim.leave_at = T0 + 3 * kS;
    sim.start = T0 - 400 * kS;
    sim.run(T0 + 400 * kS);
    const std::int64_t last_done = sim.done.back();
    // 70 s after the last completion: past 60 s, not past 80.
    const Judgement j = sim.judge_at(last_done + 72 * kS);
    CHECK(j.pace_ns > 8 * kS);
    CHECK_FALSE(j.hang);
    const Judgement k = sim.judge_at(last_done + 100 * kS);
    REQUIRE(k.hang);
    CHECK(k.hang->limit_ns == 10 * k.pace_ns);
    CHECK(k.hang->missing == std::vector<std::uint32_t>{2});
}

TEST_CASE("root's reason for the straggler's node: CPU wait, then pressure", "[watch][judge]") {
    Sim sim;
    sim.slow.push_back({2, T0 - 100 * kS, T0 + 1000 * kS, 60 * kMs});
    sim.run(T0 + 200 * kS);

    SECTION("its ranks waited for a CPU") {
        sim.wait_share = {0.03, 0.03, 0.48, 0.03};
        const Judgement j = sim.judge_at(T0 + 62 * kS);
        REQUIRE(j.straggler);
        CHECK(j.straggler->reason == Reason::cpu_wait);
        CHECK(j.straggler->evidence == "n03's ranks waited for a CPU 48% of the time, the other nodes' 3%");
        CHECK_THAT(judgement_line(j), ContainsSubstring("slower for it; n03's ranks waited for a CPU 48% of the time, the other nodes' 3%"));
    }
    SECTION("a little more than the others is not a reason") {
        sim.wait_share = {0.06, 0.06, 0.12, 0.06};
        const Judgement j = sim.judge_at(T0 + 62 * kS);
        REQUIRE(j.straggler);
        CHECK(j.straggler->reason == Reason::none);
        CHECK(j.straggler->evidence.empty());
    }
    SECTION("its memory under pressure") {
        sim.mem_p = {200, 200, 3500, 250};
        const Judgement j = sim.judge_at(T0 + 62 * kS);
        REQUIRE(j.straggler);
        CHECK(j.straggler->reason == Reason::memory_pressure);
        CHECK(j.straggler->evidence == "n03's memory pressure 35% (some avg10), the other nodes' 2%");
    }
    SECTION("pressure high everywhere is not the node's") {
        sim.io_p = {2500, 2600, 3000, 2550};
        const Judgement j = sim.judge_at(T0 + 62 * kS);
        REQUIRE(j.straggler);
        CHECK(j.straggler->reason == Reason::none);
    }
    SECTION("no samples: the ranks' word only") {
        auto hist = sim.history(T0 + 62 * kS);
        for (auto& r : hist) r.samples.clear(), r.pressure.clear();
        const Judgement j = judge(hist, T0 + 62 * kS);
        REQUIRE(j.straggler);
        CHECK(j.straggler->reason == Reason::none);
    }
    CHECK(std::string(reason_name(Reason::cpu_wait)) == "cpu_wait");
    CHECK(std::string(reason_name(Reason::io_pressure)) == "io_pressure");
}

TEST_CASE("a report of a rank root did not place on its record's node is ignored", "[watch][judge]") {
    // Rank 5 (n03) reports nothing; reports late by 300 ms in its name...
    Sim sim;
    sim.run(T0 + 200 * kS);
    constexpr std::int64_t now = T0 + 62 * kS;
    auto forge = [&sim](const std::string& carrier) {
        auto hist = sim.history(now);
        std::vector<Pace> late;
        for (auto& r : hist) {
            if (r.node != "n03") continue;
            for (auto it = r.paces.begin(); it != r.paces.end();) {
                if (it->rank != 5) {
                    ++it;
                    continue;
                }
                for (auto& e : it->groups[0].enters) e.t_ns += 300 * kMs;
                late.push_back(*it);
                it = r.paces.erase(it);
            }
        }
        std::size_t i = 0;
        for (auto& r : hist)
            if (r.node == carrier) r.paces.push_back(late[i++ % late.size()]);
        return judge(hist, now);
    };
    SECTION("...carried by its own node: n03 is named (the control)") {
        const Judgement j = forge("n03");
        REQUIRE(j.straggler);
        CHECK(j.straggler->node == "n03");
        CHECK(j.straggler->ranks == std::vector<std::uint32_t>{5});
    }
    SECTION("...carried by n01's record: ignored, nobody named") {
        const Judgement j = forge("n01");
        CHECK_FALSE(j.straggler);
        CHECK(j.ranks_reporting == 7);
        CHECK(j.notes == std::vector<std::string>{"24 reports of ranks root did not place on their node ignored", "7 of 8 ranks reported"});
    }
}

TEST_CASE("a rank reporting a collective twice: the first report counts", "[watch][judge]") {
    Sim sim;
    sim.run(T0 + 200 * kS);
    const std::int64_t now = T0 + 62 * kS;
    auto hist = sim.history(now);
    // Rank 4's newest reports repeat their enters 300 ms later, as a later report.
    for (auto& r : hist)
        for (auto& p : r.paces)
            if (p.rank == 4) {
                Pace again = p;
                again.t_ns += 1;
                for (auto& e : again.groups[0].enters) e.t_ns += 300 * kMs;
                r.paces.push_back(again);
                break;
            }
    CHECK_FALSE(judge(hist, now).straggler);
}

TEST_CASE("the busiest group is judged", "[watch][judge]") {
    Sim sim;
    sim.slow.push_back({3, T0 - 100 * kS, T0 + 1000 * kS, 60 * kMs});
    sim.run(T0 + 200 * kS);
    auto hist = sim.history(T0 + 62 * kS);
    // A second group, "pp", with fewer collectives, where n01 is late.
    for (auto& r : hist)
        for (auto& p : r.paces) {
            GroupPace g = p.groups[0];
            g.group = "pp";
            g.entered /= 2, g.completed /= 2;
            for (auto& e : g.enters) e.seq /= 2, e.t_ns += (p.rank < 2 ? 500 * kMs : 0);
            p.groups.push_back(g);
        }
    const Judgement j = judge(hist, T0 + 62 * kS);
    REQUIRE(j.straggler);
    CHECK(j.straggler->group == "0");
    CHECK(j.straggler->node == "n04");
}

TEST_CASE("no reports, or some: notes; nothing named", "[watch][judge]") {
    Sim sim;
    sim.run(T0 + 200 * kS);
    auto hist = sim.history(T0 + 62 * kS);
    for (auto& r : hist) r.paces.clear();
    const Judgement j = judge(hist, T0 + 62 * kS);
    CHECK(j.ranks_expected == 8);
    CHECK(j.ranks_reporting == 0);
    CHECK(j.notes == std::vector<std::string>{
                         "no rank reported its pace (the torch hook needs PyTorch 2.5 or later and the Flight Recorder): root's view only"});
    CHECK_FALSE(j.straggler);
    CHECK_FALSE(j.hang);
    CHECK(judgement_line(j).empty());
    CHECK(judge({}, T0).notes == std::vector<std::string>{"no progress record: nothing to judge"});
}

TEST_CASE("the judgement's line", "[watch][judge]") {
    Judgement j;
    CHECK(judgement_line(j).empty());
    Straggler s;
    s.node = "node10", s.ranks = {4, 5}, s.group = "0", s.lead_ns = 180 * kMs, s.pace_ns = 345 * kMs, s.slowdown = 2.09, s.intervals = 4;
    s.reason = Reason::cpu_wait, s.evidence = "node10's ranks waited for a CPU 48% of the time, the other nodes' 3%";
    j.straggler = s;
    CHECK(judgement_line(j) ==
          "straggler: node10 (ranks 4, 5), 180 ms later than the next node a collective, the job 2.1x slower for it; "
          "node10's ranks waited for a CPU 48% of the time, the other nodes' 3%");
    j.straggler->reason = Reason::none, j.straggler->evidence.clear(), j.straggler->ranks = {0, 1, 2, 3, 7};
    CHECK(judgement_line(j) == "straggler: node10 (ranks 0-3, 7), 180 ms later than the next node a collective, the job 2.1x slower for it");

    Hang h;
    h.group = "0", h.waiting_in = 812, h.since_ns = T0, h.for_ns = 75 * kS, h.limit_ns = 60 * kS;
    h.missing = {5}, h.nodes = {"node10"}, h.confirmed = true, h.evidence = "rank 5 stopped (T) on node10";
    j.hang = h;
    const std::string hang = "hang: rank 5 (node10) did not enter collective 812 of group 0 that the others wait in for 75 s; rank 5 stopped (T) on node10";
    CHECK(judgement_line(j) == "straggler: node10 (ranks 0-3, 7), 180 ms later than the next node a collective, the job 2.1x slower for it; " + hang);
    j.straggler.reset();
    CHECK(judgement_line(j) == hang);
    j.hang->missing.clear(), j.hang->nodes.clear(), j.hang->confirmed = false;
    j.hang->evidence = "rank 0 on node01 is on a CPU 99% of the time: busy outside collectives, not hung";
    CHECK(judgement_line(j) ==
          "hang (unconfirmed): every rank entered collective 812 of group 0 and none completed it for 75 s; "
          "rank 0 on node01 is on a CPU 99% of the time: busy outside collectives, not hung");
    j.hang->group = "a\nb";  // the user's name: still one line
    CHECK(judgement_line(j).find('\n') == std::string::npos);
}

// Where no rank reports its pace (torch before 2.8 keeps no Flight Recorder
// for gloo): root's samples alone, and only what they say beyond doubt.
namespace {
std::vector<NodeProgress> without_paces(std::vector<NodeProgress> h) {
    for (auto& r : h) r.paces.clear();
    return h;
}
}  // namespace

TEST_CASE("root's view alone: a node whose ranks wait for a CPU in every recent report is the straggler", "[watch][judge]") {
    Sim sim;
    sim.run(T0 + 200 * kS);
    const std::int64_t now = T0 + 100 * kS;
    // Healthy: every node waits a little.
    Judgement j = judge(without_paces(sim.history(now)), now);
    CHECK_FALSE(j.straggler);
    CHECK_FALSE(j.hang);
    REQUIRE_FALSE(j.notes.empty());
    CHECK_THAT(j.notes.front(), ContainsSubstring("root's view only"));
    // Node n03's ranks wait for a CPU 45% of the time, the others 2%.
    sim.wait_share = {0.02, 0.02, 0.45, 0.02};
    j = judge(without_paces(sim.history(now)), now);
    REQUIRE(j.straggler);
    CHECK(j.straggler->node == "n03");
    CHECK(j.straggler->ranks == std::vector<std::uint32_t>{4, 5});
    CHECK(j.straggler->reason == Reason::cpu_wait);
    CHECK(j.straggler->pace_ns == 0);
    CHECK_THAT(judgement_line(j), StartsWith("straggler: n03 (ranks 4, 5), by root's view alone"));
    CHECK_THAT(judgement_line(j), ContainsSubstring("waited for a CPU at least 45%"));
    // A busy machine where every node waits, one a little more: not beyond doubt.
    sim.wait_share = {0.10, 0.10, 0.15, 0.10};
    CHECK_FALSE(judge(without_paces(sim.history(now)), now).straggler);
    // Reports with no process group (torch without a Flight Recorder) are no pace: the same.
    sim.wait_share = {0.02, 0.02, 0.45, 0.02};
    auto empty = sim.history(now);
    for (auto& r : empty)
        for (auto& p : r.paces) p.groups.clear();
    const Judgement e = judge(empty, now);
    CHECK(e.ranks_reporting == 0);
    REQUIRE(e.straggler);
    CHECK(e.straggler->node == "n03");
    // Too few reports of that node to say it is sustained.
    sim.wait_share = {0.02, 0.02, 0.45, 0.02};
    auto h = without_paces(sim.history(now));
    std::vector<NodeProgress> few;
    for (auto& r : h)
        if (r.node != "n03" || r.t_ns >= now - 2 * kInterval) few.push_back(r);
    CHECK_FALSE(judge(few, now).straggler);
}

TEST_CASE("root's view alone: a rank stopped for the hang limit is a confirmed hang", "[watch][judge]") {
    Sim sim;
    sim.leave = Leave::stopped, sim.leave_rank = 5, sim.leave_at = T0 + 30 * kS;
    sim.run(T0 + 200 * kS);
    // 50 s stopped: not yet.
    CHECK_FALSE(judge(without_paces(sim.history(T0 + 80 * kS)), T0 + 80 * kS).hang);
    const std::int64_t now = T0 + 100 * kS;
    const Judgement j = judge(without_paces(sim.history(now)), now);
    REQUIRE(j.hang);
    CHECK(j.hang->confirmed);
    CHECK(j.hang->missing == std::vector<std::uint32_t>{5});
    CHECK(j.hang->nodes == std::vector<std::string>{"n03"});
    CHECK(j.hang->for_ns >= 60 * kS);
    CHECK(j.hang->for_ns <= 75 * kS);
    CHECK_THAT(judgement_line(j), StartsWith("hang: rank 5 (n03) held for "));
    CHECK_THAT(judgement_line(j), ContainsSubstring("rank 5 stopped (T) on n03"));
    // A rank busy on a CPU is no hang by root's view.
    Sim busy;
    busy.leave = Leave::busy, busy.leave_rank = 5, busy.leave_at = T0 + 30 * kS;
    busy.run(T0 + 200 * kS);
    CHECK_FALSE(judge(without_paces(busy.history(now)), now).hang);
}

// A slow link: every rank's collectives slow alike (no rank enters last),
// and root's reading of one node's link shows it holding back what the job
// sends (its qdisc's overlimits and drops).
namespace {
// Each record gets the node's eth1 counters at its time: `held` packets a
// second held back from `from` on by the nodes in `holding`.
std::vector<NodeProgress> with_links(std::vector<NodeProgress> h, const std::vector<std::string>& holding, std::int64_t from,
                                     std::uint64_t held) {
    for (auto& r : h) {
        LinkQueue q;
        q.name = "eth1";
        q.tx_bytes = std::uint64_t(r.t_ns - (T0 - 400 * kS)) / 1000;
        if (std::find(holding.begin(), holding.end(), r.node) != holding.end() && r.t_ns > from) {
            q.qdisc_overlimits = held * std::uint64_t((r.t_ns - from) / kS);
            q.qdisc_drops = q.qdisc_overlimits / 20;
        }
        r.links.push_back(q);
        LinkQueue other;  // a second link that holds nothing back: the one that does is named
        other.name = "eth0";
        r.links.push_back(other);
    }
    return h;
}
}  // namespace

TEST_CASE("a node whose link holds the job back is the straggler, with the network as the reason", "[watch][judge]") {
    Sim sim;
    const std::int64_t from = T0 + 30 * kS;
    for (std::uint32_t n = 0; n < 4; ++n) sim.slow.push_back({n, from, T0 + 1000 * kS, 150 * kMs});
    sim.run(T0 + 200 * kS);
    const std::int64_t now = T0 + 100 * kS;
    // The pace alone names nobody: every rank slowed alike.
    CHECK_FALSE(sim.judge_at(now).straggler);
    Judgement j = judge(with_links(sim.history(now), {"n03"}, from, 200), now);
    REQUIRE(j.straggler);
    CHECK(j.straggler->node == "n03");
    CHECK(j.straggler->ranks == std::vector<std::uint32_t>{4, 5});
    CHECK(j.straggler->reason == Reason::network);
    CHECK(j.straggler->best_pace_ns > 100 * kMs);
    CHECK(j.straggler->best_pace_ns < 200 * kMs);
    CHECK(j.straggler->slowdown > 1.5);
    CHECK(j.straggler->slowdown < 3);
    CHECK_THAT(judgement_line(j), StartsWith("straggler: n03 (ranks 4, 5), its link holds the job back: a collective every "));
    CHECK_THAT(judgement_line(j), ContainsSubstring("n03's eth1 held back 2000 packets past its rate, dropped 100"));
    // Before the link held anything back, or too little of it: nothing.
    CHECK_FALSE(judge(with_links(sim.history(from + 15 * kS), {"n03"}, from, 200), from + 15 * kS).straggler);
    CHECK_FALSE(judge(with_links(sim.history(now), {"n03"}, from, 2), now).straggler);
    // Root's view alone (no pace): named by its link.
    j = judge(without_paces(with_links(sim.history(now), {"n03"}, from, 200)), now);
    REQUIRE(j.straggler);
    CHECK(j.straggler->reason == Reason::network);
    CHECK_THAT(judgement_line(j), StartsWith("straggler: n03 (ranks 4, 5), by root's view alone"));
}

TEST_CASE("a link that queues while the job keeps its pace holds nothing back", "[watch][judge]") {
    Sim sim;
    const std::int64_t from = T0 + 30 * kS;
    sim.run(T0 + 200 * kS);
    const std::int64_t now = T0 + 100 * kS;
    CHECK_FALSE(judge(with_links(sim.history(now), {"n03"}, from, 200), now).straggler);
}

TEST_CASE("a node slowed to seconds a collective is still named: intervals with too few collectives join", "[watch][judge]") {
    Sim sim;
    const std::int64_t from = T0 + 33 * kS;
    sim.slow.push_back({2, from, T0 + 1000 * kS, 1500 * kMs});  // 3 to 4 collectives an interval
    sim.run(T0 + 300 * kS);
    std::int64_t first = 0;
    for (std::int64_t now = from; now <= from + 120 * kS && !first; now += kS)
        if (const auto j = sim.judge_at(now); j.straggler && j.straggler->node == "n03") first = now;
    REQUIRE(first > 0);
    CHECK(first - from <= 90 * kS);
    const Judgement j = sim.judge_at(first + 20 * kS);
    REQUIRE(j.straggler);
    CHECK(j.straggler->node == "n03");
    CHECK(j.straggler->slowdown > 3);
}

TEST_CASE("a node that holds the others up in bursts (a CPU quota's throttling) is named by the time they waited for it", "[watch][judge]") {
    Sim sim;
    sim.period = 20 * kMs, sim.jitter = 8 * kMs;
    const std::int64_t from = T0 + 33 * kS;
    // Every 4th collective, node n03's ranks come 80 ms late: no median moves.
    sim.slow.push_back({2, from, T0 + 1000 * kS, 80 * kMs, -1, 4});
    sim.run(T0 + 200 * kS);
    const Judgement before = sim.judge_at(from - kS);
    CHECK_FALSE(before.straggler);
    std::int64_t first = 0;
    for (std::int64_t now = from; now <= from + 90 * kS && !first; now += kS)
        if (const auto j = sim.judge_at(now); j.straggler) first = now;
    REQUIRE(first > 0);
    const Judgement j = sim.judge_at(first);
    CHECK(j.straggler->node == "n03");
    CHECK(j.straggler->ranks == std::vector<std::uint32_t>{4, 5});
    CHECK(j.straggler->lead_ns > 15 * kMs);
    CHECK(j.straggler->slowdown > 1.5);
    // The same bursts spread over every node: nobody.
    Sim spread;
    spread.period = 20 * kMs, spread.jitter = 8 * kMs;
    for (std::uint32_t n = 0; n < 4; ++n) spread.slow.push_back({n, from, T0 + 1000 * kS, 80 * kMs, -1, 16});
    spread.run(T0 + 200 * kS);
    for (std::int64_t now = from + 30 * kS; now <= from + 90 * kS; now += 10 * kS) CHECK_FALSE(spread.judge_at(now).straggler);
}

TEST_CASE("a lead small against the pace while it led is not named, though large against the job's usual pace", "[watch][judge]") {
    // The whole job slows (the machine's load), one node a little more: its
    // lead is past min_lead and a fifth of the usual pace, but a tenth of
    // the pace it had while it led (SLURM 26.05 under CI's load: node09 named
    // at 23 ms of a 230 ms pace, the job "1.1x slower").
    Sim sim;
    sim.period = 20 * kMs, sim.jitter = 4 * kMs;
    const std::int64_t from = T0 + 30 * kS;
    for (std::uint32_t n = 0; n < 4; ++n) sim.slow.push_back({n, from, T0 + 1000 * kS, n == 1 ? 230 * kMs : 200 * kMs});
    sim.run(T0 + 200 * kS);
    for (std::int64_t now = from + 20 * kS; now <= from + 90 * kS; now += kInterval) {
        INFO("at " << (now - T0) / kS << " s");
        CHECK_FALSE(sim.judge_at(now).straggler);
    }
    SECTION("the same node slowed by a fifth of that pace or more is named") {
        Sim more;
        more.period = 20 * kMs, more.jitter = 4 * kMs;
        for (std::uint32_t n = 0; n < 4; ++n) more.slow.push_back({n, from, T0 + 1000 * kS, n == 1 ? 290 * kMs : 200 * kMs});
        more.run(T0 + 200 * kS);
        const Judgement j = more.judge_at(from + 60 * kS);
        REQUIRE(j.straggler);
        CHECK(j.straggler->node == "n02");
    }
}
