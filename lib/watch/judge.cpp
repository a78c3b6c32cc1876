// The running job's judgement (judge.hpp).
//
// The ranks' reports (Paces) are the user's word: one counts only where root
// placed its rank on the node whose record carries it, so a forged rank
// cannot point at another node. Root's mapping (each record's `ranks`) turns
// ranks into nodes; root's samples say why a node is slow or whether a rank
// that holds the others up is stopped or only busy.
//
// Ranks, nodes and groups are indexed by integer once; the busiest group's
// enters become one table (member x common collective) so that every figure
// after that is arithmetic on vectors: 512 ranks on 64 nodes with 24 records
// a node stay well under 100 ms (bench/watch_judge).
#include "judge.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "../base/saturate.hpp"
#include "../base/stats.hpp"

namespace gangway::watch {
namespace {

using postmortem::PressureSample;
using postmortem::TaskSample;
using postmortem::TaskState;

constexpr std::int64_t kMinNs = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMaxNs = std::numeric_limits<std::int64_t>::max();

// A bucket's lateness is a median: fewer collectives than this in an
// interval are too few for one (a pause, a checkpoint's interval).
constexpr std::size_t kMinBucketSeqs = 5;
// Root's cpu_wait: the node's tasks wait for a CPU this share of the time
// at least, and twice the other nodes' plus this margin (a busy cluster
// waits everywhere a little).
constexpr double kWaitFloor = 0.10, kWaitTimes = 2, kWaitMargin = 0.05;
// Pressure ("some avg10", hundredths of a percent): 20% at least, and 10
// points above the other nodes' median.
constexpr std::uint32_t kPressureFloor = 2000, kPressureMargin = 1000;
// A node's link holds the job back: its root qdisc held back (overlimits)
// or dropped, or the interface failed or dropped, at least this many packets
// in each of its newest `sustain` intervals, ten times the other nodes'.
constexpr std::uint64_t kHeldFloor = 50, kHeldTimes = 10;
// And the job is this much slower than its best pace (a link that queues
// without slowing the job is not what holds it back).
constexpr double kSlowerThanBest = 1.2;
// A rank below this share of a CPU between two samples is not computing.
constexpr double kIdleShare = 0.05;
constexpr std::int64_t kCpuSpanNs = 1'000'000'000;
// How many ranks or nodes one phrase names before "and N more".
constexpr std::size_t kNamed = 3;

// a - b without overflow (the times are the user's and other nodes' word).
std::int64_t minus(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? kMaxNs : kMinNs;
    return r;
}

// A multiple of an interval (a setting, perhaps huge), its type's end beyond.
std::int64_t times(std::int64_t ns, double k) { return saturate<std::int64_t>(double(ns) * k); }

std::int64_t floor_div(std::int64_t a, std::int64_t b) {  // b > 0
    std::int64_t q = a / b;
    if (a % b < 0) --q;
    return q;
}

// ---- The records, indexed ------------------------------------------------

struct Index {
    std::vector<const NodeProgress*> recs;        // oldest first
    std::vector<int> rec_node;                    // recs[i]'s node
    std::vector<std::string_view> node_name;      // by node
    std::vector<const NodeProgress*> sampled;     // by node: its newest record with task samples (null: none)
    std::vector<const NodeProgress*> pressured;   // by node: its newest record with pressure (null: none)
    std::unordered_map<std::uint32_t, int> rank_id;
    std::vector<std::uint32_t> rank;              // by rank id
    std::vector<int> node_of;                     // by rank id: the newest record that placed it
    std::vector<char> expected;                   // by rank id: on its node's newest record
};

Index index_records(const std::vector<const NodeProgress*>& history) {
    Index x;
    x.recs = history;
    // Oldest first, so that whatever is overwritten below ends as the newest's.
    std::stable_sort(x.recs.begin(), x.recs.end(), [](const NodeProgress* a, const NodeProgress* b) { return a->t_ns < b->t_ns; });
    std::unordered_map<std::string_view, int> node_id;
    std::vector<const NodeProgress*> newest;
    for (const NodeProgress* r : x.recs) {
        const auto found = node_id.try_emplace(r->node, int(x.node_name.size()));
        if (found.second) {
            x.node_name.push_back(r->node);
            newest.push_back(nullptr), x.sampled.push_back(nullptr), x.pressured.push_back(nullptr);
        }
        const int n = found.first->second;
        x.rec_node.push_back(n);
        newest[std::size_t(n)] = r;
        if (!r->samples.empty()) x.sampled[std::size_t(n)] = r;
        if (!r->pressure.empty()) x.pressured[std::size_t(n)] = r;
        for (std::uint32_t k : r->ranks) {
            const auto id = x.rank_id.try_emplace(k, int(x.rank.size()));
            if (id.second) {
                x.rank.push_back(k), x.node_of.push_back(n), x.expected.push_back(0);
            } else {
                x.node_of[std::size_t(id.first->second)] = n;
            }
        }
    }
    for (const NodeProgress* r : newest)
        for (std::uint32_t k : r->ranks) x.expected[std::size_t(x.rank_id.at(k))] = 1;
    return x;
}

// ---- The ranks' reports ----------------------------------------------------

using Enter = GroupPace::Enter;

// One rank in one group, over all its reports.
struct Track {
    int rank = 0;                 // rank id
    std::vector<Enter> enters;    // seq -> t, the first report of a seq kept
    bool in_order = true;         // enters strictly increasing by seq (else tidied once, at the end)
    std::uint64_t entered = 0;    // its newest report's
    std::int64_t newest_t = kMinNs;
};

struct Group {
    std::string_view name;
    std::vector<int> tracks;            // into Reports::tracks
    std::uint64_t entered = 0;          // the most any rank's newest report entered
    std::uint64_t completed = 0;        // the most any report completed
    std::int64_t completed_t = kMaxNs;  // when that was first reported
};

struct Reports {
    std::vector<Group> groups;
    std::vector<Track> tracks;
    std::vector<std::int64_t> newest_t;  // by rank id: its newest report (kMinNs: none)
    std::size_t ignored = 0;             // reports of ranks root did not place on their record's node
    bool any = false;                    // any report counted
};

// Appends a report's enters, keeping the first report of a seq. Reports of
// a rank arrive mostly in order and overlap at their edges: a seq at or
// below the newest kept is looked up (binary search) and, if new, the track
// is tidied at the end instead.
void add_enters(Track& tr, const std::vector<Enter>& enters) {
    for (const Enter& e : enters) {
        if (!tr.in_order || tr.enters.empty() || e.seq > tr.enters.back().seq) {
            tr.enters.push_back(e);
            continue;
        }
        const auto at = std::lower_bound(tr.enters.begin(), tr.enters.end(), e.seq, [](const Enter& a, std::uint64_t s) { return a.seq < s; });
        if (at != tr.enters.end() && at->seq == e.seq) continue;
        tr.enters.push_back(e);
        tr.in_order = false;
    }
}

void tidy(Track& tr) {
    if (tr.in_order) return;
    std::stable_sort(tr.enters.begin(), tr.enters.end(), [](const Enter& a, const Enter& b) { return a.seq < b.seq; });
    tr.enters.erase(std::unique(tr.enters.begin(), tr.enters.end(), [](const Enter& a, const Enter& b) { return a.seq == b.seq; }), tr.enters.end());
    tr.in_order = true;
}

struct ReportReader {
    const Index& x;
    Reports rep;
    std::unordered_map<std::string_view, int> group_id;
    std::unordered_map<std::uint64_t, int> track_id;  // (group << 32 | rank id) -> track
    std::vector<int> placed;                          // by rank id: the record (its index) that placed it last
    std::vector<std::int64_t> last_t;                 // by rank id: the last report read (a repeat is skipped)

