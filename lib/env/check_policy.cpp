#include "check_policy.hpp"

#include <algorithm>
#include <string>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway {

CheckLevel parse_check_level(std::string_view t, std::string_view origin) {
    for (auto c : {CheckLevel::none, CheckLevel::quick, CheckLevel::full})
        if (t == to_string(c)) return c;
    throw Error(origin_value(origin, t) + " is not a check level; use quick (one bandwidth round), full (more rounds and sizes) or none");
}

std::string_view to_string(CheckLevel c) {
    switch (c) {
        case CheckLevel::none: return "none";
        case CheckLevel::quick: return "quick";
        case CheckLevel::full: return "full";
    }
    return "quick";
}

OnFail parse_on_fail(std::string_view t, std::string_view origin) {
    for (auto f : {OnFail::abort, OnFail::warn, OnFail::requeue})
        if (t == to_string(f)) return f;
    throw Error(origin_value(origin, t) +
                " is not a failure policy; use abort (do not start the command), warn (start it anyway) or requeue "
                "(requeue the batch job without the bad nodes)");
}

std::string_view to_string(OnFail f) {
    switch (f) {
        case OnFail::abort: return "abort";
        case OnFail::warn: return "warn";
        case OnFail::requeue: return "requeue";
    }
    return "abort";
}

std::string_view to_string(CheckSkip s) {
    switch (s) {
        case CheckSkip::None: return "checked";
        case CheckSkip::NotAsked: return "no check asked for";
        case CheckSkip::StepKind: return "extern and interactive steps are not checked";
        case CheckSkip::Heterogeneous: return "heterogeneous steps are not checked";
        case CheckSkip::TooFewNodes: return "too few nodes (check_min_nodes)";
        case CheckSkip::OneTask: return "a step of one task is not checked";
        case CheckSkip::JobChecked: return "the job was checked already (ask again with srun --gangway-check)";
        case CheckSkip::RunsGangway: return "the command is gangway check or gangway run, which check on their own";
    }
    return "";
}

void check_user_allowed(const CheckSite& site, const CheckChoice& user) {
    if (!site.optout && site.level != CheckLevel::none && user.level == CheckLevel::none)
        throw Error("this site checks every job of " + std::to_string(std::max(2u, site.min_nodes)) +
                    " or more nodes before it starts and does not allow --gangway-check=none (GANGWAY_CHECK=none); "
                    "drop it, or ask your SLURM administrator");
}

CheckPlan plan_check(const CheckSite& site, const CheckChoice& user, const StepView& step, const CheckContext& ctx) {
    CheckPlan p;
    p.level = user.level.value_or(site.level);
    // A user's none where the site forbids it was refused in srun; here the site's level stands.
    if (p.level == CheckLevel::none && !site.optout) p.level = site.level;
    p.on_fail = user.on_fail.value_or(site.on_fail);
    const auto skip = [&](CheckSkip s) {
        p.skip = s;
        return p;
    };
    if (p.level == CheckLevel::none) return skip(CheckSkip::NotAsked);
    if (step.kind == StepKind::Extern || step.kind == StepKind::Interactive) return skip(CheckSkip::StepKind);
    if (step.heterogeneous) return skip(CheckSkip::Heterogeneous);
    if (step.nodes.size() < std::max(2u, site.min_nodes)) return skip(CheckSkip::TooFewNodes);
    if (step.kind == StepKind::Normal && step.total_tasks < 2) return skip(CheckSkip::OneTask);
    // gangway check is a check already. gangway run checks as its own options
    // say, which its user may turn off: only where users may opt out anyway
    // does it stand for the site's check.
    if (step.kind == StepKind::Normal &&
        (ctx.command == GangwayCommand::Check || (ctx.command == GangwayCommand::Run && site.optout)))
        return skip(CheckSkip::RunsGangway);
    if (ctx.job_checked && !(step.kind == StepKind::Normal && user.level_from_cli)) return skip(CheckSkip::JobChecked);
    p.skip = CheckSkip::None;
    return p;
}

std::vector<std::string> check_argv(const CheckPlan& plan, const StepView& step, const CheckCall& call) {
    std::vector<std::string> argv;
    if (step.kind == StepKind::Batch) {
        const std::string n = std::to_string(step.nodes.size());
        // --export=ALL: the tasks need the step's secret even under sbatch --export=NONE.
        argv = {call.srun, "--nodes=" + n, "--ntasks=" + n, "--ntasks-per-node=1", "--mpi=none", "--export=ALL",
                "--job-name=gangway-check"};
    }
    argv.insert(argv.end(), {call.launcher, "check", "--check=" + std::string(to_string(plan.level)), "--bootstrap=tcp",
                             "--on-fail=" + std::string(to_string(plan.on_fail))});
    if (!call.report.empty()) argv.push_back("--report=" + call.report);
    return argv;
}

}  // namespace gangway
