// Which rank root saw stalled while the others waited (stall.hpp).
//
// Each (node, rank) of the step is a series of rounds, every few seconds,
// on its node's clock, as its task ends are: so its rounds compare with the
// step's first end (t0) without any clock between nodes. Only the rounds
// before t0 count: SLURM's SIGCONT and SIGTERM at the end wake a stopped
// rank, and what it does then is not why the job hung.
//  - Stopped or in uninterruptible sleep: the state of its newest round
//    before t0 (or of the one before, where the newest came after SLURM's
//    SIGCONT), held over two rounds at least, and that round within two
//    intervals of t0. One round alone is a moment (a page fault, a ^Z
//    undone); two are an interval.
//  - Starved: runnable, and waiting for a CPU at least kStarvedShare of each
//    of its last kStarvedIntervals intervals (a rank that shares its cores
//    with something else holds back every collective).
// Every sampled rank stalled is a stopped job (scontrol suspend, a node
// frozen whole), not one rank's hang: nothing is named.
#include "stall.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "../base/stats.hpp"

namespace gangway::postmortem {
namespace {

bool still(TaskState s) { return s == TaskState::stopped || s == TaskState::disk_wait; }

std::int64_t median_gap(const std::vector<const TaskSample*>& rows) {
    std::vector<std::int64_t> gaps;
    for (std::size_t i = 1; i < rows.size(); ++i) gaps.push_back(rows[i]->t_ns - rows[i - 1]->t_ns);
    if (gaps.empty()) return kDefaultSampleNs;
    return std::max<std::int64_t>(lower_median(std::move(gaps)), 1);
}

std::optional<Stall> stall_of(const std::vector<const TaskSample*>& rows, std::int64_t t0) {
    if (rows.size() < 2) return std::nullopt;
    const std::int64_t gap = median_gap(rows);
    // The newest round, or the one before it where the newest is not stalled.
    std::size_t b = rows.size() - 1;
    if (!still(rows[b]->state) && b > 0 && still(rows[b - 1]->state)) --b;
    if (t0 - rows[b]->t_ns > 2 * gap + kStallSlackNs) return std::nullopt;
    if (still(rows[b]->state)) {
        std::size_t a = b;
        while (a > 0 && rows[a - 1]->state == rows[b]->state) --a;
        if (a == b) return std::nullopt;
        Stall s;
        s.state = rows[b]->state;
        s.for_s = double(rows[b]->t_ns - rows[a]->t_ns) / 1e9;
        return s;
    }
    if (rows[b]->state != TaskState::running || b < kStarvedIntervals) return std::nullopt;
    std::int64_t dt_all = 0, dw_all = 0;
    for (std::size_t i = b + 1 - kStarvedIntervals; i <= b; ++i) {
        const std::int64_t dt = rows[i]->t_ns - rows[i - 1]->t_ns;
        // Cumulative over processes that may end: a fall is no wait.
        const std::int64_t dw = rows[i]->wait_ns > rows[i - 1]->wait_ns ? std::int64_t(rows[i]->wait_ns - rows[i - 1]->wait_ns) : 0;
        if (dt <= 0 || double(dw) < kStarvedShare * double(dt)) return std::nullopt;
        dt_all += dt, dw_all += dw;
    }
    Stall s;
    s.state = TaskState::running;
    s.for_s = double(dt_all) / 1e9;
    s.waited = std::min(1.0, double(dw_all) / double(dt_all));
    return s;
}

}  // namespace

std::vector<Stall> find_stalls(const std::vector<NodeRecord>& records, std::uint32_t step, std::int64_t t0) {
    std::map<std::pair<std::string_view, std::uint32_t>, std::vector<const TaskSample*>> series;
    std::set<std::string_view> nodes;  // a node's record twice: the first counts (as judge's rule 0)
    for (const auto& r : records) {
        if (!nodes.insert(r.node).second) continue;
        for (const auto& s : r.samples)
            if (s.step == step && s.t_ns <= t0) series[{r.node, s.rank}].push_back(&s);
    }
    std::vector<Stall> out;
    std::map<std::uint32_t, bool> ranks;  // a rank sampled on two nodes counts once
    for (auto& [key, rows] : series) {
        std::stable_sort(rows.begin(), rows.end(), [](const TaskSample* a, const TaskSample* b) { return a->t_ns < b->t_ns; });
        auto s = stall_of(rows, t0);
        ranks[key.second] |= bool(s);
        if (!s) continue;
        s->rank = key.second;
        s->node = std::string(key.first);
        out.push_back(std::move(*s));
    }
    if (std::all_of(ranks.begin(), ranks.end(), [](const auto& r) { return r.second; })) return {};
    std::sort(out.begin(), out.end(), [](const Stall& a, const Stall& b) { return a.rank != b.rank ? a.rank < b.rank : a.node < b.node; });
    return out;
}

std::string stall_what(const Stall& x) {
    char b[96];
    if (x.state == TaskState::running)
        std::snprintf(b, sizeof b, "waited for a CPU %.0f%% of its last %.0f s", x.waited * 100, x.for_s);
    else
        std::snprintf(b, sizeof b, "%s for at least %.0f s",
                      x.state == TaskState::stopped ? "stopped (SIGSTOP or a debugger)" : "in uninterruptible sleep (D: I/O or a driver)",
                      x.for_s);
    return b;
}

std::string stall_words(const std::vector<Stall>& stalls, std::uint32_t others) {
    constexpr std::size_t kNamed = 3;
    std::string s;
    for (std::size_t i = 0; i < stalls.size() && i < kNamed; ++i)
        s += (i ? "; rank " : "rank ") + std::to_string(stalls[i].rank) + " on " + stalls[i].node + " " + stall_what(stalls[i]);
    if (stalls.size() > kNamed) s += "; and " + std::to_string(stalls.size() - kNamed) + " more";
    s += ", while " + std::to_string(others) + " other rank" + (others == 1 ? "" : "s") + " waited (slurmstepd samples)";
    return s;
}

}  // namespace gangway::postmortem