    explicit ReportReader(const Index& index) : x(index) {
        rep.newest_t.assign(x.rank.size(), kMinNs);
        placed.assign(x.rank.size(), -1);
        last_t.assign(x.rank.size(), kMinNs);
    }

    Track& track(int group, int rank) {
        const std::uint64_t key = std::uint64_t(std::uint32_t(group)) << 32 | std::uint32_t(rank);
        const auto found = track_id.try_emplace(key, int(rep.tracks.size()));
        if (found.second) {
            rep.tracks.emplace_back().rank = rank;
            rep.groups[std::size_t(group)].tracks.push_back(found.first->second);
        }
        return rep.tracks[std::size_t(found.first->second)];
    }

    void read(const Pace& p, int rank) {
        // No group: the rank's torch keeps no Flight Recorder (gloo before
        // 2.8), or it has entered no collective yet. It reports no pace.
        if (p.groups.empty()) return;
        rep.any = true;
        rep.newest_t[std::size_t(rank)] = std::max(rep.newest_t[std::size_t(rank)], p.t_ns);
        for (const GroupPace& gp : p.groups) {
            const auto found = group_id.try_emplace(gp.group, int(rep.groups.size()));
            if (found.second) rep.groups.emplace_back().name = gp.group;
            Group& g = rep.groups[std::size_t(found.first->second)];
            if (gp.completed > g.completed || g.completed_t == kMaxNs)
                g.completed = gp.completed, g.completed_t = p.t_ns;
            else if (gp.completed == g.completed)
                g.completed_t = std::min(g.completed_t, p.t_ns);
            Track& tr = track(found.first->second, rank);
            if (p.t_ns >= tr.newest_t) tr.newest_t = p.t_ns, tr.entered = gp.entered;
            add_enters(tr, gp.enters);
        }
    }

    void read_all() {
        for (std::size_t i = 0; i < x.recs.size(); ++i) {
            const NodeProgress& r = *x.recs[i];
            for (std::uint32_t k : r.ranks) placed[std::size_t(x.rank_id.at(k))] = int(i);
            for (const Pace& p : r.paces) {
                const auto id = x.rank_id.find(p.rank);
                if (id == x.rank_id.end() || placed[std::size_t(id->second)] != int(i)) {
                    ++rep.ignored;
                    continue;
                }
                // An agent resends a rank's newest report until the rank writes another.
                if (last_t[std::size_t(id->second)] == p.t_ns) continue;
                last_t[std::size_t(id->second)] = p.t_ns;
                read(p, id->second);
            }
        }
        for (Track& tr : rep.tracks) tidy(tr);
        for (Group& g : rep.groups)
            for (int t : g.tracks) g.entered = std::max(g.entered, rep.tracks[std::size_t(t)].entered);
    }
};

// The busiest group: the most collectives (its newest entered), then the name.
int busiest(const Reports& rep) {
    int best = -1;
    for (std::size_t i = 0; i < rep.groups.size(); ++i) {
        const Group& g = rep.groups[i];
        if (best < 0) {
            best = int(i);
            continue;
        }
        const Group& b = rep.groups[std::size_t(best)];
        if (g.entered > b.entered || (g.entered == b.entered && g.name < b.name)) best = int(i);
    }
    return best;
}

// ---- The busiest group's collectives in common ---------------------------

// The collectives every member entered, each member's enter of each, and
// the earliest over members.
struct Common {
    std::vector<int> member;          // rank ids, by rank number
    std::vector<int> member_node;     // by member
    std::vector<std::uint64_t> seq;   // increasing
    std::vector<std::int64_t> first;  // by seq index
    std::vector<std::int64_t> t;      // t[m * seq.size() + c]

