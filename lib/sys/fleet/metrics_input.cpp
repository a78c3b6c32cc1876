#include "metrics_input.hpp"

#include "../../fleet/trend.hpp"
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
    // The trends' whole window: the flags need it, and the latest figure of
    // every series that still matters is in it. Nothing dated after now and
    // the clocks' skew: a row from the future would be a series' latest for good.
    auto figures = store->figures(now - gangway::fleet::TrendSettings{}.history_s, now + kMaxClockSkewS + 1, {});
    if (!figures) return Failure{figures.error()};
    in.figures = std::move(*figures);
    in.flags = flags_for_metrics(in.figures, now);
    auto counts = store->ingest_counts();
    if (!counts) return Failure{counts.error()};
    in.counts = *counts;
    auto stops = store->stop_counts();
    if (!stops) return Failure{stops.error()};
    in.stops = std::move(*stops);
    return in;
}

}  // namespace gangway::sys::fleet
