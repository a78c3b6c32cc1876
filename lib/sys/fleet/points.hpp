// The fleet store's figures on disk (schema 2, issue 34): one row per node
// and UTC day whose blob packs that node's figures of the day, 24 bytes
// each, and a `series` table that names each (node, device, peer,
// peer_class, metric) once. A link's figures, both directions, live under
// the first of its two nodes by name, so that a reader that goes node by
// node has all of a series' figures at once (the trends judge a link from
// both ends).
//
// Why blobs and not a row per figure: a 30-day store of a 2,048-node site
// holds about 4.8 million figures. SQLite steps through about 3 million
// narrow rows a second on the admin host (measured, issue 34), so a reader
// that walked them all took seconds before doing anything, and one report
// of 2,048 nodes was 59,000 inserts into two indexes. A node-day is one row:
// 2,048 upserts per report, 63,000 rows to read for 30 days.
//
// A point, little-endian as the host writes it (the store is the admin
// host's own file):
//   f64 value       bytes per second
//   u32 series      series.id
//   u32 uid         the spooled file's owner
//   u32 when        seconds since the day's start (0..86399); bit 31: the check was a job check
//   u32 check       a raw figure: the check's row (bit 31 clear);
//                   a folded one (the day's median): bit 31 set, the low 31 bits how many figures it folds
// Pure: bytes in, points out.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../../fleet/model.hpp"

namespace gangway::sys::fleet {

inline constexpr std::size_t kPointBytes = 24;
inline constexpr std::uint32_t kPointHighBit = 0x80000000u;
// The largest check row a point can name (bit 31 marks a folded point).
inline constexpr std::int64_t kMaxCheckRow = 0x7fffffff;

struct StoredPoint {
    double value = 0;
    std::uint32_t series = 0;
    std::uint32_t uid = 0;
    std::int64_t time = 0;             // unix seconds (the day's start + when)
    gangway::fleet::Source source = gangway::fleet::Source::node_check;
    std::uint32_t check = 0;           // the check's row; 0 for a folded point
    std::uint32_t count = 1;           // figures it stands for (1 raw; n folded)
    bool folded = false;
};

// Appends one point (its time must fall in `day_start`'s day).
void append_point(std::string& blob, const StoredPoint& p, std::int64_t day_start);
// The points of one row's blob; trailing bytes that make no whole point are
// ignored (a blob written by something else is never read past its end).
void decode_points(std::string_view blob, std::int64_t day_start, std::vector<StoredPoint>& out);

}  // namespace gangway::sys::fleet
