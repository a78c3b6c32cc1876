// What `gangway fleet metrics` and `fleet serve` read from the store for
// the OpenMetrics text (lib/fleet/openmetrics.hpp): the latest figure of
// each series in the trends' window (its gauge; readers.hpp reads the
// window series by series, issue 34),
// the flags the trends give for them, and the ingest's counts. Opened read
// only and closed again on every call, so that a server started before the
// first ingest, or kept running across a database moved into place, reads
// what is there now.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../../base/result.hpp"
#include "../../fleet/openmetrics.hpp"

namespace gangway::sys::fleet {

Result<gangway::fleet::MetricsInput> read_metrics_input(const std::string& db, std::int64_t now);

// The flags the metrics show for these figures at `now`: the trends'
// (lib/fleet/trend.hpp) over the same window as `gangway fleet flagged`.
std::vector<gangway::fleet::Flag> flags_for_metrics(const std::vector<gangway::fleet::Figure>& figures, std::int64_t now);

}  // namespace gangway::sys::fleet
