// The fleet's memory of stopped jobs (issue 33): one row per verdict that
// `fleet serve --stops-key` judged from the nodes' records, as `fleet stops`
// prints them, `fleet metrics` counts them and `fleet flagged` finds the
// repeat offenders in them. Plain data and pure functions; the store keeps
// the rows (lib/sys/fleet/store.hpp), the verdict itself is
// lib/postmortem's (the cause is its name there, e.g. "gpu-xid").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gangway::fleet {

struct StopRow {
    std::int64_t time = 0;      // unix seconds when serve judged it
    std::uint32_t job = 0, step = 0;
    std::string node;           // "" when no node is blamed (a user's bug, a hang without evidence)
    std::int64_t rank = -1;     // -1: none
    std::string cause;          // lib/postmortem's Cause, by name
    bool node_class = false;    // blamed on the node's hardware by root's evidence (node lost, Xid, link down)
    bool requeued = false;      // serve requeued the job without the node
    std::string line;           // the one line (AdminComment's)
    std::string timeline;       // the timeline, several lines
};

// The counter gangway_job_stops_total{node,cause}: stops that blamed a node.
struct StopCount {
    std::string node, cause;
    std::uint64_t count = 0;
};

// NVRx FACT's avoid rule: a node that stopped at least kRepeatStops jobs
// within kRepeatWindowS by a node-class cause (root's evidence only: a
// user's dumps or exit codes never make a stop node-class).
inline constexpr std::size_t kRepeatStops = 2;
inline constexpr std::int64_t kRepeatWindowS = 14 * 86400;
struct RepeatOffender {
    std::string node;
    std::size_t stops = 0;       // node-class stops in the window
    std::int64_t since = 0, last = 0;
    std::vector<std::uint32_t> jobs;
};
// Over the rows with time in (now - window, now]; `nodes` filters (empty: all).
std::vector<RepeatOffender> repeat_offenders(const std::vector<StopRow>& rows, std::int64_t now,
                                             const std::vector<std::string>& nodes);
// `fleet flagged`'s line for one: "NODE job_stops - COUNT - - SINCE", in the
// flag lines' fields (NODE METRIC DEVICE RECENT BASELINE PEERS SINCE).
std::string render_repeat_offenders(const std::vector<RepeatOffender>& r);

// `fleet stops`: for each row, newest first, "TIME job J step S NODE CAUSE"
// and its line below; with timelines, the timeline (which starts with the
// line) instead. Every name and text through printable_name; at most kStopsMaxRows rows, then a line saying how many more.
inline constexpr std::size_t kStopsMaxRows = 1000;

// One stop as `gangway postmortem` prints it: its timeline (which starts
// with the line), or the line alone; ends in a newline.
std::string stop_text(const StopRow& r);
std::string render_stops(const std::vector<StopRow>& rows, bool timelines);

}  // namespace gangway::fleet
