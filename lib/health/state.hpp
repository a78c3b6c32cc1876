// What one run of the node check leaves for the next, in a root-owned file
// (SiteConf::state_file): the link error counters, the failures it saw (the
// repeat rule), how many runs in a row were healthy, the drain reason it
// wrote (so it resumes only its own drains) and how far it read the kernel
// log. A text file of its own small format; lib/sys/health/state_file
// reads and writes it (a private name, then rename).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "record.hpp"

namespace gangway::health {

struct State {
    std::int64_t time = 0;                        // the run's start, seconds since the epoch; 0: no run yet
    std::map<std::string, std::uint64_t> counters;  // "mlx5_0/1 link_downed" -> value
    std::set<Key> failed;                         // what failed on that run, confirmed or not
    unsigned healthy_runs = 0;                    // healthy runs in a row, up to that one
    std::string drained;                          // the drain reason gangway wrote and SLURM still shows; "" none
    std::optional<std::uint64_t> kmsg_seq;        // the last kernel log record read
};

// Throws gangway::Error naming the line when the text is not such a file;
// the caller then starts afresh.
State parse_state(std::string_view text);
std::string render_state(const State& s);

}  // namespace gangway::health
