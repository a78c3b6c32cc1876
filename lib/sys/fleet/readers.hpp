// The fleet's readers' one pass over the store (issue 34, item 1): `fleet
// show`, `fleet flagged`, `fleet metrics` and serve's rebuild read the
// trends' window node by node (Store::scan: a node's rows, in the primary
// key's order), hand each series' figures to the trends (TrendBuilder), the
// table's rows (ShowBuilder) and the latest figure of each series, and keep
// nothing else. Memory: the series' summaries, one node's figures, and the
// figures of the few series that may be flagged; not the window's figures.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../../base/result.hpp"
#include "../../fleet/show.hpp"
#include "../../fleet/trend.hpp"
#include "store.hpp"

namespace gangway::sys::fleet {

struct ReadPlan {
    std::int64_t now = 0;
    gangway::fleet::TrendSettings settings;  // the window is [now - history_s, now]
    bool show = false;                       // fleet show's rows...
    std::vector<std::string> show_nodes;     // ...of these nodes (empty: all)
    bool latest = false;                     // the latest figure of each series...
    std::int64_t latest_until = 0;           // ...dated before this (now and the clocks' skew)
};

struct StoreView {
    gangway::fleet::TrendResult trends;
    std::vector<gangway::fleet::ShowRow> show;  // by node, metric
    std::vector<gangway::fleet::Figure> latest; // one per series (check_id left empty)
};

// Throws gangway::Error on trend settings that make no sense (TrendBuilder).
Result<StoreView> read_store(Store& store, const ReadPlan& plan);

}  // namespace gangway::sys::fleet
