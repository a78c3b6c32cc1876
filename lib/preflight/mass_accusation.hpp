// Many nodes named at once are not many bad nodes. On a loaded machine, or a
// network that is slow for everyone, a bandwidth check can measure most
// links slow and confirm it: seen at 128 nodes under a CPU hog, checks that
// named 64, 81 and 82 nodes slow or unreachable. A check that accuses a
// healthy node is worse than no check (it requeues jobs without good nodes,
// drains them), so past a share of the nodes it names none and says why;
// the verdict still fails (the job should not start on such a network).
// The drain Epilog has the same rule for its requests (GANGWAY_DRAIN_MAX).
// Pure: the report in, the report out.
#pragma once
#include <cstddef>

#include "report.hpp"

namespace gangway::preflight {

inline constexpr double kDefaultMaxNamedShare = 0.25;  // --max-named, GANGWAY_MAX_NAMED

// The nodes a measurement named (slow, unreachable; not a device's own
// fault, a card mismatch, nor a task that never checked in or died) when
// there are more than max(1, share x the report's nodes): each goes back to
// ok, its reasons kept as notes, and one finding says how many and why.
// Returns how many were held back (0: the report is unchanged). O(n).
std::size_t hold_mass_accusation(Report& r, double share);

}  // namespace gangway::preflight
