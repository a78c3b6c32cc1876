// The running job's records as text (issue 43, docs/watch.md):
//   - a rank's pace report, pace.RANK.json, as gangway's torch hook writes it
//     into the job's user directory (the user's word):
//       {"kind":"gangway-rank-pace","schema":1,"rank":5,"time_ns":T,
//        "groups":{"0":{"entered":812,"completed":811,"enters":[[749,T1],...,[812,T64]]}}}
//   - a node's progress record, which the node agent (root) signs and sends
//     to `fleet serve` (POST /v1/progress): {"kind":"gangway-progress",
//     "schema":1,"job":J,"step":S,"node":N,"uid":U,"time_ns":T,"interval_ns":I,
//     "ranks":[...],"paces":[<pace>...],"samples":[[T,RANK,"S",CPU,WAIT,PROCS]...],
//     "pressure":[[T,CPU,MEMORY,IO,"n"|"s"]...]}.
// Both parsers are strict and bounded (a user writes the first; the second
// crosses the network) and throw gangway::Error naming what is wrong.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "pace.hpp"

namespace gangway::watch {

inline constexpr std::size_t kMaxPaceBytes = 64 * 1024;
inline constexpr std::size_t kMaxProgressRanks = 512;            // ranks of one step on one node
inline constexpr std::size_t kMaxProgressSamples = 4 * 512 + 64; // the newest rounds of each task
inline constexpr std::size_t kMaxProgressPressure = 8;
inline constexpr std::size_t kMaxProgressBytes = 8u << 20;       // 512 paces of 8 groups of 64 enters fit

Pace parse_pace(std::string_view json);
std::string pace_json(const Pace& p);  // the hook's format (for tests and the simulator)

std::string progress_json(const NodeProgress& p);
NodeProgress parse_progress(std::string_view json);

}  // namespace gangway::watch
