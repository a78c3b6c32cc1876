// Which steps the plugin checks before the command, and how it starts the check.
#include "catch_compat.hpp"

#include "../../lib/env/check_policy.hpp"
#include "../../lib/env/config.hpp"

using namespace gangway;
using Catch::Matchers::ContainsSubstring;

namespace {

StepView step_of(StepKind kind, unsigned nodes, unsigned tasks) {
    StepView s;
    s.kind = kind;
    s.job_id = 42;
    for (unsigned i = 0; i < nodes; ++i) s.nodes.push_back("n" + std::to_string(i));
    s.total_tasks = tasks;
    return s;
}

CheckChoice cli(CheckLevel l) {
    CheckChoice c;
    c.level = l;
    c.level_from_cli = true;
    return c;
}

}  // namespace

TEST_CASE("site keys for the check") {
    const Config d = parse_site_args({});
    CHECK(d.check.level == CheckLevel::none);
    CHECK(d.check.on_fail == OnFail::abort);
    CHECK(d.check.min_nodes == 2);
    CHECK(d.check.optout);
    CHECK(d.launcher.empty());
    const Config c = parse_site_args(std::vector<std::string>{"check=quick", "on_fail=requeue", "check_min_nodes=4",
                                                              "check_optout=no", "launcher=/opt/gangway/bin/gangway"});
    CHECK(c.check.level == CheckLevel::quick);
    CHECK(c.check.on_fail == OnFail::requeue);
    CHECK(c.check.min_nodes == 4);
    CHECK_FALSE(c.check.optout);
    CHECK(c.launcher == "/opt/gangway/bin/gangway");
    CHECK_THROWS_WITH(parse_site_args(std::vector<std::string>{"check=fast"}),
                      ContainsSubstring("check=fast is not a check level") && ContainsSubstring("quick"));
    CHECK_THROWS_WITH(parse_site_args(std::vector<std::string>{"on_fail=retry"}),
                      ContainsSubstring("on_fail=retry is not a failure policy"));
    for (const char* bad : {"check_min_nodes=1", "check_min_nodes=0", "check_min_nodes=x", "check_min_nodes=-2",
                            "check_min_nodes=99999999999"})
        CHECK_THROWS_WITH(parse_site_args(std::vector<std::string>{bad}), ContainsSubstring("node count from 2"));
    CHECK_THROWS_WITH(parse_site_args(std::vector<std::string>{"launcher=gangway"}), ContainsSubstring("absolute path"));
}

TEST_CASE("the user's words: --gangway-check and --gangway-on-fail") {
    CHECK(parse_check_level("full", "--gangway-check") == CheckLevel::full);
    CHECK_THROWS_WITH(parse_check_level("Quick", "--gangway-check"),
                      ContainsSubstring("--gangway-check=Quick is not a check level"));
    CHECK_THROWS_WITH(parse_on_fail("", "GANGWAY_ON_FAIL"), ContainsSubstring("GANGWAY_ON_FAIL= is not a failure policy"));
    for (auto f : {OnFail::abort, OnFail::warn, OnFail::requeue}) CHECK(parse_on_fail(to_string(f), "x") == f);
}

TEST_CASE("a site may forbid turning its check off") {
    CheckSite site;
    site.level = CheckLevel::quick;
    site.optout = false;
    CHECK_THROWS_WITH(check_user_allowed(site, cli(CheckLevel::none)), ContainsSubstring("does not allow --gangway-check=none"));
    CHECK_NOTHROW(check_user_allowed(site, cli(CheckLevel::full)));
    CHECK_NOTHROW(check_user_allowed(site, CheckChoice{}));
    site.optout = true;
    CHECK_NOTHROW(check_user_allowed(site, cli(CheckLevel::none)));
    // Nothing to turn off: a site without a check lets none through.
    site = CheckSite{};
    site.optout = false;
    CHECK_NOTHROW(check_user_allowed(site, cli(CheckLevel::none)));
}

