// SLURM's drains as gangway asks for them, in one place: how many nodes one
// job may drain, the reason's "gangway: ... (job J)" mark and the reading of
// it back from `scontrol -o show node`, a node name gangway accepts, the
// node whose Epilog decides a job's drains, and the drain request files that
// `gangway check` leaves for that Epilog. Every drain path uses these: the
// Epilog (`gangway epilog-drain`, contrib/epilog/gangway-drain.sh), the
// post-mortem's (fleet serve), and the check that writes the requests.
// Changing the cap is one edit here. Pure.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gangway::slurm {

// At most this many nodes drained for one job (counting those drained for an
// earlier run of it: a requeued job keeps its id) unless the site says
// otherwise (GANGWAY_DRAIN_MAX, fleet serve's --drain-max; 0: none). A job
// that would drain more drains none: many bad nodes at once is a fault of the
// network or of the job, not of the nodes.
inline constexpr std::size_t kDefaultDrainMax = 2;
inline constexpr std::size_t kDrainMaxLimit = 1024;  // the largest cap a site may set

// A node's name as gangway takes it from anyone (a report, a request file's
// name, serve's header): 1 to 64 letters, digits, '.', '_' or '-', the first
// a letter or a digit (a hostname's rule; no blank, no control byte, nothing
// a log line, a header or scontrol's argument could be cut with).
inline constexpr std::size_t kMaxNodeName = 64;
bool is_node_name(std::string_view name);

// A drain reason's text as gangway hands it to scontrol: only letters,
// digits, blanks and . _ : / , = ( ) + - kept (whatever a user wrote), cut to
// kMaxReasonText characters.
inline constexpr std::size_t kMaxReasonText = 120;
std::string reason_text(std::string_view raw);
// "gangway: WHY (job JOB)": the mark by which drained_for_job finds the
// job's drains again. `why` is passed through reason_text.
std::string job_drain_reason(std::string_view why, std::string_view job);

// The nodes `scontrol -o show node`'s text shows drained by gangway for job
// `job`: a reason starting "gangway: " whose last "(job J)" is this job's,
// followed by slurmctld's " [user@time]" or the end (a user's text before it
// holds no '[', reason_text keeps none, so no other job's reason names this
// job there).
std::vector<std::string> drained_for_job(std::string_view show_nodes, std::string_view job);

// Whether draining `node` keeps the job within `max` drained nodes, counting
// `drained_before` (the same node again counts once).
bool drain_within_cap(const std::vector<std::string>& drained_before, const std::string& node, std::size_t max);

// The node whose Epilog decides a job's drains: its first node, the first of
// `job_nodes` as SLURM lists them (`scontrol show hostnames`' order, not
// sorted). The Epilogs of the other nodes remove the job's requests unread:
// a user can write into every node's spool, and node by node the cap per
// job would be a cap per node. "" for none.
std::string deciding_node(const std::vector<std::string>& job_nodes);

// Drain request files (the drain spool, GANGWAY_DRAIN_DIR): gangway check
// writes "gangway-drain.JOB.NODE", or "gangway-drain.JOB.NODE,<16 hex
// digits>" when another user's file holds the plain name (names are
// predictable, and in the sticky spool nobody may replace another's file).
inline constexpr std::size_t kMaxRequestBytes = 4096;  // a larger file is refused unread
inline constexpr std::size_t kMaxRequestNames = 64;    // more of the job's names: the job drains none
std::string request_prefix(std::string_view job);       // "gangway-drain.JOB."
std::string request_file(std::string_view job, std::string_view node);
// The node a request file's name asks for, "" when it is not a request of job
// `job` naming a node in gangway's sense.
std::string request_node(std::string_view file_name, std::string_view job);
// The reason a request's text gives: its first "reason=" line, as reason_text.
std::string request_reason(std::string_view text);

}  // namespace gangway::slurm
