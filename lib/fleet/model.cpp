#include "model.hpp"

namespace gangway::fleet {

const char* to_string(Source s) {
    switch (s) {
        case Source::node_check: return "node_check";
        case Source::job_check: return "job_check";
    }
    return "?";
}

std::optional<Source> parse_source(std::string_view s) {
    if (s == "node_check") return Source::node_check;
    if (s == "job_check") return Source::job_check;
    return std::nullopt;
}

const char* to_string(Metric m) {
    switch (m) {
        case Metric::tcp_send: return "tcp_send";
        case Metric::tcp_recv: return "tcp_recv";
        case Metric::link_bandwidth: return "link_bandwidth";
        case Metric::gpu_h2d: return "gpu_h2d";
        case Metric::gpu_d2h: return "gpu_d2h";
        case Metric::nccl_busbw: return "nccl_busbw";
        case Metric::port_rate: return "port_rate";
    }
    return "?";
}

std::optional<Metric> parse_metric(std::string_view s) {
    for (Metric m : kAllMetrics)
        if (s == to_string(m)) return m;
    return std::nullopt;
}

}  // namespace gangway::fleet
