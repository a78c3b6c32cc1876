// The bandwidth stage's word on single links, after its nodes are judged
// (confirm.hpp): a ring link that was slow while both its ends proved fine
// against other peers is measured again on its own, and only a link slow
// twice is a finding; once is noise (on a busy host, concurrent streams do
// not share the CPU fairly). The engine (lib/sys/preflight/coordinator.cpp)
// runs the rounds; these are its decisions. Pure.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "localize.hpp"

namespace gangway::preflight {

struct RetestChoice {
    std::vector<Measurement> again;  // each such link once, as the ring first measured it
    std::vector<Measurement> no_path;  // links the reach stage found without a TCP path: a finding as they are
};

// The ring's slow links (`slow`: analyse_rounds' flags, one per measurement)
// whose ends `decided` does not name slow, each link once (a full check's
// ring holds a link once per round), in the ring's order; none when no link
// was good (`some_good` false: nothing to compare against). `dead(from, to)`:
// the reach stage's probes failed twice on that link.
RetestChoice links_to_retest(const std::vector<Measurement>& ring, const std::vector<bool>& slow,
                             const std::vector<NodeBw>& decided, bool some_good,
                             const std::function<bool(unsigned, unsigned)>& dead);

enum class Retest : unsigned char {
    transient,     // fine when measured again: counted, not named
    slow_twice,    // slow (or failed) again: a finding
    not_measured,  // the deadline left no time: a note, not counted
};

// A link's second measurement (nullopt: none was made) against the slow bound
// (slow_ratio x the expected rate, in bytes per second).
Retest judge_retest(const std::optional<Measurement>& again, double slow_bps);

}  // namespace gangway::preflight
