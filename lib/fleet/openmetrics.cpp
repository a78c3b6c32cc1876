#include "openmetrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "../base/text.hpp"

namespace gangway::fleet {

namespace {

enum class Type { gauge, counter };

struct Family {
    std::string name;  // for a counter, without "_total": OpenMetrics' family name
    Type type = Type::gauge;
    std::string unit;  // OpenMetrics' UNIT, the name's suffix; "" for none
    std::string help;
    std::vector<std::pair<std::string, std::string>> series;  // rendered labels ("{...}" or ""), value
};

std::string number(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    // Whole numbers as such (bandwidths are mostly whole bytes per second:
    // 12500000000 reads better than 1.25e+10), the rest as the shortest text
    // that reads back as the same double.
    if (v == std::trunc(v) && std::fabs(v) < 1e15) {
        const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(v));
        return std::string(buf, end);
    }
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : "NaN";
}

std::string labels(std::initializer_list<std::pair<const char*, std::string_view>> kv) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, v] : kv) {
        if (!first) out += ',';
        first = false;
        out += k;
        out += "=\"";
        out += escape_label_value(v);
        out += '"';
    }
    return out + "}";
}

bool later(const Figure& a, const Figure& b) { return a.time >= b.time; }  // ties: the one met last wins

void write_family(std::string& out, const Family& f, Exposition format) {
    const bool om = format == Exposition::openmetrics;
    // The classic format names a counter's family by its samples' name
    // (with _total); OpenMetrics names it without. promtool 2.42 reads
    // OpenMetrics text with the classic parser, to which F_total is a family
    // of its own that wants its own HELP: so OpenMetrics' counter gets a
    // second HELP line for F_total (Prometheus' OpenMetrics parser takes it
    // as metadata and scrapes the family as a counter all the same).
    const std::string family = f.type == Type::counter && !om ? f.name + "_total" : f.name;
    const std::string sample = f.type == Type::counter ? f.name + "_total" : f.name;
    out += "# HELP " + family + " " + f.help + "\n";
    out += "# TYPE " + family + (f.type == Type::counter ? " counter\n" : " gauge\n");
    if (om && !f.unit.empty()) out += "# UNIT " + family + " " + f.unit + "\n";
    if (om && f.type == Type::counter) out += "# HELP " + sample + " " + f.help + "\n";
    for (const auto& [l, v] : f.series) out += sample + l + " " + v + "\n";
}

}  // namespace

std::string escape_label_value(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(v[i]); };
    for (std::size_t i = 0; i < v.size();) {
        const unsigned char c = byte(i);
        if (c == '\\') { out += "\\\\"; ++i; continue; }
        if (c == '"') { out += "\\\""; ++i; continue; }
        if (c == '\n') { out += "\\n"; ++i; continue; }
        if (c < 0x80) { out += char(c); ++i; continue; }
        const std::size_t len = utf8_length(v, i);
        if (len == 0) { out += '?'; ++i; continue; }
        out.append(v.substr(i, len));
        i += len;
    }
    return out;
}

std::size_t series_bound(std::size_t nodes, std::size_t gpus, std::size_t ports) {
    // Per node: 4 bandwidth gauges (TCP send, receive, NCCL, slowest link),
    // its last check's time, 7 degrading gauges (one per kind of figure) and
    // at most one flagged link: 13. Per GPU: H2D and D2H; per port: its rate.
    // Fixed: 2 check counters, rejected files, last ingest, flagged links, dropped.
    return nodes * 13 + gpus * 2 + ports + 6;
}

