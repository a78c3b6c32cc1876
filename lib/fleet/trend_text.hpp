// The trends as text: `gangway fleet show`'s table and `gangway fleet
// flagged`'s lines. Pure: a TrendResult in, text out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "show.hpp"
#include "trend.hpp"

namespace gangway::fleet {

// `gangway fleet show`'s table: show.hpp's rows (node, metric, the last
// check's figure, of how many figures, when) with the trend of the node's
// series of that metric (its GPUs, ports or links, either end) between WHEN
// and CHECKS: BASELINE (the median of the series' baselines), TREND (the
// lowest recent/baseline - 1 of them, %), FLAG ("degrading" and the device or
// "-> peer" of the first flagged one, "+N" more). `fleet_footer`: then one
// line per class with its noise (the whole fleet's view).
//
// Bounded (issue 31, item 8): at most kTableMaxRows rows (the flagged ones
// first, then in order) and kTableMaxClasses noise lines, each with a last
// line saying how many were left out; every name through printable_name
// (lib/base/text.hpp: no control characters, at most 64 bytes) and every
// figure at most a few dozen characters, so a row stays under 320 bytes and
// the table under 6 MB whatever the store holds. 2,048 nodes have at most
// 14,336 rows (7 kinds of figure), all shown.
inline constexpr std::size_t kTableMaxRows = 16384;
inline constexpr std::size_t kTableMaxClasses = 64;
std::string render_trend_table(const std::vector<ShowRow>& rows, const TrendResult& r, bool fleet_footer);

// One line per flag, for scripts (gangway-fleet(8) documents the fields):
//   NODE[->PEER] METRIC DEVICE|- RECENT BASELINE PEERS SINCE
// the figures in bytes per second (integers), SINCE in UTC (ISO 8601); names
// through printable_name, as in the table. `nodes`
// as above (a link matches at either end); empty: every flag.
std::string render_flagged(const TrendResult& r, const std::vector<std::string>& nodes);
std::vector<const Flag*> flags_for(const TrendResult& r, const std::vector<std::string>& nodes);

// "2026-03-04T10:00:00Z".
std::string utc_text(std::int64_t unix_seconds);

}  // namespace gangway::fleet
