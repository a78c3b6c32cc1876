// `gangway fleet show`: one row per node and kind of figure, from the
// store's rows. Pure: figures and checks in, text out.
#pragma once
#include <string>
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

// The figure as people read it: Gb/s for network rates, GB/s for GPU copies and NCCL.
std::string human_rate(Metric m, double bytes_per_s);

std::string render_show(const std::vector<ShowRow>& rows);

}  // namespace gangway::fleet