    std::int64_t at(std::size_t m, std::size_t c) const { return t[m * seq.size() + c]; }
};

Common common_of(const Group& g, const Reports& rep, const Index& x) {
    Common c;
    std::vector<const Track*> tracks;
    for (int i : g.tracks) tracks.push_back(&rep.tracks[std::size_t(i)]);
    std::sort(tracks.begin(), tracks.end(), [&x](const Track* a, const Track* b) { return x.rank[std::size_t(a->rank)] < x.rank[std::size_t(b->rank)]; });
    for (const Track* tr : tracks) c.member.push_back(tr->rank), c.member_node.push_back(x.node_of[std::size_t(tr->rank)]);
    if (tracks.empty()) return c;
    for (const Enter& e : tracks.front()->enters) c.seq.push_back(e.seq);
    for (std::size_t m = 1; m < tracks.size() && !c.seq.empty(); ++m) {
        const auto& en = tracks[m]->enters;
        std::size_t keep = 0, j = 0;
        for (std::uint64_t s : c.seq) {
            while (j < en.size() && en[j].seq < s) ++j;
            if (j < en.size() && en[j].seq == s) c.seq[keep++] = s;
        }
        c.seq.resize(keep);
    }
    const std::size_t n = c.seq.size();
    c.t.resize(tracks.size() * n);
    c.first.assign(n, kMaxNs);
    for (std::size_t m = 0; m < tracks.size(); ++m) {
        const auto& en = tracks[m]->enters;
        std::size_t j = 0;
        for (std::size_t k = 0; k < n; ++k) {
            while (en[j].seq < c.seq[k]) ++j;  // every common seq is in every member's enters
            c.t[m * n + k] = en[j].t_ns;
            c.first[k] = std::min(c.first[k], en[j].t_ns);
        }
    }
    return c;
}

// The median interval between consecutive collectives among `idx` (seq
// indices, increasing), by their earliest enters; 0 when none are consecutive.
std::int64_t pace_over(const Common& c, const std::vector<std::size_t>& idx) {
    std::vector<std::int64_t> gaps;
    for (std::size_t i = 1; i < idx.size(); ++i) {
        const std::size_t a = idx[i - 1], b = idx[i];
        if (c.seq[b] == c.seq[a] + 1) gaps.push_back(minus(c.first[b], c.first[a]));
    }
    if (gaps.empty()) return 0;
    return std::max<std::int64_t>(lower_median_in_place(gaps.begin(), gaps.end()), 0);
}

// ---- The straggler ---------------------------------------------------------

// The common collectives whose earliest enter falls in one interval
// [key * interval, (key + 1) * interval).
struct Bucket {
    std::int64_t key = 0;
    std::vector<std::size_t> seqs;
};

// Oldest first, each with enough collectives for a median: an interval
// with fewer (a job slowed to seconds a collective, a pause) joins the
// intervals before it, newest first, until it has them; its key stays its
// newest interval's, so that a bucket is as recent as its newest collective.
std::vector<Bucket> buckets_of(const Common& c, std::int64_t interval) {
    std::vector<std::pair<std::int64_t, std::size_t>> keyed;
    keyed.reserve(c.seq.size());
    for (std::size_t k = 0; k < c.seq.size(); ++k) keyed.emplace_back(floor_div(c.first[k], interval), k);
    std::sort(keyed.begin(), keyed.end());
    std::vector<Bucket> out;
    Bucket b;
    for (std::size_t i = keyed.size(); i-- > 0;) {
        if (b.seqs.empty()) b.key = keyed[i].first;
        b.seqs.push_back(keyed[i].second);
        // Whole intervals only: a bucket closes between two of them.
        if (b.seqs.size() >= kMinBucketSeqs && (i == 0 || keyed[i - 1].first != keyed[i].first)) {
            std::reverse(b.seqs.begin(), b.seqs.end());
            out.push_back(std::move(b));
            b = Bucket{};
        }
    }
    std::reverse(out.begin(), out.end());
    return out;
}

// Which node entered last in one bucket, and by how much before the next.
// Two measures, since a node can hold the others up in two ways:
//   - steadily, every collective a little (a slower CPU, a noisy neighbour):
//     each rank's median lateness, a node's its latest rank's, and the lead
//     over the next node's. Spikes of one rank now and then move no median.
//   - in bursts (a CPU quota's throttling, a stall now and then), by a lot on
//     some collectives: what the others waited for it, summed over the
//     collectives it entered last (by how much before the next node), as a
//     share of the bucket's time. A healthy job's spikes fall on every node.
struct Lead {
    int node = -1;                   // -1: fewer than two nodes, or no rule met
    std::int64_t lead = 0;           // the median lead, or the mean wait a collective it caused
    std::vector<std::int64_t> late;  // by member: its lateness (median or mean, as the rule)
    std::int64_t lateness = 0;       // the node's (its latest member's)
};

// A node that the others waited for at least this share of the bucket's
// time, this many times the next node's share.
constexpr double kWaitShareFloor = 0.15, kWaitShareTimes = 3;

Lead lead_in(const Common& c, const Bucket& b, std::size_t nodes, std::int64_t need, std::int64_t need_burst) {
    Lead out;
    const std::size_t members = c.member.size();
    std::vector<std::int64_t> median_late(members), mean_late(members), node_med(nodes, -1), v(b.seqs.size());
    for (std::size_t m = 0; m < members; ++m) {
        double sum = 0;
        for (std::size_t i = 0; i < b.seqs.size(); ++i) {
            v[i] = minus(c.at(m, b.seqs[i]), c.first[b.seqs[i]]);
            sum += double(v[i]);
        }
        mean_late[m] = saturate<std::int64_t>(sum / double(b.seqs.size()));
        median_late[m] = lower_median_in_place(v.begin(), v.end());
        auto& nl = node_med[std::size_t(c.member_node[m])];
        nl = std::max(nl, median_late[m]);
    }
    const auto top_two = [nodes](const auto& by_node) {
        int top = -1, second = -1;
        for (std::size_t n = 0; n < nodes; ++n) {
            if (by_node[n] < 0) continue;
            if (top < 0 || by_node[n] > by_node[std::size_t(top)]) second = top, top = int(n);
            else if (second < 0 || by_node[n] > by_node[std::size_t(second)]) second = int(n);
        }
        return std::make_pair(top, second);
    };
    const auto [top, second] = top_two(node_med);
    if (second < 0) return out;  // one node: nobody to be later than
    const auto node_of_max = [&](const std::vector<std::int64_t>& late, int node) {
        std::int64_t best = 0;
        for (std::size_t m = 0; m < members; ++m)
            if (c.member_node[m] == node) best = std::max(best, late[m]);
        return best;
    };
    if (node_med[std::size_t(top)] - node_med[std::size_t(second)] >= need) {
        out.node = top;
        out.lead = node_med[std::size_t(top)] - node_med[std::size_t(second)];
        out.late = std::move(median_late);
        out.lateness = node_med[std::size_t(top)];
        return out;
    }
    // The bursts: each collective's last node, charged by how much before
    // the next. Each node's lateness is taken past its usual (its median):
    // a node whose clock runs ahead is late by as much every time, and
    // charged nothing for it.
    std::vector<std::int64_t> charged(nodes, 0), latest(nodes);
    for (std::size_t i = 0; i < b.seqs.size(); ++i) {
        std::fill(latest.begin(), latest.end(), kMinNs);
        for (std::size_t m = 0; m < members; ++m) {
            const std::size_t n = std::size_t(c.member_node[m]);
            latest[n] = std::max(latest[n], minus(minus(c.at(m, b.seqs[i]), c.first[b.seqs[i]]), node_med[n]));
        }
        int t = -1, s2 = -1;
        for (std::size_t n = 0; n < nodes; ++n) {
            if (latest[n] == kMinNs) continue;
            if (t < 0 || latest[n] > latest[std::size_t(t)]) s2 = t, t = int(n);
            else if (s2 < 0 || latest[n] > latest[std::size_t(s2)]) s2 = int(n);
        }
        if (t >= 0 && s2 >= 0) charged[std::size_t(t)] += minus(latest[std::size_t(t)], latest[std::size_t(s2)]);
    }
    const auto [ct, cs] = top_two(charged);
    const std::int64_t span = minus(c.first[b.seqs.back()], c.first[b.seqs.front()]);
    if (ct < 0 || cs < 0 || span <= 0 || b.seqs.size() < 2) return out;
    const double share = double(charged[std::size_t(ct)]) / double(span), next = double(charged[std::size_t(cs)]) / double(span);
    const std::int64_t per = charged[std::size_t(ct)] / std::int64_t(b.seqs.size() - 1);
    if (share < kWaitShareFloor || share < kWaitShareTimes * next || per < need_burst) return out;
    out.node = ct;
    out.lead = per;
    out.lateness = node_of_max(mean_late, ct);
    out.late = std::move(mean_late);
    return out;
}

struct Found {
    Straggler s;
    int node = -1;
};

std::optional<Found> find_straggler(const Common& c, const Index& x, std::int64_t pace, std::int64_t now, const JudgeSettings& st,
                                    std::int64_t interval) {
    const std::vector<Bucket> buckets = buckets_of(c, interval);
    if (buckets.empty()) return std::nullopt;
    // The newest bucket must be recent: a straggler that stopped reporting
    // (or recovered long ago) is not named on old figures.
    const std::int64_t newest_end = saturate<std::int64_t>((double(buckets.back().key) + 1) * double(interval));
    if (minus(now, newest_end) > times(interval, 2)) return std::nullopt;
    const std::int64_t need = std::max(st.min_lead_ns, saturate<std::int64_t>(st.min_share * double(pace)));
    // Bursts are charged past each node's usual lateness (no clock offset
    // counts): a quarter of the steady floor, and the share of the pace.
    const std::int64_t need_burst = std::max(st.min_lead_ns / 4, saturate<std::int64_t>(st.min_share * double(pace)));
    const std::size_t sustain = std::size_t(std::max(st.sustain, 1));
    Lead newest;
    std::vector<std::int64_t> leads;  // newest first
    for (std::size_t i = buckets.size(); i-- > 0;) {
        Lead l = lead_in(c, buckets[i], x.node_name.size(), need, need_burst);
        if (l.node < 0 || (!leads.empty() && l.node != newest.node)) break;
        leads.push_back(l.lead);
        if (leads.size() == 1) newest = std::move(l);
    }
    if (leads.size() < sustain) return std::nullopt;

    Found f;
    f.node = newest.node;
    Straggler& s = f.s;
    s.node = std::string(x.node_name[std::size_t(f.node)]);
    for (std::size_t m = 0; m < c.member.size(); ++m)
        if (c.member_node[m] == f.node && newest.late[m] >= newest.lateness - newest.lateness / 2) s.ranks.push_back(x.rank[std::size_t(c.member[m])]);
    s.intervals = int(leads.size());
    std::vector<std::int64_t> recent(leads.begin(), leads.begin() + std::ptrdiff_t(sustain));
    s.lead_ns = lower_median_in_place(recent.begin(), recent.end());
    // The job's pace while it led (what it is now), not over the whole
    // history that may be mostly healthy.
    std::vector<std::size_t> idx;
    for (std::size_t i = buckets.size() - sustain; i < buckets.size(); ++i) idx.insert(idx.end(), buckets[i].seqs.begin(), buckets[i].seqs.end());
    std::sort(idx.begin(), idx.end());
    s.pace_ns = pace_over(c, idx);
    if (s.pace_ns <= 0) s.pace_ns = pace;
    // The lead against the pace while it led, not only against the job's
    // usual pace: when the whole job slows (the machine's load), a node's
    // lead of the usual size is no longer a share of it worth naming
    // (SLURM 26.05 under CI's load: 23 ms at a 230 ms pace, node09 named).
    if (double(s.lead_ns) < st.min_share * double(s.pace_ns)) return std::nullopt;
    if (s.pace_ns > 0) {
        const double p = double(s.pace_ns), lead = std::min(double(s.lead_ns), 0.9 * p);
        s.slowdown = p / (p - lead);
    }
    return f;
}

// ---- Root's samples ----------------------------------------------------------

// One node's task rows (its newest record with samples), by rank then time.
std::vector<const TaskSample*> rows_of(const NodeProgress* r) {
    std::vector<const TaskSample*> rows;
    if (!r) return rows;
    rows.reserve(r->samples.size());
    for (const auto& s : r->samples) rows.push_back(&s);
    std::sort(rows.begin(), rows.end(), [](const TaskSample* a, const TaskSample* b) { return a->rank != b->rank ? a->rank < b->rank : a->t_ns < b->t_ns; });
    return rows;
}

using RowIt = std::vector<const TaskSample*>::const_iterator;

// The newest row of [b, e) (one task's, by time) at least `span` before its
// newest; null when none.
const TaskSample* before(RowIt b, RowIt e, std::int64_t span) {
    const std::int64_t limit = minus((*(e - 1))->t_ns, span);
    for (RowIt i = e - 1; i != b;) {
        --i;
        if ((*i)->t_ns <= limit) return *i;
    }
    return nullptr;
}

// A cumulative counter's share of the wall time between two rows (a counter
// that fell, as processes ended, is no time).
double share(std::uint64_t from, std::uint64_t to, const TaskSample& a, const TaskSample& b) {
    const std::int64_t dt = minus(b.t_ns, a.t_ns);
    if (dt <= 0 || to <= from) return 0;
    return std::min(1.0, double(to - from) / double(dt));
}

// Each task's wait share over its newest rows spanning an interval (or as
// much of one as the rows hold), appended to `out`.
void wait_shares(const std::vector<const TaskSample*>& rows, std::int64_t interval, std::vector<double>& out) {
    for (RowIt b = rows.begin(); b != rows.end();) {
        RowIt e = b;
        while (e != rows.end() && (*e)->rank == (*b)->rank) ++e;
        if (e - b >= 2) {
            const TaskSample* from = before(b, e, interval - interval / 10);
            if (!from) from = *b;
            const TaskSample& to = **(e - 1);
            if (from->t_ns < to.t_ns) out.push_back(share(from->wait_ns, to.wait_ns, *from, to));
        }
        b = e;
    }
}

std::string percent(double share) {
    char b[16];
    std::snprintf(b, sizeof b, "%.0f%%", share * 100);
    return b;
}

std::optional<std::pair<Reason, std::string>> cpu_wait(const Index& x, int node, std::int64_t interval) {
    std::vector<double> mine, others;
    for (std::size_t n = 0; n < x.node_name.size(); ++n) wait_shares(rows_of(x.sampled[n]), interval, int(n) == node ? mine : others);
    if (mine.empty() || others.empty()) return std::nullopt;
    const double m = median(std::move(mine)), o = median(std::move(others));
    if (m < kWaitFloor || m < kWaitTimes * o + kWaitMargin) return std::nullopt;
    const std::string name(x.node_name[std::size_t(node)]);
    return std::make_pair(Reason::cpu_wait, name + "'s ranks waited for a CPU " + percent(m) + " of the time, the other nodes' " + percent(o));
}

const PressureSample* newest_pressure(const NodeProgress* r) {
    if (!r || r->pressure.empty()) return nullptr;
    return &*std::max_element(r->pressure.begin(), r->pressure.end(), [](const PressureSample& a, const PressureSample& b) { return a.t_ns < b.t_ns; });
}

std::optional<std::pair<Reason, std::string>> pressure(const Index& x, int node) {
    const PressureSample* mine = newest_pressure(x.pressured[std::size_t(node)]);
    std::vector<const PressureSample*> others;
    for (std::size_t n = 0; n < x.node_name.size(); ++n)
        if (int(n) != node)
            if (const PressureSample* p = newest_pressure(x.pressured[n])) others.push_back(p);
    if (!mine || others.empty()) return std::nullopt;
    struct Kind {
        Reason reason;
        std::uint32_t PressureSample::*field;
        const char* what;
    };
    static constexpr Kind kinds[] = {{Reason::cpu_pressure, &PressureSample::cpu, "CPU"},
                                     {Reason::memory_pressure, &PressureSample::memory, "memory"},
                                     {Reason::io_pressure, &PressureSample::io, "I/O"}};
    // Of the kinds that qualify, the highest: the node's tightest resource.
    const Kind* best = nullptr;
    double best_value = 0, best_others = 0;
    for (const Kind& k : kinds) {
        std::vector<double> v;
        for (const PressureSample* p : others) v.push_back(double(p->*k.field));
        const double o = median(std::move(v)), value = double(mine->*k.field);
        if (value < kPressureFloor || value < o + kPressureMargin || (best && value <= best_value)) continue;
        best = &k, best_value = value, best_others = o;
    }
    if (!best) return std::nullopt;
    const std::string name(x.node_name[std::size_t(node)]);
    return std::make_pair(best->reason, name + "'s " + best->what + " pressure " + percent(best_value / 10000) + " (some avg10), the other nodes' " +
                                            percent(best_others / 10000));
}


// ---- Root's view of the links ------------------------------------------------

// What a node's links held back between two of its records: the link that
// held back most, and its figures.
struct Held {
    std::uint64_t total = 0, overlimits = 0, drops = 0, errors = 0;
    std::string_view link;
};

std::uint64_t grew(std::uint64_t from, std::uint64_t to) { return to > from ? to - from : 0; }

// Each node's, between each of its records with links and the one before, newest first.
std::vector<std::vector<Held>> held_by_record(const Index& x) {
    std::vector<std::vector<Held>> out(x.node_name.size());
    std::vector<const NodeProgress*> prev(x.node_name.size(), nullptr);
    for (std::size_t i = 0; i < x.recs.size(); ++i) {
        const NodeProgress* r = x.recs[i];
        if (r->links.empty()) continue;
        const std::size_t n = std::size_t(x.rec_node[i]);
        if (const NodeProgress* p = prev[n]) {
            Held best;
            for (const LinkQueue& now : r->links)
                for (const LinkQueue& was : p->links) {
                    if (was.name != now.name) continue;
                    Held h;
                    h.link = now.name;
                    h.overlimits = grew(was.qdisc_overlimits, now.qdisc_overlimits);
                    h.drops = grew(was.qdisc_drops, now.qdisc_drops) + grew(was.tx_dropped, now.tx_dropped);
                    h.errors = grew(was.tx_errors, now.tx_errors);
                    h.total = h.overlimits + h.drops + h.errors;
                    if (h.total > best.total) best = h;
                }
            out[n].push_back(best);
        }
        prev[n] = r;
    }
    for (auto& v : out) std::reverse(v.begin(), v.end());
    return out;
}

struct LinkHolder {
    int node = -1;
    std::string evidence;
};

// The node whose link held back packets in each of its newest `sustain`
// intervals, beyond doubt against the others; nullopt when none.
std::optional<LinkHolder> link_holder(const Index& x, int sustain) {
    if (x.node_name.size() < 2 || sustain < 1) return std::nullopt;
    const auto held = held_by_record(x);
    const std::size_t k = std::size_t(sustain);
    std::optional<LinkHolder> out;
    std::uint64_t out_low = 0;
    for (std::size_t n = 0; n < held.size(); ++n) {
        if (held[n].size() < k) continue;
        std::uint64_t low = UINT64_MAX;
        for (std::size_t i = 0; i < k; ++i) low = std::min(low, held[n][i].total);
        if (low < kHeldFloor) continue;
        std::vector<std::uint64_t> others;
        for (std::size_t o = 0; o < held.size(); ++o)
            if (o != n)
                for (std::size_t i = 0; i < std::min(k, held[o].size()); ++i) others.push_back(held[o][i].total);
        const std::uint64_t o = others.empty() ? 0 : lower_median(std::move(others));
        if (low < kHeldTimes * o || (out && low <= out_low)) continue;
        const Held& h = held[n][0];
        LinkHolder l;
        l.node = int(n);
        l.evidence = std::string(x.node_name[n]) + "'s " + std::string(h.link) + " held back " + std::to_string(h.overlimits) +
                     " packets past its rate, dropped " + std::to_string(h.drops) + " and failed " + std::to_string(h.errors) +
                     " in the last interval, the other nodes' links " + std::to_string(o) + " in all";
        out = std::move(l);
        out_low = low;
    }
    return out;
}

// A straggler named by its link: the node's ranks, and the job's pace now
// against its best (both 0 where no rank reports its pace).
Straggler link_straggler(const Index& x, const LinkHolder& l, std::int64_t pace_now, std::int64_t pace_best, int sustain) {
    Straggler s;
    s.node = std::string(x.node_name[std::size_t(l.node)]);
    for (std::size_t r = 0; r < x.rank.size(); ++r)
        if (x.expected[r] && x.node_of[r] == l.node) s.ranks.push_back(x.rank[r]);
    std::sort(s.ranks.begin(), s.ranks.end());
    s.intervals = sustain;
    s.reason = Reason::network;
    s.evidence = l.evidence;
    s.pace_ns = pace_now;
    s.best_pace_ns = pace_best;
    if (pace_now > 0 && pace_best > 0) {
        s.lead_ns = pace_now - pace_best;
        s.slowdown = double(pace_now) / double(pace_best);
    }
    return s;
}

// The job's pace over its newest `sustain` intervals with data, and its best
// (the least of any interval's); 0 where there are too few.
std::pair<std::int64_t, std::int64_t> pace_now_and_best(const Common& c, std::int64_t interval, int sustain) {
    const auto buckets = buckets_of(c, interval);
    if (buckets.size() <= std::size_t(std::max(sustain, 1))) return {0, 0};
    std::vector<std::size_t> recent;
    for (std::size_t i = buckets.size() - std::size_t(sustain); i < buckets.size(); ++i)
        recent.insert(recent.end(), buckets[i].seqs.begin(), buckets[i].seqs.end());
    std::sort(recent.begin(), recent.end());
    std::int64_t best = 0;
    for (const Bucket& b : buckets) {
        const std::int64_t p = pace_over(c, b.seqs);
        if (p > 0 && (best == 0 || p < best)) best = p;
    }
    return {pace_over(c, recent), best};
}

// Why the straggler's node is slow, where root's view says so.
void explain(Straggler& s, const Index& x, int node, std::int64_t interval, int sustain) {
    auto r = cpu_wait(x, node, interval);
    if (!r) r = pressure(x, node);
    if (!r)
        if (const auto l = link_holder(x, sustain); l && l->node == node) r = std::make_pair(Reason::network, l->evidence);
    if (!r) return;
    s.reason = r->first;
    s.evidence = std::move(r->second);
}

// ---- The hang --------------------------------------------------------------

enum class Seen : std::uint8_t { stopped, disk_wait, ended, idle, busy, unsampled };

bool still(Seen s) { return s == Seen::stopped || s == Seen::disk_wait || s == Seen::ended || s == Seen::idle; }

struct RankView {
    std::uint32_t rank = 0;
    int node = -1;
    Seen seen = Seen::unsampled;
    double cpu = 0;
    bool no_rows = true;
};

std::string words(const RankView& v, const Index& x) {
    const std::string r = "rank " + std::to_string(v.rank);
    const std::string on = v.node >= 0 ? " on " + std::string(x.node_name[std::size_t(v.node)]) : std::string();
    switch (v.seen) {
    case Seen::stopped: return r + " stopped (T)" + on;
    case Seen::disk_wait: return r + " in uninterruptible sleep (D)" + on;
    case Seen::ended: return r + on + " has no process left (ended)";
    case Seen::idle: return r + on + " not on a CPU (" + percent(v.cpu) + ")";
    case Seen::busy: return r + on + " is on a CPU " + percent(v.cpu) + " of the time: busy outside collectives, not hung";
    case Seen::unsampled: break;
    }
    return (v.no_rows ? "no root samples of rank " : "too few root samples of rank ") + std::to_string(v.rank);
}

// Root's view of each rank, from its node's newest record with samples
// (each node's rows sorted once, when first asked for).
struct Views {
    const Index& x;
    std::vector<std::vector<const TaskSample*>> rows;
    std::vector<char> sorted;

