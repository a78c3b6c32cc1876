// The parts of one node check run (sysfs, NVML, the kernel log, the
// preflight's stages), each under min(its cap, what is left of the run's
// deadline), and how each ended. Every part goes through run_bounded()
// (lib/sys/run/deadline.hpp), the one deadline wrapper with its one rule: a
// deadline or an exception is aborted, and the run inconclusive, never failed.
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../../health/run_plan.hpp"  // the parts' caps and shares
#include "../../preflight/report.hpp"
#include "../run/deadline.hpp"
#include "../stages/stage.hpp"

namespace gangway::sys {

class Parts {
public:
    explicit Parts(double timeout_s) : end_(after_s(timeout_s)) {}
    double left() const { return seconds_left(end_); }

    // A part that reads: `detail` says what it found, for its stage line.
    template <class T>
    std::optional<T> run(const std::string& name, double cap, std::function<T()> fn, std::function<std::string(const T&)> detail) {
        const double budget = health::read_budget(cap, left());
        if (budget <= 0) {
            abort(not_started(name));
            return std::nullopt;
        }
        auto b = run_bounded<T>(name, budget, std::move(fn));
        if (!b.value) {
            abort(std::move(b.aborted));
            return std::nullopt;
        }
        stages.push_back({name, preflight::StageStatus::ok, detail(*b.value), b.took_s});
        return b.value;
    }

    // A stage of the preflight under its share of what is left of the
    // deadline (health::stage_budget); with too little left, not started.
    // Its outcome's result becomes the stage line.
    std::optional<StageOutcome> stage(const std::string& name, health::StageShare share, std::function<StageOutcome()> fn) {
        const double budget = health::stage_budget(share, left());
        StageOutcome o;
        if (budget > 0) o = with_deadline(name, budget, std::move(fn));
        else o.result = not_started(name);
        note(o);
        return o;
    }

    // A stage's outcome that did not run under the deadline (skipped): its
    // line; aborted (a hung CUDA call) makes the run inconclusive.
    void note(const StageOutcome& o) {
        stages.push_back(o.result);
        if (o.result.status == preflight::StageStatus::aborted) inconclusive = true;
    }

    std::vector<preflight::StageResult> stages;
    bool inconclusive = false;

private:
    void abort(preflight::StageResult r) {
        stages.push_back(std::move(r));
        inconclusive = true;
    }
    Clock::time_point end_;
};

}  // namespace gangway::sys
