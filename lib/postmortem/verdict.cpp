// Who stopped the job (verdict.hpp): the judgement. The rules, in the order
// they are applied (docs/postmortem.md, "The verdict", says the same):
//
// 0. Trust. A task end counts only as the record of the node it names (a
//    record of node A holding a task end that names node B, or another job,
//    is not taken), and once per (step, rank). A rank's dump (the user's)
//    counts only for a rank that root's task ends place on the node whose
//    Epilog read it, once per rank; it can name a rank, never a node: no
//    rule below takes a node from a dump or from any text.
// 1. The step. The regular step (below kFirstSpecialStep) with the earliest
//    abnormal end (a wait status other than 0); SLURM's batch and extern
//    steps only when no regular step ended abnormally.
// 2. A node lost (sent no record, SLURM reports it down) outranks all: the
//    first of them (by name) is blamed, node-class, with no rank.
// 3. No abnormal end: a healthy job, Cause::none, nothing said.
// 4. A hang: every rank of the step ended by SIGTERM or SIGKILL (or exit
//    143/137, a shell's spelling of them), the SIGTERMs within kHangWindowNs
//    of the first end, and the first end a SIGTERM (or every end a SIGKILL
//    within the window: a cancel with KILL). SLURM signals every rank at
//    once; a rank that died first (case 1: one rank SIGKILLed, the rest
//    SIGTERMed by srun after) is no hang. If a node's node-class evidence
//    (below) came within kCauseWindowNs before, that node is blamed (a GPU
//    that fell off the bus hangs the collective until the time limit);
//    otherwise Cause::hang, naming from the dumps the ranks that did not
//    enter the first collective the others entered; where every rank
//    entered the same ones, from the dumps' times the rank that entered one
//    late (by its own pace, on its own node's clock: late_entry below); or
//    saying that no rank evidence was kept and how to keep it.
// 5. The first failure is the earliest abnormal end. Teardown (SIGTERM or
//    SIGKILL after it) is the cascade; so are the ends that only name a
//    peer, which root's records show as a node-class sign on ANOTHER node
//    that came before the first failure (a link cut: every rank's gloo
//    fails, the cut node's ranks not first): then the failure moves to that
//    node, to its earliest abnormal end.
// 6. Its cause, from its node's root evidence between kCauseWindowNs before
//    and kEvidenceSlackNs after it, in this precedence:
//      GPU Xid (any gpu_xid sign: the collector keeps the site's fatal Xids),
//      a GPU lost (gpu_lost: present at the job's start, gone at its end),
//      OOM (an OOM-killer line whose pid is the task's, or the task's step
//        cgroup counted an oom_kill by then),
//      an RDMA device lost (hca_lost), then
//      IB or link down (link_down, or ib_errors timed within the window),
//      a fatal signal (the wait status),
//      a non-zero exit.
//    Node-class: node lost, Xid, a GPU or an RDMA device lost, link down.
//    An OOM or a signal names the node where the rank ran, not as at fault.
// 7. A user's bug blames no node: every rank's dump holds the same
//    exception, or every rank of the step ended with the same status within
//    kAlikeWindowNs of the first end, dumps or none (Cause::user_error: the
//    program failed on every rank); or the first failure is a non-zero exit
//    and its node has no root evidence at all (Cause::nonzero_exit, node
//    empty). Root's evidence comes first: an Xid under every rank's same
//    NCCL exception is the Xid's. A cascade is not alike: one rank's exit 3
//    and the others' exit 1 or SLURM's SIGTERM after it differ in status. The
//    line names where the first failure ran in every case (Verdict::ran_on).
// 8. The cascade: every other abnormal end of the step, counted, with the
//    first and last of them in seconds after the failure, and how they
//    ended (one way, or "mixed (...)" naming the commonest three).
#include "verdict.hpp"
#include "stall.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "../base/error.hpp"
#include "../base/stats.hpp"
#include "../base/text.hpp"