    explicit Views(const Index& index) : x(index), rows(index.node_name.size()), sorted(index.node_name.size(), 0) {}

    // The rank's rows (oldest first) in its node's newest record with samples.
    std::pair<RowIt, RowIt> rows_of_rank(int rank_id) {
        const int node = x.node_of[std::size_t(rank_id)];
        auto& r = rows[std::size_t(node)];
        if (!sorted[std::size_t(node)]) r = rows_of(x.sampled[std::size_t(node)]), sorted[std::size_t(node)] = 1;
        const std::uint32_t k = x.rank[std::size_t(rank_id)];
        const auto b = std::lower_bound(r.cbegin(), r.cend(), k, [](const TaskSample* a, std::uint32_t q) { return a->rank < q; });
        return {b, std::upper_bound(b, r.cend(), k, [](std::uint32_t q, const TaskSample* a) { return q < a->rank; })};
    }

    RankView view(int rank_id) {
        RankView v;
        v.rank = x.rank[std::size_t(rank_id)];
        v.node = x.node_of[std::size_t(rank_id)];
        const auto [b, e] = rows_of_rank(rank_id);
        if (b == e) return v;
        v.no_rows = false;
        const TaskSample& last = **(e - 1);
        if (last.state == TaskState::stopped) v.seen = Seen::stopped;
        else if (last.state == TaskState::disk_wait) v.seen = Seen::disk_wait;
        else if (last.state == TaskState::gone) v.seen = Seen::ended;
        else if (const TaskSample* from = before(b, e, kCpuSpanNs)) {
            v.cpu = share(from->cpu_ns, last.cpu_ns, *from, last);
            v.seen = v.cpu < kIdleShare ? Seen::idle : Seen::busy;
        }
        return v;
    }