namespace {

// The families and their series, as both formats write them.
std::vector<Family> metric_families(const MetricsInput& in) {
    // The latest figure of each series, keyed the way the series are.
    std::map<std::pair<std::string, Metric>, const Figure*> node_latest;  // node-wide gauges
    std::map<std::tuple<std::string, Metric, std::string>, const Figure*> device_latest;
    std::map<std::pair<std::string, std::string>, const Figure*> link_latest;  // (node, peer)
    std::map<std::string, std::int64_t> last_check;
    std::map<std::string, std::set<Metric>> measured;
    std::set<std::string> nodes;
    auto keep = [](auto& map, auto key, const Figure& f) {
        auto [it, inserted] = map.try_emplace(std::move(key), &f);
        if (!inserted && later(f, *it->second)) it->second = &f;
    };
    for (const Figure& f : in.figures) {
        if (f.node.empty()) continue;
        nodes.insert(f.node);
        auto& t = last_check[f.node];
        t = std::max(t, f.time);
        measured[f.node].insert(f.metric);
        switch (f.metric) {
            case Metric::tcp_send:
            case Metric::tcp_recv:
            case Metric::nccl_busbw: keep(node_latest, std::pair{f.node, f.metric}, f); break;
            case Metric::gpu_h2d:
            case Metric::gpu_d2h:
            case Metric::port_rate: keep(device_latest, std::tuple{f.node, f.metric, f.device}, f); break;
            case Metric::link_bandwidth: keep(link_latest, std::pair{f.node, f.peer}, f); break;
        }
    }
    for (const Flag& fl : in.flags)
        if (!fl.node.empty()) nodes.insert(fl.node);

    std::uint64_t dropped = 0;
    std::vector<Family> families;
    auto family = [&](std::string name, Type type, std::string unit, std::string help) -> Family& {
        families.push_back(Family{std::move(name), type, std::move(unit), std::move(help), {}});
        return families.back();
    };

    const auto node_gauge = [&](Metric m, const char* name, const char* help) {
        Family& f = family(name, Type::gauge, "bytes_per_second", help);
        for (const auto& [key, fig] : node_latest)
            if (key.second == m) f.series.emplace_back(labels({{"node", key.first}}), number(fig->value));
    };
    node_gauge(Metric::tcp_send, "gangway_node_tcp_send_bytes_per_second",
               "The node's TCP send bandwidth in its latest check (median of the ring rounds).");
    node_gauge(Metric::tcp_recv, "gangway_node_tcp_receive_bytes_per_second",
               "The node's TCP receive bandwidth in its latest check (median of the ring rounds).");
    node_gauge(Metric::nccl_busbw, "gangway_node_nccl_busbw_bytes_per_second",
               "The node's NCCL all-reduce bus bandwidth in its latest check (nccl-tests' busbw).");
    {
        // One series per node, not per pair: the slowest of its links' latest figures.
        std::map<std::string, double> slowest;
        for (const auto& [key, fig] : link_latest) {
            auto [it, inserted] = slowest.try_emplace(key.first, fig->value);
            if (!inserted) it->second = std::min(it->second, fig->value);
        }
        Family& f = family("gangway_node_link_min_bytes_per_second", Type::gauge, "bytes_per_second",
                           "The slowest of the node's measured links, each link's latest figure.");
        for (const auto& [node, v] : slowest) f.series.emplace_back(labels({{"node", node}}), number(v));
    }

    const auto device_gauge = [&](Metric m, const char* name, const char* label, const char* help) {
        Family& f = family(name, Type::gauge, "bytes_per_second", help);
        std::map<std::string, std::size_t> per_node;
        for (const auto& [key, fig] : device_latest) {
            const auto& [node, metric, device] = key;
            if (metric != m) continue;
            if (++per_node[node] > kMaxDevicesPerNode) {
                ++dropped;
                continue;
            }
            f.series.emplace_back(labels({{"node", node}, {label, device}}), number(fig->value));
        }
    };
    device_gauge(Metric::gpu_h2d, "gangway_gpu_h2d_bytes_per_second", "gpu",
                 "One GPU's host-to-device copy bandwidth in its node's latest check (gpu: PCI bus id).");
    device_gauge(Metric::gpu_d2h, "gangway_gpu_d2h_bytes_per_second", "gpu",
                 "One GPU's device-to-host copy bandwidth in its node's latest check (gpu: PCI bus id).");
    device_gauge(Metric::port_rate, "gangway_port_rate_bytes_per_second", "port",
                 "One InfiniBand or RoCE port's rate in its node's latest check (port: device/port).");

    {
        Family& f = family("gangway_node_last_check_timestamp_seconds", Type::gauge, "seconds",
                           "When the node's latest stored check ran, unix seconds.");
        for (const auto& [node, t] : last_check) f.series.emplace_back(labels({{"node", node}}), std::to_string(t));
    }
    {
        // 1 where a flag names the node alone; 0 for every other kind of
        // figure the node has, so that a panel shows healthy nodes too.
        std::map<std::pair<std::string, Metric>, bool> degrading;
        for (const auto& [node, metrics] : measured)
            for (Metric m : metrics) degrading[{node, m}];
        for (const Flag& fl : in.flags)
            if (!fl.node.empty() && fl.peer.empty()) degrading[{fl.node, fl.metric}] = true;
        Family& f = family("gangway_node_degrading", Type::gauge, "",
                           "1 when the node's recent figures of this kind lie below its own baseline and its peers "
                           "by more than the fleet's noise (gangway fleet show), else 0.");
        for (const auto& [key, on] : degrading)
            f.series.emplace_back(labels({{"node", key.first}, {"metric", to_string(key.second)}}), on ? "1" : "0");
    }
    {
        // Flagged links, worst first (recent figure against its baseline),
        // at most one per node, so that a fabric-wide fault cannot make the
        // series grow as the square of the nodes.
        std::map<std::pair<std::string, std::string>, const Flag*> links;
        const auto ratio = [](const Flag& f) { return f.baseline > 0 ? f.recent / f.baseline : f.recent; };
        for (const Flag& fl : in.flags) {
            if (fl.node.empty() || fl.peer.empty()) continue;
            auto [it, inserted] = links.try_emplace({fl.node, fl.peer}, &fl);
            if (!inserted && ratio(fl) < ratio(*it->second)) it->second = &fl;
        }
        std::vector<const Flag*> worst;
        for (const auto& [key, fl] : links) worst.push_back(fl);
        std::stable_sort(worst.begin(), worst.end(), [&](const Flag* a, const Flag* b) { return ratio(*a) < ratio(*b); });
        if (worst.size() > nodes.size()) {
            dropped += worst.size() - nodes.size();
            worst.resize(nodes.size());
        }
        std::sort(worst.begin(), worst.end(),
                  [](const Flag* a, const Flag* b) { return std::tie(a->node, a->peer) < std::tie(b->node, b->peer); });
        Family& f = family("gangway_link_degrading_bytes_per_second", Type::gauge, "bytes_per_second",
                           "A flagged link's recent bandwidth, node to peer; only flagged links have a series.");
        for (const Flag* fl : worst)
            f.series.emplace_back(labels({{"node", fl->node}, {"peer", fl->peer}}), number(fl->recent));
        Family& n = family("gangway_links_degrading", Type::gauge, "",
                           "The number of flagged links, also those left out of gangway_link_degrading_bytes_per_second.");
        n.series.emplace_back("", std::to_string(links.size()));
    }

    {
        Family& f = family("gangway_checks", Type::counter, "", "Checks ingested into the fleet memory, by who ran them.");
        f.series.emplace_back(labels({{"source", "job_check"}}), std::to_string(in.counts.job_checks));
        f.series.emplace_back(labels({{"source", "node_check"}}), std::to_string(in.counts.node_checks));
        Family& r = family("gangway_rejected_files", Type::counter, "",
                           "Spooled check reports the ingest set aside as invalid.");
        r.series.emplace_back("", std::to_string(in.counts.files_rejected));
    }
    if (!in.stops.empty()) {
        Family& f = family("gangway_job_stops", Type::counter, "",
                           "Jobs stopped, by the node and the cause the post-mortem named first (gangway postmortem).");
        for (const StopCount& s : in.stops)
            f.series.emplace_back(labels({{"node", s.node}, {"cause", s.cause}}), std::to_string(s.count));
    }
    if (!in.stragglers.empty()) {
        Family& f = family("gangway_job_straggler", Type::gauge, "",
                           "Running jobs' stragglers root confirmed, by job and node: 1 while fleet serve names it (gangway status).");
        for (const RunningStraggler& s : in.stragglers)
            f.series.emplace_back(labels({{"job", std::to_string(s.job)}, {"node", s.node}}), "1");
    }
    if (!in.hangs.empty()) {
        Family& f = family("gangway_job_hangs", Type::counter, "",
                           "Running jobs' hangs root confirmed, by the node of a rank that held them (gangway status).");
        for (const HangCount& h : in.hangs) f.series.emplace_back(labels({{"node", h.node}}), std::to_string(h.count));
    }
    if (in.counts.last_ingest > 0) {
        Family& f = family("gangway_fleet_last_ingest_timestamp_seconds", Type::gauge, "seconds",
                           "When gangway fleet ingest last ran to its end, unix seconds.");
        f.series.emplace_back("", std::to_string(in.counts.last_ingest));
    }
    {
        Family& f = family("gangway_fleet_series_dropped", Type::gauge, "",
                           "Series left out by the bounds: devices past 64 per node and kind, flagged links past one per node.");
        f.series.emplace_back("", std::to_string(dropped));
    }

    return families;
}

std::string write_families(const std::vector<Family>& families, Exposition format) {
    std::string out;
    for (const Family& f : families) write_family(out, f, format);
    if (format == Exposition::openmetrics) out += "# EOF\n";
    return out;
}

}  // namespace