namespace gangway::postmortem {
namespace {

struct End {
    const TaskEnd* t;
    const NodeRecord* rec;
};

bool signaled_by(int ws, int sig) { return WIFSIGNALED(ws) && WTERMSIG(ws) == sig; }
bool exited_with(int ws, int code) { return WIFEXITED(ws) && WEXITSTATUS(ws) == code; }
bool term_like(int ws) { return signaled_by(ws, SIGTERM) || exited_with(ws, 128 + SIGTERM); }
bool kill_like(int ws) { return signaled_by(ws, SIGKILL) || exited_with(ws, 128 + SIGKILL); }

bool in_window(const Evidence& e, std::int64_t at) {
    return e.t_ns >= at - kCauseWindowNs && e.t_ns <= at + kEvidenceSlackNs;
}

// The earliest evidence of `sign` on `rec` in the window around `at`; with
// `pid`, only a line about that process.
const Evidence* earliest(const NodeRecord& rec, std::int64_t at, Sign sign, std::optional<std::int32_t> pid = {}) {
    const Evidence* best = nullptr;
    for (const auto& e : rec.evidence)
        if (e.sign == sign && in_window(e, at) && (!pid || e.pid == *pid) && (!best || e.t_ns < best->t_ns)) best = &e;
    return best;
}

// The node-class evidence of `rec` that decides its cause (Xid, a GPU lost,
// an RDMA device lost, then a link), in the window around `at`.
const Evidence* node_class_evidence(const NodeRecord& rec, std::int64_t at) {
    for (const Sign s : {Sign::gpu_xid, Sign::gpu_lost, Sign::hca_lost})
        if (const auto* x = earliest(rec, at, s)) return x;
    const auto* l = earliest(rec, at, Sign::link_down);
    const auto* i = earliest(rec, at, Sign::ib_errors);
    if (l && i) return l->t_ns <= i->t_ns ? l : i;
    return l ? l : i;
}

std::string device_name(const Evidence& e) {
    return e.device.empty() ? std::string() : " " + quiet_text(printable_name(e.device), 64);
}
std::string device_words(const Evidence& e) { return e.device.empty() ? std::string() : " on" + device_name(e); }

void set_cause_from(Verdict& v, const Evidence& e) {
    v.node_class = true;
    v.t_ns = e.t_ns;
    v.evidence_text = quiet_text(e.text, kMaxEvidenceText);
    if (e.sign == Sign::gpu_xid) {
        v.cause = Cause::gpu_xid;
        v.detail = "GPU Xid " + std::to_string(e.code) + device_words(e);
    } else if (e.sign == Sign::gpu_lost) {
        v.cause = Cause::gpu_lost;
        v.detail = "GPU" + device_name(e) + " gone from the PCI bus since the job's start";
    } else if (e.sign == Sign::hca_lost) {
        v.cause = Cause::hca_lost;
        v.detail = "RDMA device" + device_name(e) + " gone since the job's start";
    } else if (e.sign == Sign::link_down) {
        v.cause = Cause::link_down;
        v.detail = "link down" + device_words(e);
    } else {
        v.cause = Cause::link_down;
        v.detail = "IB errors grew by " + std::to_string(e.code) + device_words(e);
    }
}

// How an end reads in the cascade's summary.
std::string how(int ws) {
    if (signaled_by(ws, SIGTERM)) return "SIGTERM from SLURM";
    return describe_wait_status(ws);
}

void sum_cascade(Verdict& v, const std::vector<End>& ends, const TaskEnd* first) {
    std::map<std::string, std::uint32_t> kinds;
    bool any = false;
    std::int64_t lo = 0, hi = 0;
    for (const auto& e : ends) {
        if (e.t == first || e.t->wait_status == 0) continue;
        const std::int64_t d = std::max<std::int64_t>(0, e.t->t_ns - v.t_ns);
        lo = any ? std::min(lo, d) : d;
        hi = any ? std::max(hi, d) : d;
        any = true;
        ++v.cascade_ranks;
        ++kinds[how(e.t->wait_status)];
    }
    if (!any) return;
    v.cascade_from_s = double(lo) / 1e9;
    v.cascade_to_s = double(hi) / 1e9;
    if (kinds.size() == 1) {
        v.cascade_how = kinds.begin()->first;
        return;
    }
    std::vector<std::pair<std::uint32_t, std::string>> byn;
    for (const auto& [k, n] : kinds) byn.emplace_back(n, k);
    std::stable_sort(byn.begin(), byn.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    v.cascade_how = "mixed: ";
    for (std::size_t i = 0; i < byn.size() && i < 3; ++i)
        v.cascade_how += (i ? ", " : "") + std::to_string(byn[i].first) + " " + byn[i].second;
    if (byn.size() > 3) v.cascade_how += ", ...";
}

void place_rank(Verdict& v, const End& e) {
    v.node = e.rec->node;
    v.ran_on = e.rec->node;
    v.rank = e.t->rank;
    v.local_rank = e.t->local_rank;
}

// Rule 4's naming, from the dumps: each process group numbers its own
// collectives (Flight Recorder's collective_seq_id, consecutive per rank and
// group; the ring buffer keeps the newest, which is what this reads), so the
// numbers compare only within a group. In a group, a laggard is a member
// whose last entered collective is below another member's. A rank blocked
// inside a collective it entered and did not complete is waiting for someone:
// with tensor and data parallel groups, the stopped rank's group waits inside
// its collective, and that whole group lags in the data-parallel group. So the
// ranks named are the laggards that wait for nothing; where every laggard
// waits (a backend that marks no completion), the smallest set of laggards of
// one group, as with a single group.
using DumpsByRank = std::unordered_map<std::uint32_t, std::vector<const RankDump*>>;

// Rule 4's naming by time, where every member entered the same collectives:
// the rank the others waited for entered one late. A rank's pace, the time
// from its entry into collective s-1 to its entry into s, is read on its own
// node's clock alone, so clocks that differ between nodes do not matter. In a
// collective s of a group, a member is late by its pace less the group's
// (lower) median pace in s; the group's usual spread is the median, over the
// timed collectives, of the largest pace less the smallest. Named: the members
// late by more than kLateMinNs and kLateJitterFactor times the usual spread,
// in the newest such collective, and only where the late entry came within
// kHangWindowNs of the rank's own end (the others were still waiting for it
// when SLURM signalled; the rank's end and its dump share its node's clock).
struct LateEntry {
    std::string group;
    std::uint64_t seq = 0;
    std::vector<std::uint32_t> ranks;
    std::int64_t by_ns = 0;  // the least late of them
    std::uint32_t others = 0;
};

std::int64_t entered_at(const RankDump& d, std::uint64_t seq) {
    for (auto it = d.timed.rbegin(); it != d.timed.rend(); ++it)
        if (it->seq == seq) return it->entered_ns;
    return 0;
}

std::optional<LateEntry> late_entry(const std::string& group, const std::vector<const RankDump*>& members,
                                    const std::unordered_map<std::uint32_t, std::int64_t>& end_of) {
    if (members.size() < 2) return std::nullopt;
    std::uint64_t lo = 0, hi = std::numeric_limits<std::uint64_t>::max();
    for (const RankDump* d : members) {
        if (d->timed.empty()) return std::nullopt;
        std::uint64_t mn = d->timed.front().seq, mx = mn;
        for (const auto& t : d->timed) mn = std::min(mn, t.seq), mx = std::max(mx, t.seq);
        lo = std::max(lo, mn), hi = std::min(hi, mx);
    }
    if (hi <= lo || hi - lo >= kMaxTimed) return std::nullopt;
    // Each member's pace into s, or false where one of them lacks a time.
    std::vector<std::int64_t> pace(members.size());
    auto paces = [&](std::uint64_t s) {
        for (std::size_t i = 0; i < members.size(); ++i) {
            const std::int64_t a = entered_at(*members[i], s - 1), b = entered_at(*members[i], s);
            if (a <= 0 || b <= 0) return false;
            pace[i] = b - a;
        }
        return true;
    };
    std::vector<std::int64_t> spreads;
    for (std::uint64_t s = lo + 1; s <= hi; ++s)
        if (paces(s)) spreads.push_back(*std::max_element(pace.begin(), pace.end()) - *std::min_element(pace.begin(), pace.end()));
    if (spreads.empty()) return std::nullopt;
    const std::int64_t threshold = std::max(kLateMinNs, kLateJitterFactor * lower_median(spreads));
    for (std::uint64_t s = hi; s > lo; --s) {
        if (!paces(s)) continue;
        const std::int64_t median = lower_median(pace);
        LateEntry late;
        late.group = group, late.seq = s, late.by_ns = std::numeric_limits<std::int64_t>::max();
        for (std::size_t i = 0; i < members.size(); ++i) {
            const auto end = end_of.find(members[i]->rank);
            if (pace[i] - median <= threshold || end == end_of.end() || end->second - entered_at(*members[i], s) > kHangWindowNs) continue;
            late.ranks.push_back(members[i]->rank);
            late.by_ns = std::min(late.by_ns, pace[i] - median);
        }
        if (late.ranks.empty()) continue;
        std::sort(late.ranks.begin(), late.ranks.end());
        late.others = std::uint32_t(members.size() - late.ranks.size());
        return late;
    }
    return std::nullopt;
}

void name_hang_ranks(Verdict& v, const std::vector<End>& ends, const DumpsByRank& dumps) {
    if (dumps.empty()) {
        v.detail = kNoRankEvidenceHint;
        return;
    }
    for (const auto& e : ends)
        if (!dumps.count(e.t->rank)) v.ranks_without_dump.push_back(e.t->rank);
    std::sort(v.ranks_without_dump.begin(), v.ranks_without_dump.end());

    struct Member { std::uint32_t rank; std::uint64_t next; };  // next: 1 + last entered (0: none)
    std::map<std::string, std::vector<Member>> groups;
    std::vector<std::uint32_t> waiting;  // blocked inside its newest entered collective of a group
    for (const auto& [rank, ds] : dumps)
        for (const RankDump* d : ds) {
            std::uint64_t m = 0;
            for (auto s : d->entered) m = std::max(m, s == std::numeric_limits<std::uint64_t>::max() ? s : s + 1);
            groups[d->group].push_back({rank, m});
            // Its newest entered one not completed (searched from the newest end: no copy).
            if (m > 0 && std::find(d->completed.rbegin(), d->completed.rend(), m - 1) == d->completed.rend()) waiting.push_back(rank);
        }
    std::sort(waiting.begin(), waiting.end());
    auto is_waiting = [&](std::uint32_t r) { return std::binary_search(waiting.begin(), waiting.end(), r); };
    struct Lag { std::string group; std::uint64_t lo = 0, hi = 0; std::vector<std::uint32_t> ranks; std::uint32_t others = 0; };
    std::vector<Lag> lags;
    std::uint64_t only_next = 0;
    for (auto& [name, members] : groups) {
        std::sort(members.begin(), members.end(), [](const Member& a, const Member& b) { return a.rank < b.rank; });
        Lag l;
        l.group = name;
        l.lo = std::numeric_limits<std::uint64_t>::max();
        for (const auto& m : members) l.lo = std::min(l.lo, m.next), l.hi = std::max(l.hi, m.next);
        only_next = l.hi;
        if (l.lo == l.hi) continue;
        for (const auto& m : members)
            if (m.next < l.hi) l.ranks.push_back(m.rank);
            else ++l.others;
        lags.push_back(std::move(l));
    }
    if (lags.empty()) {
        // Every member entered the same collectives: who entered one late.
        std::unordered_map<std::uint32_t, std::int64_t> end_of;
        for (const auto& e : ends) end_of.emplace(e.t->rank, e.t->t_ns);
        std::map<std::string, std::vector<const RankDump*>> members;
        for (const auto& [rank, ds] : dumps)
            for (const RankDump* d : ds) members[d->group].push_back(d);
        std::optional<LateEntry> late;
        for (const auto& [name, ds] : members)
            if (auto l = late_entry(name, ds, end_of); l && (!late || l->by_ns > late->by_ns)) late = std::move(l);
        if (late) {
            v.hang_ranks = late->ranks;
            char by[32];
            std::snprintf(by, sizeof by, "%.1f", double(late->by_ns) / 1e9);
            const bool one = late->ranks.size() == 1;
            v.detail = rank_list(late->ranks) + " entered collective " + std::to_string(late->seq) +
                       (members.size() > 1 ? " of process group " + quiet_text(late->group, kMaxGroupName) : std::string()) +
                       " " + by + " s late, after the " + std::to_string(late->others) + " other rank" +
                       (late->others == 1 ? "" : "s") + ", which waited for " + (one ? "it" : "them");
            return;
        }
        v.detail = groups.size() > 1 ? "every rank with a dump entered the newest collective of each of its process groups"
                                       " (a stall inside one: the network or a GPU)"
                   : only_next == 0 ? "the ranks' dumps show no collective entered"
                                    : "every rank with a dump entered collective " + std::to_string(only_next - 1) +
                                          " (a stall inside it: the network or a GPU)";
        return;
    }
    // The laggards that wait for nothing; the collective named is that of the
    // group where they lag among the fewest (the innermost: tensor parallel
    // before data parallel).
    const Lag* named = nullptr;
    for (const auto& l : lags) {
        std::vector<std::uint32_t> free;
        for (auto r : l.ranks)
            if (!is_waiting(r)) free.push_back(r);
        if (free.empty()) continue;
        if (!named || l.ranks.size() < named->ranks.size()) named = &l;
        for (auto r : free) v.hang_ranks.push_back(r);
    }
    if (!named) {
        named = &*std::min_element(lags.begin(), lags.end(), [](const Lag& a, const Lag& b) { return a.ranks.size() < b.ranks.size(); });
        v.hang_ranks = named->ranks;
    }
    std::sort(v.hang_ranks.begin(), v.hang_ranks.end());
    v.hang_ranks.erase(std::unique(v.hang_ranks.begin(), v.hang_ranks.end()), v.hang_ranks.end());
    // The collective they did not enter: the first one past the laggards' in that group.
    std::uint64_t lo = named->hi;
    for (const auto& m : groups.at(named->group))
        if (std::find(v.hang_ranks.begin(), v.hang_ranks.end(), m.rank) != v.hang_ranks.end()) lo = std::min(lo, m.next);
    const std::string of_group = groups.size() > 1 ? " of process group " + quiet_text(named->group, kMaxGroupName) : "";
    v.detail = rank_list(v.hang_ranks) + " did not enter collective " + std::to_string(lo) + of_group + ", which " +
               std::to_string(named->others) + " other rank" + (named->others == 1 ? "" : "s") + " entered";
}

// What the rules read: one job's records, each rank's end once, the step
// judged, its ends in time order and its abnormal ones, the ranks' dumps.
struct Case {
    const std::vector<NodeRecord>& records;
    std::unordered_map<std::string, const NodeRecord*> by_node;  // each node's first record
    std::vector<End> ends;                                       // the step's, by time then rank
    std::vector<End> bad;                                        // those that did not end with 0
    DumpsByRank dumps;

    // The earliest node-class evidence of any node (but `except`) in the window before `at`.
    std::pair<const Evidence*, const NodeRecord*> any_node_class(std::int64_t at, const NodeRecord* except) const {
        const Evidence* best = nullptr;
        const NodeRecord* where = nullptr;
        for (const auto& r : records) {
            if (&r == except || by_node.at(r.node) != &r) continue;
            if (const auto* e = node_class_evidence(r, at); e && (!best || e->t_ns < best->t_ns)) best = e, where = &r;
        }
        return {best, where};
    }
};

// Rule 0: root's task ends, each as its own node's, once per (step, rank),
// ordered by step then rank.
std::vector<End> task_ends(Case& c, Verdict& v) {
    std::vector<End> all;
    for (const auto& r : c.records) {
        if (!c.by_node.emplace(r.node, &r).second) {  // a node's record twice: the first counts
            v.records_ignored += r.tasks.size() + r.dumps.size();
            continue;
        }
        for (const auto& t : r.tasks) {
            if (t.node != r.node || t.job != r.job) {
                ++v.records_ignored;
                continue;
            }
            all.push_back({&t, &r});
        }
    }
    std::stable_sort(all.begin(), all.end(), [](const End& a, const End& b) {
        return a.t->step != b.t->step ? a.t->step < b.t->step : a.t->rank < b.t->rank;
    });
    std::vector<End> once;
    for (const auto& e : all) {
        if (!once.empty() && once.back().t->step == e.t->step && once.back().t->rank == e.t->rank) {
            ++v.records_ignored;
            continue;
        }
        once.push_back(e);
    }
    return once;
}

// Rule 1: the step of the earliest abnormal end (a user's step before
// SLURM's special ones), else the first; its ends in time order.
void pick_step(Case& c, Verdict& v, const std::vector<End>& all) {
    const End* earliest_bad = nullptr;
    for (bool special : {false, true}) {
        for (const auto& e : all) {
            if (e.t->wait_status == 0 || (e.t->step >= kFirstSpecialStep) != special) continue;
            if (!earliest_bad || e.t->t_ns < earliest_bad->t->t_ns) earliest_bad = &e;
        }
        if (earliest_bad) break;
    }
    if (earliest_bad)
        v.step = earliest_bad->t->step;
    else if (!all.empty())
        v.step = all.front().t->step;
    for (const auto& e : all)
        if (e.t->step == v.step) c.ends.push_back(e);
    std::stable_sort(c.ends.begin(), c.ends.end(), [](const End& a, const End& b) {
        return a.t->t_ns != b.t->t_ns ? a.t->t_ns < b.t->t_ns : a.t->rank < b.t->rank;
    });
    v.step_ranks = std::uint32_t(c.ends.size());
    for (const auto& e : c.ends)
        if (e.t->wait_status != 0) c.bad.push_back(e);
}

// Rule 0, the dumps: a rank's, from the node root placed the rank on; one per
// rank and process group (a second one of a pair is ignored).
void rank_dumps(Case& c, Verdict& v) {
    std::unordered_map<std::uint32_t, const NodeRecord*> rank_node;
    for (const auto& e : c.ends) rank_node.emplace(e.t->rank, e.rec);
    for (const auto& [name, r] : c.by_node)
        for (const auto& d : r->dumps) {
            const auto it = rank_node.find(d.rank);
            auto& mine = c.dumps[d.rank];
            const bool again = std::any_of(mine.begin(), mine.end(), [&](const RankDump* x) { return x->group == d.group; });
            if (it == rank_node.end() || it->second != r || again) {
                ++v.records_ignored;
                if (mine.empty()) c.dumps.erase(d.rank);
            } else mine.push_back(&d);
        }
}

// Rule 2: a node lost (no record, SLURM shows it down) is the cause.
void judge_lost(const Case& c, Verdict& v, std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    v.cause = Cause::node_lost;
    v.node_class = true;
    v.node = names.front();
    v.t_ns = c.bad.empty() ? 0 : c.bad.front().t->t_ns;
    v.detail = "the node was lost (no record; SLURM reports it down)";
    if (names.size() > 1) v.detail += ", and " + std::to_string(names.size() - 1) + " other node" + (names.size() > 2 ? "s" : "");
    sum_cascade(v, c.ends, nullptr);
}

// Rule 4: a hang, when every rank ended by SLURM's signal within the window
// (TERM first, or KILL alone). Root's node-class evidence names the node;
// else root's samples name the stalled ranks, else the ranks' dumps. False
// when the ends are not a hang's.
bool judge_hang(const Case& c, Verdict& v) {
    const End& first = c.bad.front();
    const std::int64_t t0 = first.t->t_ns;
    bool all_kill_in_window = true, term_ok = true;
    for (const auto& e : c.ends) {
        const int ws = e.t->wait_status;
        if (!term_like(ws) && !kill_like(ws)) term_ok = false;
        if (term_like(ws) && e.t->t_ns - t0 > kHangWindowNs) term_ok = false;
        if (!kill_like(ws) || e.t->t_ns - t0 > kHangWindowNs) all_kill_in_window = false;
    }
    if (!term_ok || c.bad.size() != c.ends.size() || !(term_like(first.t->wait_status) || all_kill_in_window)) return false;
    if (const auto [e, where] = c.any_node_class(t0, nullptr); e) {
        v.node = where->node;
        set_cause_from(v, *e);
        sum_cascade(v, c.ends, nullptr);
        return true;
    }
    v.cause = Cause::hang;
    v.t_ns = t0;
    // Root's samples first: what slurmstepd saw of each task while the
    // others waited outweighs what the ranks' own dumps say of themselves.
    if (auto stalls = find_stalls(c.records, v.step, t0); !stalls.empty()) {
        for (const auto& x : stalls) v.hang_ranks.push_back(x.rank);
        std::sort(v.hang_ranks.begin(), v.hang_ranks.end());
        v.hang_ranks.erase(std::unique(v.hang_ranks.begin(), v.hang_ranks.end()), v.hang_ranks.end());
        const auto n = std::uint32_t(v.hang_ranks.size());
        v.detail = stall_words(stalls, v.step_ranks > n ? v.step_ranks - n : 0);
        v.stalls = std::move(stalls);
    } else {
        name_hang_ranks(v, c.ends, c.dumps);
    }
    sum_cascade(v, c.ends, nullptr);
    return true;
}

// Rules 5 and 6: the first abnormal end and its cause: a GPU's fault on its
// node, the OOM killer, other node-class evidence there, a peer node's
// evidence (returns true: the verdict is that node's, complete), else the
// end's own status (Rule 7: a non-zero exit without root's evidence on its
// node names no node).
bool judge_first_failure(const Case& c, Verdict& v) {
    const End& first = c.bad.front();
    const std::int64_t t0 = first.t->t_ns;
    const NodeRecord& own = *first.rec;
    if (const auto* e = node_class_evidence(own, t0); e && (e->sign == Sign::gpu_xid || e->sign == Sign::gpu_lost)) {
        place_rank(v, first);
        set_cause_from(v, *e);
    } else if (const auto* oom = earliest(own, t0, Sign::oom_kill, first.t->pid); oom || first.t->oom_kills > 0) {
        place_rank(v, first);
        v.cause = Cause::oom;
        v.t_ns = t0;
        v.detail = "killed by the OOM killer";
        if (oom) v.evidence_text = quiet_text(oom->text, kMaxEvidenceText);
        else v.evidence_text = "the step cgroup counted " + std::to_string(first.t->oom_kills) + " oom_kill";
    } else if (e) {
        place_rank(v, first);
        set_cause_from(v, *e);
    } else if (const auto [pe, where] = c.any_node_class(t0, &own); pe) {
        // Rule 5's peer: the failure is that node's, at its earliest abnormal end if it had one.
        v.node = where->node;
        const TaskEnd* theirs = nullptr;
        for (const auto& b : c.bad)
            if (b.rec == where) {
                theirs = b.t;
                break;
            }
        if (theirs) v.rank = theirs->rank, v.local_rank = theirs->local_rank, v.ran_on = where->node;
        set_cause_from(v, *pe);
        sum_cascade(v, c.ends, theirs);
        return true;
    } else {
        place_rank(v, first);
        v.t_ns = t0;
        v.detail = describe_wait_status(first.t->wait_status);
        v.cause = WIFSIGNALED(first.t->wait_status) ? Cause::fatal_signal : Cause::nonzero_exit;
        // Rule 7: a non-zero exit with no root evidence on its node is the job's own.
        bool own_evidence = false;
        for (const auto& ev : own.evidence) own_evidence = own_evidence || in_window(ev, t0);
        if (v.cause == Cause::nonzero_exit && !own_evidence) v.node.clear();
        if (own_evidence && v.evidence_text.empty())
            for (const auto& ev : own.evidence)
                if (in_window(ev, t0)) {
                    v.evidence_text = std::string(to_string(ev.sign)) + ": " + quiet_text(ev.text, kMaxEvidenceText);
                    break;
                }
    }
    return false;
}

// Rule 7: a signal or exit that every rank shared is the program's: the same
// exception in every rank's dump, or the same status within kAlikeWindowNs of
// the first end, dumps or none.
void judge_alike(const Case& c, Verdict& v) {
    if (v.cause != Cause::fatal_signal && v.cause != Cause::nonzero_exit) return;
    const RankDump* one = nullptr;
    bool same = c.dumps.size() == c.ends.size() && !c.ends.empty();
    for (const auto& e : c.ends) {
        if (!same) break;
        const auto it = c.dumps.find(e.t->rank);
        if (it == c.dumps.end() || it->second.front()->exception.empty()) same = false;
        else if (!one) one = it->second.front();
        else if (it->second.front()->exception != one->exception) same = false;
    }
    if (same && one) {
        v.cause = Cause::user_error;
        v.alike = Alike::same_exception;
        v.node.clear();
        v.node_class = false;
        v.detail = one->exception;
        return;
    }
    if (c.ends.size() < 2) return;
    const End& first = c.bad.front();
    const std::int64_t t0 = first.t->t_ns;
    const int ws = first.t->wait_status;
    for (const auto& e : c.ends)
        if (e.t->wait_status != ws || e.t->t_ns - t0 > kAlikeWindowNs) return;
    v.cause = Cause::user_error;
    v.alike = Alike::same_status;
    v.alike_within_s = double(c.ends.back().t->t_ns - t0) / 1e9;
    v.node.clear();
    v.node_class = false;
    v.detail = describe_wait_status(ws);
}

}  // namespace

Verdict judge(const std::vector<NodeRecord>& records, const std::vector<std::string>& lost) {
    Verdict v;
    if (!records.empty()) v.job = records.front().job;
    for (const auto& r : records)
        if (r.job != v.job)
            throw Error("the records are of jobs " + std::to_string(v.job) + " and " + std::to_string(r.job) +
                        ": judge one job's records at a time");
    Case c{records, {}, {}, {}, {}};
    const auto all = task_ends(c, v);
    pick_step(c, v, all);
    rank_dumps(c, v);
    if (!lost.empty()) {
        judge_lost(c, v, lost);
        return v;
    }
    if (c.bad.empty()) return v;  // Rule 3: nothing ended badly
    if (judge_hang(c, v) || judge_first_failure(c, v)) return v;
    judge_alike(c, v);
    sum_cascade(v, c.ends, c.bad.front().t);
    return v;
}

}  // namespace gangway::postmortem