    // Held (stopped, in D, ended) in every one of the rank's samples of its
    // node's newest record within `span` of the newest, two at least: not a
    // moment's page fault.
    bool held_throughout(int rank_id, std::int64_t span) {
        const auto [b, e] = rows_of_rank(rank_id);
        if (b == e) return false;
        const std::int64_t from = minus((*(e - 1))->t_ns, span);
        int n = 0;
        for (auto it = b; it != e; ++it) {
            if ((*it)->t_ns < from) continue;
            if ((*it)->state != TaskState::stopped && (*it)->state != TaskState::disk_wait && (*it)->state != TaskState::gone) return false;
            ++n;
        }
        return n >= 2;
    }
};

bool hung(const Group& g, std::int64_t now, std::int64_t limit) {
    return g.completed_t != kMaxNs && g.entered > g.completed && minus(now, g.completed_t) > limit;
}

std::optional<Hang> find_hang(const Reports& rep, int judged, const Index& x, std::int64_t pace, std::int64_t now, const JudgeSettings& st) {
    const std::int64_t limit = std::max(st.hang_min_ns, pace > 0 ? saturate<std::int64_t>(double(st.hang_paces) * double(pace)) : 0);
    // The busiest group first; else the one that has waited longest.
    int pick = -1;
    if (hung(rep.groups[std::size_t(judged)], now, limit)) pick = judged;
    for (std::size_t i = 0; i < rep.groups.size() && pick != judged; ++i) {
        const Group& g = rep.groups[i];
        if (!hung(g, now, limit)) continue;
        if (pick < 0 || g.completed_t < rep.groups[std::size_t(pick)].completed_t) pick = int(i);
    }
    if (pick < 0) return std::nullopt;
    const Group& g = rep.groups[std::size_t(pick)];
    Hang h;
    h.group = std::string(g.name);
    h.waiting_in = g.completed + 1;
    h.since_ns = g.completed_t;
    h.for_ns = minus(now, g.completed_t);
    h.limit_ns = limit;

    std::vector<int> missing, members;
    for (int t : g.tracks) {
        const Track& tr = rep.tracks[std::size_t(t)];
        members.push_back(tr.rank);
        if (tr.entered < h.waiting_in) missing.push_back(tr.rank);
    }
    // A rank that reported nothing in the history, on a node root says holds it.
    for (std::size_t r = 0; r < x.rank.size(); ++r)
        if (x.expected[r] && rep.newest_t[r] == kMinNs) missing.push_back(int(r));
    const auto by_rank = [&x](int a, int b) { return x.rank[std::size_t(a)] < x.rank[std::size_t(b)]; };
    std::sort(missing.begin(), missing.end(), by_rank);
    std::sort(members.begin(), members.end(), by_rank);

    Views views(x);
    std::vector<RankView> seen;
    for (int r : missing.empty() ? members : missing) seen.push_back(views.view(r));
    // A rank stopped mid-collective leaves some of the others still waiting
    // in the one before (a ring's chunks it never forwarded): they did not
    // enter the next either, but root sees them asleep in a wait, not held.
    // Where root sees some of the missing held throughout its newest samples
    // (stopped, in D or ended, for half the limit or all its record holds),
    // those are the hang; the merely idle ones are its victims.
    std::vector<char> held;
    for (int r : missing) held.push_back(views.held_throughout(r, limit / 2) ? 1 : 0);
    if (std::find(held.begin(), held.end(), 1) != held.end()) {
        std::vector<int> kept;
        std::vector<RankView> kept_seen;
        for (std::size_t i = 0; i < missing.size(); ++i)
            if (held[i]) kept.push_back(missing[i]), kept_seen.push_back(seen[i]);
        missing = std::move(kept), seen = std::move(kept_seen);
    }
    for (int r : missing) {
        h.missing.push_back(x.rank[std::size_t(r)]);
        h.nodes.emplace_back(x.node_name[std::size_t(x.node_of[std::size_t(r)])]);
    }
    std::sort(h.nodes.begin(), h.nodes.end());
    h.nodes.erase(std::unique(h.nodes.begin(), h.nodes.end()), h.nodes.end());
    h.confirmed = !seen.empty() && std::all_of(seen.begin(), seen.end(), [](const RankView& v) { return still(v.seen); });
    const auto busy = std::find_if(seen.begin(), seen.end(), [](const RankView& v) { return v.seen == Seen::busy; });
    const auto unsure = std::find_if(seen.begin(), seen.end(), [](const RankView& v) { return !still(v.seen); });
    if (busy != seen.end()) {
        h.evidence = words(*busy, x);
    } else if (unsure != seen.end()) {
        h.evidence = words(*unsure, x);
    } else {
        for (std::size_t i = 0; i < seen.size() && i < kNamed; ++i) h.evidence += (i ? ", " : "") + words(seen[i], x);
        if (seen.size() > kNamed) h.evidence += ", and " + std::to_string(seen.size() - kNamed) + " more";
    }
    return h;
}

// ---- Root's view alone -------------------------------------------------------
// Where no rank reports its pace (PyTorch before 2.8 keeps no Flight
// Recorder for gloo, or another framework): root's samples alone, and only
// what they say beyond doubt, sustained. Nothing here is the user's word.

// Each node's tasks' wait share in each of its records with samples, newest first.
std::vector<std::vector<double>> wait_by_record(const Index& x, std::int64_t interval) {
    std::vector<std::vector<double>> out(x.node_name.size());
    for (std::size_t i = x.recs.size(); i-- > 0;) {
        if (x.recs[i]->samples.empty()) continue;
        std::vector<double> shares;
        wait_shares(rows_of(x.recs[i]), interval, shares);
        if (!shares.empty()) out[std::size_t(x.rec_node[i])].push_back(median(std::move(shares)));
    }
    return out;
}

// A node whose tasks waited for a CPU (kWaitFloor, twice the others' and a
// margin) in each of its newest `sustain` records: in a synchronous job the
// others wait for it.
std::optional<Found> root_straggler(const Index& x, const JudgeSettings& st, std::int64_t interval) {
    if (x.node_name.size() < 2 || st.sustain < 1) return std::nullopt;
    const auto shares = wait_by_record(x, interval);
    const std::size_t k = std::size_t(st.sustain);
    int pick = -1;
    double pick_low = 0, pick_others = 0;
    for (std::size_t n = 0; n < shares.size(); ++n) {
        if (shares[n].size() < k) continue;
        std::vector<double> others;
        for (std::size_t o = 0; o < shares.size(); ++o)
            if (o != n) others.insert(others.end(), shares[o].begin(), shares[o].begin() + std::ptrdiff_t(std::min(k, shares[o].size())));
        if (others.empty()) continue;
        const double o = median(std::move(others));
        const double low = *std::min_element(shares[n].begin(), shares[n].begin() + std::ptrdiff_t(k));
        if (low < kWaitFloor || low < kWaitTimes * o + kWaitMargin) continue;
        if (pick < 0 || low > pick_low) pick = int(n), pick_low = low, pick_others = o;
    }
    if (pick < 0) return std::nullopt;
    Found f;
    f.node = pick;
    f.s.node = std::string(x.node_name[std::size_t(pick)]);
    for (std::size_t r = 0; r < x.rank.size(); ++r)
        if (x.expected[r] && x.node_of[r] == pick) f.s.ranks.push_back(x.rank[r]);
    std::sort(f.s.ranks.begin(), f.s.ranks.end());
    f.s.intervals = st.sustain;
    f.s.reason = Reason::cpu_wait;
    f.s.evidence = f.s.node + "'s ranks waited for a CPU at least " + percent(pick_low) + " of the time in each of its last " +
                   std::to_string(st.sustain) + " reports, the other nodes' " + percent(pick_others);
    return f;
}

// A rank root saw stopped or in uninterruptible sleep in every sample for
// at least hang_min_ns, up to its newest: the others wait for it.
std::optional<Hang> root_hang(const Index& x, std::int64_t now, const JudgeSettings& st) {
    struct Row {
        std::int64_t t;
        TaskState state;
    };
    std::unordered_map<std::uint32_t, std::vector<Row>> by_rank;
    for (std::size_t i = 0; i < x.recs.size(); ++i)
        for (const auto& t : x.recs[i]->samples) by_rank[t.rank].push_back({t.t_ns, t.state});
    Hang h;
    h.confirmed = true;
    h.limit_ns = st.hang_min_ns;
    h.since_ns = kMaxNs;
    std::vector<std::string> said;
    std::vector<std::uint32_t> ranks;
    for (auto& [rank, rows] : by_rank) ranks.push_back(rank);
    std::sort(ranks.begin(), ranks.end());
    for (const std::uint32_t rank : ranks) {
        auto& rows = by_rank[rank];
        std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.t < b.t; });
        const auto still_state = [](TaskState s) { return s == TaskState::stopped || s == TaskState::disk_wait; };
        if (rows.empty() || !still_state(rows.back().state)) continue;
        std::size_t first = rows.size() - 1;
        while (first > 0 && still_state(rows[first - 1].state)) --first;
        if (minus(rows.back().t, rows[first].t) < st.hang_min_ns) continue;
        const auto id = x.rank_id.find(rank);
        const int node = id == x.rank_id.end() ? -1 : x.node_of[std::size_t(id->second)];
        h.missing.push_back(rank);
        if (node >= 0) h.nodes.emplace_back(x.node_name[std::size_t(node)]);
        h.since_ns = std::min(h.since_ns, rows[first].t);
        if (said.size() < kNamed) {
            RankView v;
            v.rank = rank, v.node = node, v.no_rows = false;
            v.seen = rows.back().state == TaskState::stopped ? Seen::stopped : Seen::disk_wait;
            said.push_back(words(v, x));
        }
    }
    if (h.missing.empty()) return std::nullopt;
    std::sort(h.nodes.begin(), h.nodes.end());
    h.nodes.erase(std::unique(h.nodes.begin(), h.nodes.end()), h.nodes.end());
    h.for_ns = minus(now, h.since_ns);
    for (std::size_t i = 0; i < said.size(); ++i) h.evidence += (i ? ", " : "") + said[i];
    if (h.missing.size() > said.size()) h.evidence += ", and " + std::to_string(h.missing.size() - said.size()) + " more";
    return h;
}

