#include "metrics_input.hpp"

#include "store.hpp"

namespace gangway::sys::fleet {

namespace {
// The figures read for the metrics: the trends' whole window (30 days).
constexpr std::int64_t kWindowS = 30 * 86400;
}  // namespace

std::vector<gangway::fleet::Flag> flags_for_metrics(const std::vector<gangway::fleet::Figure>&, std::int64_t) {
    return {};  // WIRED AFTER h-fleet-trend's merge: lib/fleet/trend.hpp's compute_trends().flags
}

Result<gangway::fleet::MetricsInput> read_metrics_input(const std::string& db, std::int64_t now) {
    auto store = Store::open(db, OpenMode::read_only);
    if (!store) return Failure{store.error()};
    gangway::fleet::MetricsInput in;
    auto figures = store->figures(now - kWindowS, INT64_MAX, {});
    if (!figures) return Failure{figures.error()};
    in.figures = std::move(*figures);
    in.flags = flags_for_metrics(in.figures, now);
    auto counts = store->ingest_counts();
    if (!counts) return Failure{counts.error()};
    in.counts = *counts;
    return in;
}

}  // namespace gangway::sys::fleet
