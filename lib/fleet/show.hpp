// `gangway fleet show`: one row per node and kind of figure, from the
// store's rows. Pure: figures and checks in, text out.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model.hpp"

namespace gangway::fleet {

struct ShowRow {
    std::string node;
    Metric metric = Metric::tcp_send;
    double last = 0;             // bytes per second: the median of the node's figures of its last check
    std::size_t last_figures = 0;  // how many figures that is (GPUs, ports, peers)
    std::int64_t last_time = 0;
    std::size_t checks = 0;      // checks with a figure of this kind for this node (daily rows count their checks)
};

// Rows sorted by node, then metric (model.hpp's order).
std::vector<ShowRow> show_rows(const std::vector<Figure>& figures);

// show_rows one figure at a time, for a reader that streams the store
// (issue 34): it keeps per row the last check's figures and the checks'
// handles, not the figures. The same rows as show_rows, except that two
// checks at the same second are told apart by their handles, not their ids.
class ShowBuilder {
    struct Acc;

public:
    // A row's handle, for add (stable until rows()).
    using Row = Acc*;
    Row row(const std::string& node, Metric m);
    // A figure of the row's node and metric: `check` is its check's handle
    // (equal for the same check); a folded one (a day's median) stands for
    // `count` figures.
    void add(Row r, std::int64_t time, double value, std::uint64_t check, bool folded, std::uint32_t count);
    void add(const std::string& node, Metric m, std::int64_t time, double value, std::uint64_t check, bool folded,
             std::uint32_t count) {
        add(row(node, m), time, value, check, folded, count);
    }
    std::vector<ShowRow> rows();

private:
    struct Acc {
        std::int64_t last_time = INT64_MIN;
        std::pair<bool, std::uint64_t> last_check{false, 0};  // (raw, handle); a folded day's: (false, 0)
        std::vector<double> last_values;
        std::vector<std::uint64_t> checks;  // sorted and unique up to `unique`, then as met
        std::size_t unique = 0;
        std::size_t folded = 0;
    };
    std::map<std::pair<std::string, Metric>, Acc> acc_;
};

// The figure as people read it: Gb/s for network rates, GB/s for GPU copies and NCCL.
std::string human_rate(Metric m, double bytes_per_s);

std::string render_show(const std::vector<ShowRow>& rows);

}  // namespace gangway::fleet