TEST_CASE("which steps are checked") {
    const CheckSite none;
    CheckSite quick;
    quick.level = CheckLevel::quick;
    const CheckContext fresh;

    // Nothing asked: nothing checked.
    CHECK(plan_check(none, {}, step_of(StepKind::Normal, 4, 4), fresh).skip == CheckSkip::NotAsked);
    // The site's default checks multi-node steps; the user's option or variable does too.
    auto p = plan_check(quick, {}, step_of(StepKind::Normal, 4, 4), fresh);
    CHECK(p.checked());
    CHECK(p.level == CheckLevel::quick);
    CHECK(p.on_fail == OnFail::abort);
    CheckChoice env_full;
    env_full.level = CheckLevel::full;
    env_full.on_fail = OnFail::warn;
    p = plan_check(none, env_full, step_of(StepKind::Normal, 2, 2), fresh);
    CHECK(p.checked());
    CHECK(p.level == CheckLevel::full);
    CHECK(p.on_fail == OnFail::warn);
    // The user's none wins where the site allows it, not where it does not.
    CHECK(plan_check(quick, cli(CheckLevel::none), step_of(StepKind::Normal, 4, 4), fresh).skip == CheckSkip::NotAsked);
    CheckSite strict = quick;
    strict.optout = false;
    CHECK(plan_check(strict, cli(CheckLevel::none), step_of(StepKind::Normal, 4, 4), fresh).checked());

    // Never checked: extern, interactive, heterogeneous, one node, one task.
    CHECK(plan_check(quick, {}, step_of(StepKind::Extern, 4, 4), fresh).skip == CheckSkip::StepKind);
    CHECK(plan_check(quick, {}, step_of(StepKind::Interactive, 4, 4), fresh).skip == CheckSkip::StepKind);
    auto het = step_of(StepKind::Normal, 4, 4);
    het.heterogeneous = true;
    CHECK(plan_check(quick, {}, het, fresh).skip == CheckSkip::Heterogeneous);
    CHECK(plan_check(quick, cli(CheckLevel::quick), step_of(StepKind::Normal, 1, 8), fresh).skip == CheckSkip::TooFewNodes);
    CHECK(plan_check(quick, cli(CheckLevel::quick), step_of(StepKind::Normal, 2, 1), fresh).skip == CheckSkip::OneTask);
    // check_min_nodes raises the bar; the user cannot lower it.
    CheckSite big = quick;
    big.min_nodes = 8;
    CHECK(plan_check(big, cli(CheckLevel::full), step_of(StepKind::Normal, 7, 7), fresh).skip == CheckSkip::TooFewNodes);
    CHECK(plan_check(big, {}, step_of(StepKind::Normal, 8, 8), fresh).checked());

    // gangway check is a check; gangway run stands for one only where users may opt out,
    // since its own options can turn its check off (issue 23, item 6).
    CHECK(plan_check(quick, {}, step_of(StepKind::Normal, 4, 4), {false, GangwayCommand::Check}).skip ==
          CheckSkip::RunsGangway);
    CHECK(plan_check(quick, {}, step_of(StepKind::Normal, 4, 4), {false, GangwayCommand::Run}).skip ==
          CheckSkip::RunsGangway);
    CHECK(plan_check(strict, {}, step_of(StepKind::Normal, 4, 4), {false, GangwayCommand::Check}).skip ==
          CheckSkip::RunsGangway);
    CHECK(plan_check(strict, {}, step_of(StepKind::Normal, 4, 4), {false, GangwayCommand::Run}).checked());
    // Inside a checked job only srun's own option checks again.
    const CheckContext checked{true, GangwayCommand::None};
    CHECK(plan_check(quick, {}, step_of(StepKind::Normal, 4, 4), checked).skip == CheckSkip::JobChecked);
    CHECK(plan_check(none, env_full, step_of(StepKind::Normal, 4, 4), checked).skip == CheckSkip::JobChecked);
    CHECK(plan_check(none, cli(CheckLevel::quick), step_of(StepKind::Normal, 4, 4), checked).checked());

    // The batch script stands for the allocation: its one task does not count.
    CHECK(plan_check(quick, {}, step_of(StepKind::Batch, 3, 1), fresh).checked());
    CHECK(plan_check(quick, {}, step_of(StepKind::Batch, 1, 1), fresh).skip == CheckSkip::TooFewNodes);
    CHECK(to_string(CheckSkip::JobChecked).find("--gangway-check") != std::string_view::npos);
}

TEST_CASE("the check's command line") {
    CheckPlan plan;
    plan.skip = CheckSkip::None;
    plan.level = CheckLevel::full;
    plan.on_fail = OnFail::requeue;
    CheckCall call{"/usr/bin/gangway", "/usr/bin/srun", ""};
    CHECK(check_argv(plan, step_of(StepKind::Normal, 4, 8), call) ==
          std::vector<std::string>{"/usr/bin/gangway", "check", "--check=full", "--bootstrap=tcp", "--on-fail=requeue"});
    call.report = "/home/u/gangway-check-42.json";
    CHECK(check_argv(plan, step_of(StepKind::Batch, 3, 1), call) ==
          std::vector<std::string>{"/usr/bin/srun", "--nodes=3", "--ntasks=3", "--ntasks-per-node=1", "--mpi=none",
                                   "--export=ALL", "--job-name=gangway-check", "/usr/bin/gangway", "check",
                                   "--check=full", "--bootstrap=tcp", "--on-fail=requeue",
                                   "--report=/home/u/gangway-check-42.json"});
}
