#include "metrics_input.hpp"

#include "../../fleet/trend.hpp"
#include "readers.hpp"
#include "store.hpp"

namespace gangway::sys::fleet {

std::vector<gangway::fleet::Flag> flags_for_metrics(const std::vector<gangway::fleet::Figure>& figures, std::int64_t now) {
    // The trends' defaults, as `gangway fleet show` and `fleet flagged` judge.
    return gangway::fleet::compute_trends(figures, now).flags;
}

Result<gangway::fleet::MetricsInput> read_metrics_input(const std::string& db, std::int64_t now) {
    auto store = Store::open(db, OpenMode::read_only);
    if (!store) return Failure{store.error()};
    gangway::fleet::MetricsInput in;
    // The trends' whole window, in one pass series by series (readers.hpp):
    // the flags need it, and the latest figure of every series that still
    // matters is in it. Nothing dated after now and the clocks' skew: a row
    // from the future would be a series' latest for good.
    ReadPlan plan;
    plan.now = now;  // the trends' defaults, as `gangway fleet show` and `fleet flagged` judge
    plan.latest = true;
    plan.latest_until = now + kMaxClockSkewS + 1;
    auto view = read_store(*store, plan);
    if (!view) return Failure{view.error()};
    in.figures = std::move(view->latest);
    in.flags = std::move(view->trends.flags);
    auto counts = store->ingest_counts();
    if (!counts) return Failure{counts.error()};
    in.counts = *counts;
    auto stops = store->stop_counts();
    if (!stops) return Failure{stops.error()};
    in.stops = std::move(*stops);
    auto running = store->running_stragglers(now - gangway::fleet::kStragglerFreshS);
    if (!running) return Failure{running.error()};
    in.stragglers = std::move(*running);
    auto hangs = store->hang_counts();
    if (!hangs) return Failure{hangs.error()};
    in.hangs = std::move(*hangs);
    return in;
}

}  // namespace gangway::sys::fleet