// ---- The line ----------------------------------------------------------------

std::string duration(std::int64_t ns) {
    char b[32];
    const double s = double(ns) / 1e9;
    if (ns < 1'000'000'000) std::snprintf(b, sizeof b, "%.0f ms", double(ns) / 1e6);
    else if (s < 10) std::snprintf(b, sizeof b, "%.1f s", s);
    else if (s < 600) std::snprintf(b, sizeof b, "%.0f s", s);
    else std::snprintf(b, sizeof b, "%.0f min", s / 60);
    return b;
}

// "rank 5", "ranks 4, 5", "ranks 0-3, 8", the first few runs then "and N more".
std::string rank_list(std::vector<std::uint32_t> ranks) {
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    std::string out = ranks.size() == 1 ? "rank " : "ranks ";
    std::size_t runs = 0, i = 0;
    for (; i < ranks.size() && runs < 2 * kNamed; ++runs) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
        out += (runs ? ", " : "") + std::to_string(ranks[i]);
        if (j > i) out += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
        i = j + 1;
    }
    if (i < ranks.size()) out += " and " + std::to_string(ranks.size() - i) + " more";
    return out;
}

std::string node_list(const std::vector<std::string>& nodes) {
    std::string out;
    for (std::size_t i = 0; i < nodes.size() && i < kNamed; ++i) out += (i ? ", " : "") + nodes[i];
    if (nodes.size() > kNamed) out += " and " + std::to_string(nodes.size() - kNamed) + " more";
    return out;
}

