// The trends as SVG (`gangway fleet show --svg FILE`): per node a small plot
// per figure (its daily medians over the history window, its baseline and its
// peers' median, the recent window shaded, red when flagged), and a fleet view
// per class (the daily median of every figure of the class with its 10th to
// 90th percentile band, flagged series drawn over it). Pure: figures and the
// trends in, text out.
//
// Bounded (issue 31, item 8), whatever the store holds: at most
// kSvgMaxClasses fleet plots (the classes with a flag first, then the
// largest; a line says how many are left out) with at most kSvgMaxSeries
// flagged series drawn on each, kSvgMaxNodes nodes (the flagged first, then
// by name; a line says how many are left out) of kSvgMaxSeries plots each,
// at most kSvgMaxPoints points a line (a window longer than that many days
// gets bins of several days), and every name through printable_name (at most
// 64 bytes, no control characters) and xml_escape (nothing XML 1.0 forbids).
// So the file is at most kSvgMaxBytes; a 30-day window stays under a few
// hundred KB. Linear in the figures: one pass, and one lookup per class.
#pragma once
#pragma once
#include <string>
#include <vector>

#include "trend.hpp"

namespace gangway::fleet {

inline constexpr std::size_t kSvgMaxNodes = 32;
inline constexpr std::size_t kSvgMaxSeries = 8;
inline constexpr std::size_t kSvgMaxClasses = 16;
inline constexpr std::size_t kSvgMaxPoints = 366;
inline constexpr std::size_t kSvgMaxBytes = 4u << 20;

// `nodes` empty: the fleet view and the flagged nodes (then others up to the
// bound); else those nodes' plots (links included) and the fleet view.
std::string render_trend_svg(const std::vector<Figure>& figures, const TrendResult& r, std::int64_t now,
                             const TrendSettings& s, const std::vector<std::string>& nodes);

}  // namespace gangway::fleet