std::string render_metrics(const MetricsInput& in, Exposition format) { return write_families(metric_families(in), format); }

MetricsTexts render_metrics_both(const MetricsInput& in) {
    const auto families = metric_families(in);
    return {write_families(families, Exposition::openmetrics), write_families(families, Exposition::prometheus_text)};
}

Exposition negotiate_exposition(std::string_view accept) {
    double om = -1, text = -1;
    for (const auto& range : split_nonempty(accept, ',')) {
        const auto parts = split_keep_empty(range, ';');
        auto trim = [](std::string_view s) {
            while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
            return trim_right(s, " \t");
        };
        std::string type(trim(parts[0]));
        std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        double q = 1;
        for (std::size_t i = 1; i < parts.size(); ++i) {
            const auto p = trim(parts[i]);
            if (p.starts_with("q=") || p.starts_with("Q="))
                if (const auto v = parse_double(p.substr(2))) q = *v;
        }
        if (type == "application/openmetrics-text") om = std::max(om, q);
        else if (type == "text/plain" || type == "text/*" || type == "*/*") text = std::max(text, q);
    }
    return om > 0 && om >= text ? Exposition::openmetrics : Exposition::prometheus_text;
}

const char* content_type(Exposition format) {
    return format == Exposition::openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                             : "text/plain; version=0.0.4; charset=utf-8";
}

}  // namespace gangway::fleet