std::string straggler_words(const Straggler& s) {
    char b[64];
    std::snprintf(b, sizeof b, "%.1fx", s.slowdown);
    std::string out = "straggler: " + s.node;
    if (!s.ranks.empty()) out += " (" + rank_list(s.ranks) + ")";
    if (s.best_pace_ns > 0)
        out += ", its link holds the job back: a collective every " + duration(s.pace_ns) + " against " + duration(s.best_pace_ns) +
               " at its best, the job " + b + " slower";
    else if (s.pace_ns > 0) out += ", " + duration(s.lead_ns) + " later than the next node a collective, the job " + b + " slower for it";
    else out += ", by root's view alone (no rank reports its pace)";
    if (!s.evidence.empty()) out += "; " + s.evidence;
    return out;
}

std::string hang_words(const Hang& h) {
    std::string out = h.confirmed ? "hang: " : "hang (unconfirmed): ";
    const std::string which = "collective " + std::to_string(h.waiting_in) + " of group " + h.group;
    if (h.group.empty())  // root's view alone: no collective known
        out += rank_list(h.missing) + " (" + node_list(h.nodes) + ") held for " + duration(h.for_ns) + " while the others wait";
    else if (h.missing.empty())
        out += "every rank entered " + which + " and none completed it for " + duration(h.for_ns);
    else
        out += rank_list(h.missing) + " (" + node_list(h.nodes) + ") did not enter " + which + " that the others wait in for " + duration(h.for_ns);
    if (!h.evidence.empty()) out += "; " + h.evidence;
    return out;
}

