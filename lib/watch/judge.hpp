// The running job's judgement (issue 43): from the nodes' progress records
// of one step over the last minutes, the straggler the others wait for and
// a hang. Pure: records and the time in, a Judgement out; tested on
// synthetic paces (tests/unit/watch_judge_test.cpp); at 512 ranks on 64
// nodes one call takes well under 100 ms (bench/watch_judge).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pace.hpp"

namespace gangway::watch {

struct JudgeSettings {
    std::int64_t interval_ns = 10'000'000'000;   // the reports' interval
    int sustain = 3;                // intervals in a row the same node must lead before it is named
    double min_share = 0.2;         // its lead against the pace (the collectives' median interval)
    std::int64_t min_lead_ns = 20'000'000;        // and at least this (clocks synced within a few ms)
    std::int64_t hang_min_ns = 60'000'000'000;    // a hang: nothing completed for at least this
    int hang_paces = 10;            // and for this many of the job's own intervals between collectives
};

// Why root's evidence says the straggler's node is slow, where it says so.
enum class Reason : std::uint8_t { none, cpu_wait, cpu_pressure, memory_pressure, io_pressure, network };
const char* reason_name(Reason r) noexcept;  // "cpu_wait", ...

struct Straggler {
    std::string node;
    std::vector<std::uint32_t> ranks;  // its ranks that entered last
    std::string group;                 // the process group judged
    std::int64_t lead_ns = 0;          // how much later than the next node its ranks entered, a collective (median)
    std::int64_t pace_ns = 0;          // the median interval between the group's collectives
    double slowdown = 1.0;             // pace / (pace - lead): the job's pace against its pace without this node
    int intervals = 0;                 // intervals in a row it led
    // Named by its link (Reason::network) rather than by the ranks' lead:
    // the job's best pace in the history (the slowdown is pace_ns against it).
    std::int64_t best_pace_ns = 0;
    Reason reason = Reason::none;      // root's confirmation (none: the ranks' word only)
    std::string evidence;              // root's figures behind `reason`, one phrase
};

struct Hang {
    std::string group;
    std::uint64_t waiting_in = 0;       // the collective the others entered and none completed
    std::int64_t since_ns = 0;          // nothing of the group completed since (the node's clock)
    std::int64_t for_ns = 0;            // how long that is: the judgement's now - since_ns (for the line)
    std::int64_t limit_ns = 0;          // the limit it passed
    std::vector<std::uint32_t> missing; // the ranks that did not enter it (empty: all entered)
    std::vector<std::string> nodes;     // their nodes (root's mapping)
    // Root's view of the missing ranks (or of every rank when none is missing):
    // stopped, in uninterruptible sleep, or not on a CPU. A rank root sees
    // computing is busy outside collectives (a long evaluation, a checkpoint),
    // not hung: then `confirmed` is false and nothing acts on it.
    bool confirmed = false;
    std::string evidence;               // one phrase: "rank 5 stopped (T) on node10"
};

struct Judgement {
    std::int64_t pace_ns = 0;                // the busiest group's median interval between collectives (0: unknown)
    std::uint64_t collectives = 0;           // the busiest group's newest entered collective
    std::size_t ranks_reporting = 0;         // ranks with a report in the newest interval
    std::size_t ranks_expected = 0;          // ranks root placed on the reporting nodes
    std::optional<Straggler> straggler;
    std::optional<Hang> hang;
    std::vector<std::string> notes;          // what could not be judged, one line each
};

// `history`: every node's records of one step, any order, the newest
// several minutes (the caller keeps at most kMaxHistory a node); `now_ns`
// on the same clocks.
Judgement judge(const std::vector<NodeProgress>& history, std::int64_t now_ns, const JudgeSettings& s = {});
// The same over records the caller keeps elsewhere (serve's, shared with
// its judging thread): no copy of them.
Judgement judge_records(const std::vector<const NodeProgress*>& history, std::int64_t now_ns, const JudgeSettings& s = {});
inline constexpr std::size_t kMaxHistory = 24;

// One line for people ("straggler: node10 (ranks 4, 5), 180 ms later than
// the next node a collective, the job 2.1x slower; node10's ranks waited
// for a CPU 48% of the time"), "" when the judgement names nothing.
std::string judgement_line(const Judgement& j);

}  // namespace gangway::watch
