#include "slurm_mode.hpp"

#include <chrono>
#include <random>
#include <thread>

#include "../../base/error.hpp"
#include "../../health/slurm_action.hpp"
#include "log.hpp"

namespace gangway::sys {

void act_on_slurm(const health::Report& run, health::State& state, const SlurmActOptions& o) {
    using health::Action;
    if (!health::needs_slurm(run.verdict, state.healthy_runs, o.resume_after, state.drained)) return;
    if (o.jitter_s > 0) {
        std::random_device rd;
        std::uniform_real_distribution<double> wait(0, o.jitter_s);
        std::this_thread::sleep_for(std::chrono::duration<double>(wait(rd)));
    }
    const auto shown = show_node(o.scontrol, o.node);
    if (!shown) {
        tell(LogLevel::warning, "cannot ask SLURM about " + o.node + " (" + shown.error() + "); acting on a later run");
        return;
    }
    health::SlurmNode node;
    try {
        node = health::parse_show_node(*shown);
    } catch (const Error& e) {
        tell(LogLevel::warning, std::string(e.what()) + "; acting on a later run");
        return;
    }
    const auto d = health::decide(node, run.verdict, run.records, state.healthy_runs, o.resume_after, state.drained);
    switch (d.action) {
        case Action::drain:
            if (auto r = drain_node(o.scontrol, o.node, d.reason); !r) {
                tell(LogLevel::warning, "could not drain " + o.node + " (" + r.error() + "); trying again on a later run");
                return;
            }
            state.drained = d.reason;
            tell(LogLevel::warning, "drained " + o.node + ": " + d.reason);
            return;
        case Action::resume:
            if (auto r = resume_node(o.scontrol, o.node); !r) {
                tell(LogLevel::warning, "could not resume " + o.node + " (" + r.error() + "); trying again on a later run");
                return;
            }
            state.drained.clear();
            tell(LogLevel::info, "resumed " + o.node + ": " + d.why);
            return;
        case Action::forget:
            state.drained.clear();
            tell(LogLevel::info, o.node + ": " + d.why);
            return;
        case Action::none:
            if (run.verdict == health::Verdict::failed) tell(LogLevel::warning, o.node + ": " + d.why);
            return;
    }
}

}  // namespace gangway::sys
