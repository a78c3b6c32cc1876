// The trends as SVG (`gangway fleet show --svg FILE`): per node a small plot
// per figure (its daily medians over the history window, its baseline and its
// peers' median, the recent window shaded, red when flagged), and a fleet view
// per class (the daily median of every figure of the class with its 10th to
// 90th percentile band, flagged series drawn over it). Pure: figures and the
// trends in, text out.
//
// Bounded: at most kSvgMaxNodes nodes (the flagged first, then by name; a
// line says how many are left out), kSvgMaxSeries plots a node, one point a
// day of the history window; so the file stays under a few hundred KB for any
// fleet.
#pragma once
#include <string>
#include <vector>

#include "trend.hpp"

namespace gangway::fleet {

inline constexpr std::size_t kSvgMaxNodes = 32;
inline constexpr std::size_t kSvgMaxSeries = 8;

// `nodes` empty: the fleet view and the flagged nodes (then others up to the
// bound); else those nodes' plots (links included) and the fleet view.
std::string render_trend_svg(const std::vector<Figure>& figures, const TrendResult& r, std::int64_t now,
                             const TrendSettings& s, const std::vector<std::string>& nodes);

}  // namespace gangway::fleet
