// The fleet's memory of running jobs' stragglers and hangs (issue 43): one
// row per (job, step, kind, node) that `fleet serve` named while the job ran
// (lib/sys/watch/watch_service), kept with the post-mortem's stops, as
// `fleet metrics` counts them and `fleet flagged` finds the nodes that
// straggled in several jobs. Only what root's evidence confirmed counts for
// a node: a straggler whose node's own reading said why (its ranks waiting
// for a CPU, its pressure, its link), a hang whose rank root saw stopped,
// in uninterruptible sleep or off the CPU. The ranks' word alone is the
// user's job's business, never the fleet's. Plain data and pure functions.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "stops.hpp"

namespace gangway::fleet {

enum class WatchKind : std::uint8_t { straggler, hang };
const char* watch_kind_name(WatchKind k) noexcept;  // "straggler", "hang"

struct WatchEvent {
    std::int64_t first = 0, last = 0;  // unix seconds when serve first and last named it
    std::uint32_t job = 0, step = 0;
    WatchKind kind = WatchKind::straggler;
    std::string node;
    bool confirmed = false;  // root's evidence on the node
    std::string line;        // the judgement's line when last named
};

// The gauge gangway_job_straggler{job,node}: confirmed stragglers named
// within the last kStragglerFreshS (a running job's, while it lasts).
inline constexpr std::int64_t kStragglerFreshS = 120;
struct RunningStraggler {
    std::uint32_t job = 0;
    std::string node;
};
// The counter gangway_job_hangs_total{node}: confirmed hangs, by the node of a rank that held them.
struct HangCount {
    std::string node;
    std::uint64_t count = 0;
};

// A node that was a confirmed straggler in at least kRepeatStops jobs
// within kRepeatWindowS: the post-mortem's repeat rule, over other jobs.
std::vector<RepeatOffender> repeat_stragglers(const std::vector<WatchEvent>& rows, std::int64_t now,
                                              const std::vector<std::string>& nodes);
// `fleet flagged`'s line for one: "NODE job_straggler - JOBS - - SINCE".
std::string render_repeat_stragglers(const std::vector<RepeatOffender>& r);

}  // namespace gangway::fleet
