// Whether a step is checked before the user's command starts, and how (issue
// 11): the words of --check/--gangway-check and --on-fail/--gangway-on-fail,
// the site's policy (check=, on_fail=, check_min_nodes=, check_optout=) and
// the rule that picks the steps. Pure: the plugin gives it the step's facts.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "step_view.hpp"

namespace gangway {

// none: check-in and cards only (gangway check); as a plugin option: no check.
// quick: one bandwidth round. full: more rounds and sizes.
enum class CheckLevel { none, quick, full };
// abort: do not start the command; warn: start it anyway; requeue: requeue the
// batch job without the bad nodes.
enum class OnFail { abort, warn, requeue };

// `origin` names where the word came from ("--check", "GANGWAY_CHECK",
// "plugstack.conf: check=") for the one-line message. Throw gangway::Error.
CheckLevel parse_check_level(std::string_view text, std::string_view origin);
std::string_view to_string(CheckLevel c);
OnFail parse_on_fail(std::string_view text, std::string_view origin);
std::string_view to_string(OnFail f);

// The site's policy, from plugstack.conf.
struct CheckSite {
    CheckLevel level = CheckLevel::none;  // check=: the default for every step
    OnFail on_fail = OnFail::abort;       // on_fail=
    unsigned min_nodes = 2;               // check_min_nodes=: smaller steps are never checked
    bool optout = true;                   // check_optout=: users may say --gangway-check=none
};

// The user's choices. `level_from_cli` tells the srun/sbatch option from the
// GANGWAY_CHECK fallback: only the option asks for a second check inside a job
// that was checked already.
struct CheckChoice {
    std::optional<CheckLevel> level;
    bool level_from_cli = false;
    std::optional<OnFail> on_fail;
};

// Refuses a user's "none" where the site does not allow it (check_optout=no
// with a site-wide check); throws gangway::Error with the line to show.
void check_user_allowed(const CheckSite& site, const CheckChoice& user);

// The step's command, when it is the site's own gangway (the same file as
// launcher=, not merely a command of that name) with one of its checking
// subcommands.
enum class GangwayCommand {
    None,   // anything else
    Check,  // gangway check: the step is a check and runs nothing else
    Run,    // gangway run -- CMD: checks as its own options say, then runs CMD
};

// What the plugin knows besides the step's layout.
struct CheckContext {
    bool job_checked = false;  // GANGWAY_CHECKED proves that this job passed (or warned) a check (check_marker.hpp)
    GangwayCommand command = GangwayCommand::None;
};

enum class CheckSkip {
    None,          // checked
    NotAsked,      // level none
    StepKind,      // extern or interactive step
    Heterogeneous, // srun ... : ... (not supported yet)
    TooFewNodes,   // fewer nodes than max(2, check_min_nodes)
    OneTask,       // one task in all
    JobChecked,    // a nested step of a checked job, not asked on its own command line
    RunsGangway,   // the command is gangway check, or gangway run where users may opt out
};
std::string_view to_string(CheckSkip s);

struct CheckPlan {
    CheckSkip skip = CheckSkip::NotAsked;
    CheckLevel level = CheckLevel::none;
    OnFail on_fail = OnFail::abort;
    bool checked() const { return skip == CheckSkip::None; }
};

// The rule. A batch step stands for its whole allocation (its nodes are the
// job's): it is checked once, before the script, and its tasks count as one
// per node. `step` needs no per-task fields.
CheckPlan plan_check(const CheckSite& site, const CheckChoice& user, const StepView& step, const CheckContext& ctx);

// How the check is started. A task of a step runs `LAUNCHER check ...` itself;
// the batch script starts one step across the allocation,
// `SRUN --nodes=N --ntasks=N --ntasks-per-node=1 ... LAUNCHER check ...`.
// The TCP bootstrap keeps the check out of the task's PMIx session.
struct CheckCall {
    std::string launcher;  // the gangway command
    std::string srun;      // batch only
    std::string report;    // --report=, when not empty
};
std::vector<std::string> check_argv(const CheckPlan& plan, const StepView& step, const CheckCall& call);

// The variable that marks a job as checked, and its value for a job.
inline constexpr const char* kCheckedVar = "GANGWAY_CHECKED";

}  // namespace gangway