Judgement& root_only(Judgement& j, const Index& x, std::int64_t now, const JudgeSettings& s, std::int64_t interval) {
    if (auto f = root_straggler(x, s, interval)) j.straggler = std::move(f->s);
    else if (const auto l = link_holder(x, s.sustain)) j.straggler = link_straggler(x, *l, 0, 0, s.sustain);
    j.hang = root_hang(x, now, s);
    return j;
}

}  // namespace

const char* reason_name(Reason r) noexcept {
    switch (r) {
    case Reason::none: return "none";
    case Reason::cpu_wait: return "cpu_wait";
    case Reason::cpu_pressure: return "cpu_pressure";
    case Reason::memory_pressure: return "memory_pressure";
    case Reason::io_pressure: return "io_pressure";
    case Reason::network: return "network";
    }
    return "none";
}

Judgement judge(const std::vector<NodeProgress>& history, std::int64_t now_ns, const JudgeSettings& s) {
    std::vector<const NodeProgress*> recs;
    recs.reserve(history.size());
    for (const auto& r : history) recs.push_back(&r);
    return judge_records(recs, now_ns, s);
}

Judgement judge_records(const std::vector<const NodeProgress*>& history, std::int64_t now_ns, const JudgeSettings& s) {
    Judgement j;
    const std::int64_t interval = std::max<std::int64_t>(s.interval_ns, 1);
    if (history.empty()) {
        j.notes.emplace_back("no progress record: nothing to judge");
        return j;
    }
    const Index x = index_records(history);
    ReportReader reader(x);
    reader.read_all();
    const Reports& rep = reader.rep;

    j.ranks_expected = std::size_t(std::count(x.expected.begin(), x.expected.end(), 1));
    const std::int64_t fresh = minus(now_ns, times(interval, 1.5));
    j.ranks_reporting = std::size_t(std::count_if(rep.newest_t.begin(), rep.newest_t.end(), [fresh](std::int64_t t) { return t != kMinNs && t >= fresh; }));
    if (rep.ignored) j.notes.push_back(std::to_string(rep.ignored) + " reports of ranks root did not place on their node ignored");
    if (!rep.any) {
        j.notes.emplace_back("no rank reported its pace (the torch hook needs PyTorch 2.5 or later and the Flight Recorder): root's view only");
        return root_only(j, x, now_ns, s, interval);
    }
    if (j.ranks_reporting < j.ranks_expected)
        j.notes.push_back(std::to_string(j.ranks_reporting) + " of " + std::to_string(j.ranks_expected) + " ranks reported");
    const int judged = busiest(rep);
    if (judged < 0) {
        j.notes.emplace_back("no rank reported a process group: root's view only");
        return root_only(j, x, now_ns, s, interval);
    }
    const Group& g = rep.groups[std::size_t(judged)];
    j.collectives = g.entered;
    const Common c = common_of(g, rep, x);
    std::vector<std::size_t> all(c.seq.size());
    std::iota(all.begin(), all.end(), std::size_t(0));
    j.pace_ns = pace_over(c, all);
    if (j.pace_ns == 0) j.notes.push_back("too few collectives of group " + std::string(g.name) + " that every rank entered: no pace, no straggler");

    if (auto f = find_straggler(c, x, j.pace_ns, now_ns, s, interval)) {
        f->s.group = std::string(g.name);
        explain(f->s, x, f->node, interval, s.sustain);
        j.straggler = std::move(f->s);
    } else if (const auto l = link_holder(x, s.sustain)) {
        // No rank enters last (a slow link slows every rank's collectives
        // alike), but one node's link holds back what the job sends, and the
        // job runs slower than its best.
        const auto [now_pace, best] = pace_now_and_best(c, interval, s.sustain);
        if (now_pace > 0 && best > 0 && double(now_pace) >= kSlowerThanBest * double(best)) {
            j.straggler = link_straggler(x, *l, now_pace, best, s.sustain);
            j.straggler->group = std::string(g.name);
        }
    }
    j.hang = find_hang(rep, judged, x, j.pace_ns, now_ns, s);
    return j;
}

std::string judgement_line(const Judgement& j) {
    std::string out;
    if (j.straggler) out += straggler_words(*j.straggler);
    if (j.hang) out += (out.empty() ? "" : "; ") + hang_words(*j.hang);
    // One line, whatever the names hold (a group's name is the user's).
    for (char& ch : out)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
    return out;
}

}  // namespace gangway::watch
