// A job as SLURM knows it, from fields that only SLURM writes. `scontrol show
// job` prints the user's own text among SLURM's fields, unquoted: JobName
// second, then Comment, Command, WorkDir and the StdOut/StdErr paths after
// NodeList. A job named "x NodeList=n9 JobState=RUNNING UserId=v(1001)"
// shows two NodeLists, and no reading of that text, first or last
// occurrence, tells SLURM's from the user's. So every reader of a job (the
// post-mortem's node list, state and owner in fleet serve, `gangway
// postmortem`'s owner and newest job, the requeue's ExcNodeList) reads
// squeue's fixed fields below instead, which hold no user-written text, and
// AdminComment (root's, SlurmUser's or an operator's only) in a call of its
// own. The same squeue options on 22.05, 24.11 and 26.05: 22.05's scontrol
// has no --json, and its `squeue --json` dumps every job, -j ignored. Pure.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gangway::slurm {

// The job states that gangway's decisions tell apart; `other` for the rest
// (REQUEUE_HOLD, RESIZING, SPECIAL_EXIT...), whose word JobView keeps.
enum class JobState {
    pending,
    running,
    suspended,
    completing,
    completed,
    cancelled,
    failed,
    timeout,
    node_fail,
    preempted,
    boot_fail,
    deadline,
    out_of_memory,
    other
};
// squeue's extended state word ("COMPLETING"), exactly; other for any other.
JobState job_state_from(std::string_view word);

struct JobView {
    std::uint32_t id = 0;
    JobState state = JobState::other;
    std::string state_word;  // as squeue printed it
    std::uint32_t uid = 0;   // the owner's
    std::string nodes;       // NodeList: the allocation, a hostlist; "" none (pending)
    std::string excluded;    // ExcNodeList, a hostlist; "" none
    std::string batch_host;  // "" none ("n/a" while pending)
};

// squeue's -o format for a JobView: job id (%A, one per array task), state
// (%T), owner's uid (%U), NodeList (%N), ExcNodeList (%x), BatchHost (%B).
// SLURM writes each: no JobName, Comment, WorkDir or path, so no user text
// can add a field or shift one. (ExcNodeList is the user's choice, but
// slurmctld keeps it as a hostlist of the site's own node names.)
inline constexpr const char* kJobFormat = "%A|%T|%U|%N|%x|%B";

// `squeue -h -o kJobFormat`'s lines, one a job. Throws gangway::Error naming
// the line when one is not six '|'-separated fields, its id or uid not a
// number, its state not a word of capitals and '_', or a node field holds a
// blank or a control character. "(null)" fields are empty.
std::vector<JobView> parse_job_views(std::string_view squeue_text);

// Job `id`'s view among them, or nullopt.
std::optional<JobView> view_of(const std::vector<JobView>& views, std::uint32_t id);

// The newest (highest id) of `uid`'s jobs among them, or nullopt.
std::optional<std::uint32_t> newest_job_of(const std::vector<JobView>& views, std::uint32_t uid);

// squeue's -O field for AdminComment, alone in its call: "admin_comment:W".
// squeue pads the field to W characters and cuts it there; W is well over
// the 250 characters of the post-mortem's line.
inline constexpr std::size_t kAdminCommentWidth = 1024;
std::string admin_comment_format();

// `squeue -h -O admin_comment:W`'s text for one job: the comment without
// squeue's padding; "" when the job has none ("(null)", blank). Throws
// gangway::Error when squeue printed more than one line.
std::string parse_admin_comment(std::string_view squeue_text);

}  // namespace gangway::slurm
