#include "report_schema.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "../base/error.hpp"
#include "../base/saturate.hpp"
#include "../base/siphash.hpp"
#include "../base/text.hpp"
#include "../slurm/drain_rules.hpp"

namespace gangway::fleet {
namespace {

using json = nlohmann::ordered_json;
using preflight::Report;

// ---- writing ---------------------------------------------------------------

// A figure that may be missing: null, as the schema says. NaN and infinities
// are not JSON numbers: null too.
// A whole number is written as one (60, not 60.0), as the hand-written
// writer's %g did and readers (scripts comparing text) expect.
json num(double x) {
    if (!std::isfinite(x)) return nullptr;
    if (x == std::trunc(x) && std::fabs(x) < 9007199254740992.0) return static_cast<std::int64_t>(x);
    return x;
}
json opt(std::optional<double> x) { return x ? num(*x) : json(nullptr); }

// A node check's figure or expectation: a number when it is one ("8", "53.1"),
// so that a store can compare it; text otherwise ("Polling", "<= 0").
json figure_value(const std::string& s) {
    if (s.empty() || s.find_first_not_of("0123456789.-") != std::string::npos) return s;
    if (auto i = parse_int<std::int64_t>(s)) return *i;
    if (auto d = parse_double(s); d && std::isfinite(*d)) return *d;
    return s;
}

std::string name_of(const Report& r, unsigned i) { return i < r.nodes.size() ? r.nodes[i].name : "?"; }

json stages_json(const std::vector<preflight::StageResult>& stages) {
    json a = json::array();
    for (const auto& s : stages)
        a.push_back({{"name", s.name}, {"status", to_string(s.status)}, {"detail", s.detail}, {"seconds", num(s.seconds)}});
    return a;
}

template <class NodeName>
json gpus_json(const std::vector<preflight::GpuRecord>& gpus, NodeName&& node) {
    json a = json::array();
    for (const auto& g : gpus)
        a.push_back({{"node", node(g.node)}, {"index", g.index}, {"name", g.name}, {"bus_id", g.bus_id},
                     {"pcie_gen", g.pcie_gen}, {"pcie_width", g.pcie_width}, {"h2d_gbps", opt(g.h2d_gbps)},
                     {"d2h_gbps", opt(g.d2h_gbps)}, {"error", g.error}});
    return a;
}

template <class NodeName>
json nccl_json(const std::vector<preflight::NcclRecord>& nccl, NodeName&& node) {
    json a = json::array();
    for (const auto& n : nccl)
        a.push_back({{"node", node(n.node)}, {"ranks", n.nranks}, {"bytes", saturate<long long>(n.bytes)},
                     {"algbw_gbps", opt(n.algbw_gbps)}, {"busbw_gbps", opt(n.busbw_gbps)}, {"data_ok", n.data_ok},
                     {"error", n.error}});
    return a;
}

// ---- reading ---------------------------------------------------------------

[[noreturn]] void bad(const std::string& where, const char* want) {
    throw Error("the report's " + where + " is not " + want + ": not a gangway report of this version");
}

const json& field(const json& o, const char* key, const std::string& where) {
    if (!o.is_object()) bad(where, "an object");
    auto it = o.find(key);
    if (it == o.end()) throw Error("the report has no " + where + "." + key + ": not a gangway report of this version");
    return *it;
}
std::string str(const json& o, const char* key, const std::string& where) {
    const auto& v = field(o, key, where);
    if (!v.is_string()) bad(where + "." + key, "a string");
    return v.get<std::string>();
}
double number(const json& o, const char* key, const std::string& where) {
    const auto& v = field(o, key, where);
    if (!v.is_number()) bad(where + "." + key, "a number");
    return v.get<double>();
}
std::optional<double> opt_number(const json& o, const char* key, const std::string& where) {
    const auto& v = field(o, key, where);
    if (v.is_null()) return std::nullopt;
    if (!v.is_number()) bad(where + "." + key, "a number or null");
    return v.get<double>();
}
template <class Int>
Int integer(const json& o, const char* key, const std::string& where) {
    const auto& v = field(o, key, where);
    if (!v.is_number_integer()) bad(where + "." + key, "an integer");
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > std::uint64_t(std::numeric_limits<Int>::max())) bad(where + "." + key, "an integer in range");
        return Int(u);
    }
    const auto i = v.get<std::int64_t>();
    if (i < std::int64_t(std::numeric_limits<Int>::min()) ||
        (i > 0 && std::uint64_t(i) > std::uint64_t(std::numeric_limits<Int>::max())))
        bad(where + "." + key, "an integer in range");
    return Int(i);
}
bool boolean(const json& o, const char* key, const std::string& where) {
    const auto& v = field(o, key, where);
    if (!v.is_boolean()) bad(where + "." + key, "true or false");
    return v.get<bool>();
}
// `where` is a view, not a const std::string&: a returned reference beside a
// temporary string argument is what g++ 13+'s -Wdangling-reference flags.
const json& array(const json& o, const char* key, std::string_view where) {
    const std::string w(where);
    const auto& v = field(o, key, w);
    if (!v.is_array()) bad(w + "." + key, "an array");
    return v;
}
std::string at(const char* key, std::size_t i) { return std::string(key) + "[" + std::to_string(i) + "]"; }
// A figure or expectation: its text again ("8", "53.1", "Polling").
std::string figure_text(const json& o, const char* key, const std::string& where) {
    const auto& v = field(o, key, where);
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number()) return v.dump();
    bad(where + "." + key, "a number or a string");
}

// A node's name, refused unless it is one in gangway's sense (slurm::is_node_name).
std::string node_name(const json& o, const std::string& where, const char* key = "name") {
    std::string n = str(o, key, where);
    if (!slurm::is_node_name(n))
        throw Error("the report's " + where + "." + key + " \"" + excerpt(n) +
                    "\" is not a node name (1 to 64 letters, digits, '.', '_' or '-', the first a letter or a digit)");
    return n;
}

template <class E, class Parse>
E word(const json& o, const char* key, const std::string& where, Parse&& parse) {
    const std::string w = str(o, key, where);
    if (auto e = parse(w)) return *e;
    throw Error("the report's " + where + "." + key + " is \"" + excerpt(w) + "\", a word this gangway does not know");
}

std::optional<preflight::NodeStatus> parse_node_status(std::string_view s) {
    using preflight::NodeStatus;
    for (auto v : {NodeStatus::ok, NodeStatus::slow, NodeStatus::mismatch, NodeStatus::faulty, NodeStatus::unreachable,
                   NodeStatus::missing, NodeStatus::lost})
        if (s == to_string(v)) return v;
    return std::nullopt;
}
std::optional<health::Verdict> parse_health_verdict(std::string_view s) {
    using health::Verdict;
    for (auto v : {Verdict::healthy, Verdict::pending, Verdict::failed, Verdict::inconclusive})
        if (s == to_string(v)) return v;
    return std::nullopt;
}
std::optional<health::Status> parse_status(std::string_view s) {
    using health::Status;
    for (auto v : {Status::ok, Status::failed, Status::skipped})
        if (s == to_string(v)) return v;
    return std::nullopt;
}

std::vector<preflight::StageResult> stages_from(const json& j) {
    std::vector<preflight::StageResult> out;
    const auto& a = array(j, "stages", "report");
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::string w = at("stages", i);
        preflight::StageResult s;
        s.name = str(a[i], "name", w);
        s.status = word<preflight::StageStatus>(a[i], "status", w, preflight::parse_stage_status);
        s.detail = str(a[i], "detail", w);
        s.seconds = opt_number(a[i], "seconds", w).value_or(0);
        out.push_back(std::move(s));
    }
    return out;
}

// One element of a report's array, `w` its place ("gpus[3]"): the one
// reading of each, for the tree (*_from_json) and for parse_report's one
// pass alike.
template <class NodeIndex>
preflight::GpuRecord gpu_from(const json& e, const std::string& w, NodeIndex&& node) {
    preflight::GpuRecord g;
    g.node = node(str(e, "node", w), w);
    g.index = integer<int>(e, "index", w);
    g.name = str(e, "name", w);
    g.bus_id = str(e, "bus_id", w);
    g.pcie_gen = integer<int>(e, "pcie_gen", w);
    g.pcie_width = integer<int>(e, "pcie_width", w);
    g.h2d_gbps = opt_number(e, "h2d_gbps", w);
    g.d2h_gbps = opt_number(e, "d2h_gbps", w);
    g.error = str(e, "error", w);
    return g;
}
template <class NodeIndex>
preflight::NcclRecord nccl_one_from(const json& e, const std::string& w, NodeIndex&& node) {
    preflight::NcclRecord n;
    n.node = node(str(e, "node", w), w);
    n.nranks = integer<unsigned>(e, "ranks", w);
    n.bytes = number(e, "bytes", w);
    n.algbw_gbps = opt_number(e, "algbw_gbps", w);
    n.busbw_gbps = opt_number(e, "busbw_gbps", w);
    n.data_ok = boolean(e, "data_ok", w);
    n.error = str(e, "error", w);
    return n;
}

// The array `key` of `j` appended to `out`, whose first `out.size()`
// elements the one pass took already (their places count on from there).
template <class T, class One>
void append_from(const json& j, const char* key, std::vector<T>& out, One&& one) {
    const auto& a = array(j, key, "report");
    const std::size_t before = out.size();
    for (std::size_t i = 0; i < a.size(); ++i) out.push_back(one(a[i], at(key, before + i)));
}

template <class NodeIndex>
std::vector<preflight::GpuRecord> gpus_from(const json& j, NodeIndex&& node, std::vector<preflight::GpuRecord> out = {}) {
    append_from(j, "gpus", out, [&](const json& e, const std::string& w) { return gpu_from(e, w, node); });
    return out;
}

template <class NodeIndex>
std::vector<preflight::NcclRecord> nccl_from(const json& j, NodeIndex&& node, std::vector<preflight::NcclRecord> out = {}) {
    append_from(j, "nccl", out, [&](const json& e, const std::string& w) { return nccl_one_from(e, w, node); });
    return out;
}

std::string check_id(std::uint32_t uid, const std::string& id, std::string_view text) {
    std::string own = id;
    if (own.empty()) {
        char b[24];
        std::snprintf(b, sizeof b, "h%016llx", static_cast<unsigned long long>(siphash24(SipKey{}, text)));
        own = b;
    }
    return "u" + std::to_string(uid) + "-" + own;
}

Figure figure(const CheckRow& c, const std::string& node, Metric m, double value) {
    Figure f;
    f.check_id = c.id;
    f.time = c.time;
    f.source = c.source;
    f.uid = c.uid;
    f.node = node;
    f.metric = m;
    f.value = value;
    return f;
}

bool usable(std::optional<double> x) { return x && std::isfinite(*x) && *x > 0; }

// GPU copy rates (GB/s in the report, bytes/s in the store) and each node's
// largest all-reduce (the sweep's smaller sizes measure latency, not bandwidth).
void gpu_figures(CheckRecord& rec, const std::vector<preflight::GpuRecord>& gpus,
                 const std::vector<preflight::NcclRecord>& nccl, const std::function<std::string(unsigned)>& node) {
    for (const auto& g : gpus) {
        if (!g.error.empty()) continue;
        for (auto [x, m] : {std::pair{g.h2d_gbps, Metric::gpu_h2d}, std::pair{g.d2h_gbps, Metric::gpu_d2h}}) {
            if (!usable(x)) continue;
            auto f = figure(rec.check, node(g.node), m, *x * 1e9);
            f.device = g.bus_id;
            f.peer_class = g.name;
            rec.figures.push_back(std::move(f));
        }
    }
    std::map<unsigned, const preflight::NcclRecord*> largest;
    for (const auto& n : nccl)
        if (n.data_ok && n.error.empty() && usable(n.busbw_gbps) && (!largest[n.node] || largest[n.node]->bytes < n.bytes))
            largest[n.node] = &n;
    for (const auto& [i, n] : largest) {
        auto f = figure(rec.check, node(i), Metric::nccl_busbw, *n->busbw_gbps * 1e9);
        f.peer_class = std::to_string(n->nranks) + " GPUs";
        rec.figures.push_back(std::move(f));
    }
}

std::string nic_class(long mbps) { return mbps > 0 ? std::to_string(mbps) + " Mb/s" : ""; }

}  // namespace

// ---- the writers' JSON -------------------------------------------------------

nlohmann::ordered_json job_check_json(const preflight::Report& r) {
    json o;
    o["kind"] = kJobCheckKind;
    o["schema"] = kJobCheckSchema;
    o["id"] = r.id;
    o["time"] = r.time;
    o["verdict"] = to_string(verdict(r));
    o["exit_code"] = exit_code(verdict(r));
    o["job_id"] = r.job_id;
    o["step_id"] = r.step_id;
    o["mode"] = r.mode;
    o["bootstrap"] = r.bootstrap;
    o["seconds"] = num(r.seconds);
    o["deadline_s"] = num(r.deadline_s);
    o["expected_bps"] = num(r.expected_bps);
    o["slow_ratio"] = num(r.slow_ratio);
    json nodes = json::array();
    for (const auto& n : r.nodes)
        nodes.push_back({{"name", n.name}, {"addr", n.addr}, {"status", to_string(n.status)}, {"tx_bps", opt(n.tx_bps)},
                         {"rx_bps", opt(n.rx_bps)}, {"nic_mbps", n.nic_mbps}, {"reasons", n.reasons}});
    o["nodes"] = std::move(nodes);
    json links = json::array();
    for (const auto& l : r.links)
        links.push_back({{"from", name_of(r, l.from)}, {"to", name_of(r, l.to)}, {"stage", l.stage}, {"ok", l.ok},
                         {"bps", opt(l.bps)}, {"ms", opt(l.ms)}, {"error", l.error}});
    o["links"] = std::move(links);
    o["stages"] = stages_json(r.stages);
    auto node = [&](unsigned i) { return name_of(r, i); };
    o["gpus"] = gpus_json(r.gpus, node);
    o["nccl"] = nccl_json(r.nccl, node);
    json ports = json::array();
    for (const auto& p : r.ports)
        ports.push_back({{"node", name_of(r, p.node)}, {"name", p.name}, {"rate_gbps", num(p.rate_gbps)}, {"usable", p.usable}});
    o["ports"] = std::move(ports);
    o["findings"] = r.findings;
    o["notes"] = r.notes;
    return o;
}

nlohmann::ordered_json node_check_json(const health::Report& r) {
    json o;
    o["kind"] = kNodeCheckKind;
    o["schema"] = kNodeCheckSchema;
    o["id"] = r.id;
    o["node"] = r.node;
    o["level"] = r.level;
    o["time"] = r.time;
    o["seconds"] = num(std::round(r.seconds * 1000) / 1000);
    o["verdict"] = to_string(r.verdict);
    o["stages"] = stages_json(r.stages);
    json recs = json::array();
    for (const auto& rec : r.records)
        recs.push_back({{"node", r.node}, {"check", to_string(rec.check)}, {"device", rec.device},
                        {"figure", figure_value(rec.figure)}, {"unit", rec.unit}, {"expected", figure_value(rec.expected)},
                        {"status", to_string(rec.status)}, {"confirmed", rec.confirmed}, {"reason", rec.reason}});
    o["records"] = std::move(recs);
    auto node = [&](unsigned) { return r.node; };
    o["gpus"] = gpus_json(r.gpus, node);
    o["nccl"] = nccl_json(r.nccl, node);
    return o;
}

// ---- layout ----------------------------------------------------------------------

std::string dump_line(const nlohmann::ordered_json& j) {
    // nlohmann writes every scalar and key (escapes, numbers); only the separators are ours.
    if (j.is_object()) {
        std::string o = "{";
        bool first = true;
        for (const auto& [k, v] : j.items()) {
            o += (first ? "" : ", ") + json(k).dump() + ": " + dump_line(v);
            first = false;
        }
        return o + "}";
    }
    if (j.is_array()) {
        std::string o = "[";
        for (std::size_t i = 0; i < j.size(); ++i) o += (i ? ", " : "") + dump_line(j[i]);
        return o + "]";
    }
    return j.dump();
}

std::string dump_report(const nlohmann::ordered_json& j) {
    if (!j.is_object()) return dump_line(j) + "\n";
    std::string o = "{\n";
    std::size_t n = 0;
    for (const auto& [k, v] : j.items()) {
        o += "  " + json(k).dump() + ": ";
        if (v.is_array() && !v.empty() && (v[0].is_object() || v[0].is_array())) {
            o += "[";
            for (std::size_t i = 0; i < v.size(); ++i) o += (i ? ",\n    " : "\n    ") + dump_line(v[i]);
            o += "\n  ]";
        } else {
            o += dump_line(v);
        }
        o += ++n < j.size() ? ",\n" : "\n";
    }
    return o + "}\n";
}

// ---- parsing -------------------------------------------------------------------

ReportKind report_kind(const nlohmann::ordered_json& j) {
    if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string()) {
        if (j.is_object() && j.contains("schema") && j["schema"] == "gangway-preflight/1")
            throw Error("the report has schema gangway-preflight/1, written by an older gangway: the fleet reads schema " +
                        std::to_string(kJobCheckSchema));
        throw Error("the report has no \"kind\": not a gangway report");
    }
    const auto kind = j["kind"].get<std::string>();
    ReportKind k;
    int want;
    if (kind == kJobCheckKind) k = ReportKind::job_check, want = kJobCheckSchema;
    else if (kind == kNodeCheckKind) k = ReportKind::node_check, want = kNodeCheckSchema;
    else throw Error("the report's kind \"" + excerpt(kind) + "\" is not one gangway writes");
    const auto& s = j.contains("schema") ? j["schema"] : json();
    if (!s.is_number_integer()) throw Error("the report's schema is not a number: not a gangway report of this version");
    if (s.get<std::int64_t>() != want)
        throw Error("the report's " + kind + " schema is " + s.dump() + ", this gangway reads " + std::to_string(want) +
                    ": ingest it with the gangway that wrote it");
    return k;
}

namespace {

preflight::NodeResult node_from(const json& e, const std::string& wn) {
    preflight::NodeResult n;
    n.name = node_name(e, wn);
    n.addr = str(e, "addr", wn);
    n.status = word<preflight::NodeStatus>(e, "status", wn, parse_node_status);
    n.tx_bps = opt_number(e, "tx_bps", wn);
    n.rx_bps = opt_number(e, "rx_bps", wn);
    n.nic_mbps = integer<long>(e, "nic_mbps", wn);
    const auto& rs = array(e, "reasons", wn);
    for (std::size_t k = 0; k < rs.size(); ++k) {
        if (!rs[k].is_string()) bad(wn + "." + at("reasons", k), "a string");
        n.reasons.push_back(rs[k].get<std::string>());
    }
    return n;
}
template <class NodeIndex>
preflight::LinkResult link_from(const json& e, const std::string& wl, NodeIndex&& node) {
    preflight::LinkResult l;
    l.from = node(str(e, "from", wl), wl);
    l.to = node(str(e, "to", wl), wl);
    l.stage = str(e, "stage", wl);
    l.ok = boolean(e, "ok", wl);
    l.bps = opt_number(e, "bps", wl);
    l.ms = opt_number(e, "ms", wl);
    l.error = str(e, "error", wl);
    return l;
}
template <class NodeIndex>
preflight::PortRecord port_from(const json& e, const std::string& wp, NodeIndex&& node) {
    preflight::PortRecord p;
    p.node = node(str(e, "node", wp), wp);
    p.name = str(e, "name", wp);
    p.rate_gbps = opt_number(e, "rate_gbps", wp).value_or(0);
    p.usable = boolean(e, "usable", wp);
    return p;
}

// A job check's nodes (and their index by name), links, GPUs, NCCL runs and
// ports as far as parse_report's one pass took them.
struct JobParts {
    std::vector<preflight::NodeResult> nodes;
    std::map<std::string, unsigned, std::less<>> index;
    std::vector<preflight::LinkResult> links;
    std::vector<preflight::GpuRecord> gpus;
    std::vector<preflight::NcclRecord> nccl;
    std::vector<preflight::PortRecord> ports;
};

// The node index's lookup, as a report's elements name their nodes.
struct NodeLookup {
    const std::map<std::string, unsigned, std::less<>>& index;
    unsigned operator()(const std::string& name, const std::string& where) const {
        auto it = index.find(name);
        if (it == index.end()) throw Error("the report's " + where + " names node \"" + excerpt(name) + "\", not among its nodes");
        return it->second;
    }
};

// job_check_from_json with the elements `pre` holds already: the rest of
// each array follows them, in the same order and with the same checks.
preflight::Report job_check_from(const nlohmann::ordered_json& j, JobParts pre) {
    if (report_kind(j) != ReportKind::job_check) throw Error("the report is a node check's, not a job check's");
    Report r;
    const std::string w = "report";
    r.id = str(j, "id", w);
    r.time = integer<std::int64_t>(j, "time", w);
    r.job_id = str(j, "job_id", w);
    r.step_id = str(j, "step_id", w);
    r.mode = str(j, "mode", w);
    r.bootstrap = str(j, "bootstrap", w);
    r.seconds = opt_number(j, "seconds", w).value_or(0);
    r.deadline_s = opt_number(j, "deadline_s", w).value_or(0);
    r.expected_bps = opt_number(j, "expected_bps", w).value_or(0);
    r.slow_ratio = opt_number(j, "slow_ratio", w).value_or(0);
    auto index = std::move(pre.index);
    r.nodes = std::move(pre.nodes);
    const auto& nodes = array(j, "nodes", w);
    for (std::size_t k = 0; k < nodes.size(); ++k) {
        const std::size_t i = r.nodes.size();
        preflight::NodeResult n = node_from(nodes[k], at("nodes", i));
        if (!index.emplace(n.name, unsigned(i)).second)
            throw Error("the report names node " + excerpt(n.name) + " twice: not a gangway report");
        r.nodes.push_back(std::move(n));
    }
    const NodeLookup node{index};
    r.links = std::move(pre.links);
    append_from(j, "links", r.links, [&](const json& e, const std::string& wl) { return link_from(e, wl, node); });
    r.stages = stages_from(j);
    r.gpus = gpus_from(j, node, std::move(pre.gpus));
    r.nccl = nccl_from(j, node, std::move(pre.nccl));
    r.ports = std::move(pre.ports);
    append_from(j, "ports", r.ports, [&](const json& e, const std::string& wp) { return port_from(e, wp, node); });
    for (const char* key : {"findings", "notes"}) {
        const auto& a = array(j, key, w);
        auto& dst = std::string(key) == "findings" ? r.findings : r.notes;
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (!a[i].is_string()) bad(at(key, i), "a string");
            dst.push_back(a[i].get<std::string>());
        }
    }
    return r;
}

// parse_report's one pass over a job check: each element of nodes, links,
// gpus, nccl and ports converted when the parse has it whole, then left
// out of the tree. It takes nothing unless the report said first that it
// is a job check, and it stops for good at the first element it cannot
// take (not an element the report's writer makes, a node named twice or
// not yet named, links before nodes): what it took then leaves the tree
// incomplete, and parse_report parses the text again the tree's way.
class JobStream final : public ReportElementSink {
public:
    JobParts parts;
    std::size_t taken = 0;
    bool stopped = false;

    bool take(const nlohmann::ordered_json& root, std::string_view array, nlohmann::ordered_json& e) override {
        if (stopped) return false;
        if (!job_) {
            const auto k = root.find("kind");
            if (k == root.end() || !k->is_string() || k->get_ref<const std::string&>() != kJobCheckKind) return stop();
            job_ = true;
        }
        try {
            if (array == "nodes") {
                if (nodes_done_) return stop();
                preflight::NodeResult n = node_from(e, at("nodes", parts.nodes.size()));
                if (!parts.index.emplace(n.name, unsigned(parts.nodes.size())).second) return stop();
                parts.nodes.push_back(std::move(n));
            } else if (array == "links" || array == "gpus" || array == "nccl" || array == "ports") {
                if (!nodes_done_) return stop();
                const NodeLookup node{parts.index};
                if (array == "links") parts.links.push_back(link_from(e, at("links", parts.links.size()), node));
                else if (array == "gpus") parts.gpus.push_back(gpu_from(e, at("gpus", parts.gpus.size()), node));
                else if (array == "nccl") parts.nccl.push_back(nccl_one_from(e, at("nccl", parts.nccl.size()), node));
                else parts.ports.push_back(port_from(e, at("ports", parts.ports.size()), node));
            } else {
                return false;  // stages, findings, notes: small, read from the tree
            }
        } catch (const Error&) {
            return stop();
        }
        ++taken;
        return true;
    }
    void closed(std::string_view array) override {
        if (array == "nodes") nodes_done_ = true;
    }
    std::size_t taken_nodes() const override { return parts.nodes.size(); }

private:
    bool stop() {
        stopped = true;
        return false;
    }
    bool job_ = false, nodes_done_ = false;
};

}  // namespace

preflight::Report job_check_from_json(const nlohmann::ordered_json& j) { return job_check_from(j, {}); }

health::Report node_check_from_json(const nlohmann::ordered_json& j) {
    if (report_kind(j) != ReportKind::node_check) throw Error("the report is a job check's, not a node check's");
    health::Report r;
    const std::string w = "report";
    r.id = str(j, "id", w);
    r.node = node_name(j, w, "node");
    r.level = str(j, "level", w);
    r.time = integer<std::int64_t>(j, "time", w);
    r.seconds = opt_number(j, "seconds", w).value_or(0);
    r.verdict = word<health::Verdict>(j, "verdict", w, parse_health_verdict);
    r.stages = stages_from(j);
    const auto& recs = array(j, "records", w);
    for (std::size_t i = 0; i < recs.size(); ++i) {
        const std::string wr = at("records", i);
        health::Record rec;
        if (str(recs[i], "node", wr) != r.node) throw Error("the report's " + wr + " is about another node than the report's");
        rec.check = word<health::Check>(recs[i], "check", wr, health::parse_check);
        rec.device = str(recs[i], "device", wr);
        rec.figure = figure_text(recs[i], "figure", wr);
        rec.unit = str(recs[i], "unit", wr);
        rec.expected = figure_text(recs[i], "expected", wr);
        rec.status = word<health::Status>(recs[i], "status", wr, parse_status);
        rec.confirmed = boolean(recs[i], "confirmed", wr);
        rec.reason = str(recs[i], "reason", wr);
        r.records.push_back(std::move(rec));
    }
    auto node = [&](const std::string& name, const std::string& where) -> unsigned {
        if (name != r.node) throw Error("the report's " + where + " is about another node than the report's");
        return 0;
    };
    r.gpus = gpus_from(j, node);
    r.nccl = nccl_from(j, node);
    return r;
}

// ---- rows ------------------------------------------------------------------------

CheckRecord to_record(const preflight::Report& r, std::uint32_t uid, std::string_view text) {
    CheckRecord rec;
    auto& c = rec.check;
    c.id = check_id(uid, r.id, text);
    c.source = Source::job_check;
    c.uid = uid;
    c.time = r.time;
    c.job_id = r.job_id;
    c.verdict = to_string(verdict(r));
    for (const auto& n : r.nodes) c.nodes.push_back(n.name);
    // Room for the most figures the report can give (a node's two rates, a
    // pair's, a GPU's two, a node's NCCL, a port's) at once: a 2,048-node
    // report's 59,000 were moved through each doubling, twice their room held.
    rec.figures.reserve(2 * r.nodes.size() + r.links.size() + 2 * r.gpus.size() + r.nccl.size() + r.ports.size());
    auto node = [&](unsigned i) { return name_of(r, i); };
    for (const auto& n : r.nodes) {
        for (auto [x, m] : {std::pair{n.tx_bps, Metric::tcp_send}, std::pair{n.rx_bps, Metric::tcp_recv}}) {
            if (!usable(x)) continue;
            auto f = figure(c, n.name, m, *x);
            f.peer_class = nic_class(n.nic_mbps);
            rec.figures.push_back(std::move(f));
        }
        for (const auto& why : n.reasons) rec.findings.push_back(FindingRow{c.id, n.name, why});
    }
    // The measured pairs: the ring rounds and their confirmations. The last
    // figure of a pair wins (a confirmation measures it again).
    std::map<std::pair<unsigned, unsigned>, double> pairs;
    for (const auto& l : r.links)
        if (l.ok && usable(l.bps) && (l.stage == "bandwidth" || l.stage == "confirm" || l.stage == "retest") &&
            l.from < r.nodes.size() && l.to < r.nodes.size())
            pairs[{l.from, l.to}] = *l.bps;
    for (const auto& [p, bps] : pairs) {
        auto f = figure(c, node(p.first), Metric::link_bandwidth, bps);
        f.peer = node(p.second);
        f.peer_class = nic_class(r.nodes[p.first].nic_mbps);
        rec.figures.push_back(std::move(f));
    }
    gpu_figures(rec, r.gpus, r.nccl, node);
    for (const auto& p : r.ports) {
        if (!p.usable || !(p.rate_gbps > 0) || !std::isfinite(p.rate_gbps)) continue;
        auto f = figure(c, node(p.node), Metric::port_rate, p.rate_gbps * 1e9 / 8);
        f.device = p.name;
        rec.figures.push_back(std::move(f));
    }
    // "node10: version nccl is ...": the node it names, when it is one of the
    // check's; looked up by name (a finding times every node was minutes for
    // a 7 MB report: issue 31, item 7).
    std::set<std::string_view> names;
    for (const auto& n : r.nodes) names.insert(n.name);
    for (const auto& text_ : r.findings) {
        std::string named;
        if (auto colon = text_.find(':'); colon != std::string::npos)
            if (names.count(std::string_view(text_).substr(0, colon))) named = text_.substr(0, colon);
        rec.findings.push_back(FindingRow{c.id, named, text_});
    }
    return rec;
}

CheckRecord to_record(const health::Report& r, std::uint32_t uid, std::string_view text) {
    CheckRecord rec;
    auto& c = rec.check;
    c.id = check_id(uid, r.id, text);
    c.source = Source::node_check;
    c.uid = uid;
    c.time = r.time;
    c.verdict = to_string(r.verdict);
    c.nodes = {r.node};
    gpu_figures(rec, r.gpus, r.nccl, [&](unsigned) { return r.node; });
    for (const auto& x : r.records) {
        if (x.check == health::Check::port_rate && x.unit == "Gb/s")
            if (auto g = parse_double(x.figure); g && std::isfinite(*g) && *g > 0) {
                auto f = figure(c, r.node, Metric::port_rate, *g * 1e9 / 8);
                f.device = x.device;
                f.peer_class = x.expected.empty() ? "" : x.expected + " Gb/s";
                rec.figures.push_back(std::move(f));
            }
        if (x.status == health::Status::failed) rec.findings.push_back(FindingRow{c.id, r.node, x.reason});
    }
    return rec;
}

namespace {

// The rows of a report read, within the per-report caps (the node cap is the parse's):
// what one file may add to the store.
CheckRecord rows_of(const std::optional<preflight::Report>& job, const std::optional<health::Report>& node,
                    std::uint32_t uid, std::string_view text, const ReportLimits& limits) {
    CheckRecord rec = job ? to_record(*job, uid, text) : to_record(*node, uid, text);
    if (rec.figures.size() > limits.max_series)
        throw Error("the report has " + std::to_string(rec.figures.size()) + " figures, over the limit of " +
                    std::to_string(limits.max_series) + " a report (fleet ingest --report-caps)");
    if (rec.findings.size() > limits.max_findings)
        throw Error("the report has " + std::to_string(rec.findings.size()) + " findings, over the limit of " +
                    std::to_string(limits.max_findings) + " a report (fleet ingest --report-caps)");
    return rec;
}

}  // namespace

CheckRecord parse_report_tree(std::string_view text, std::uint32_t uid, const ReportLimits& limits) {
    // The JSON is gone before the rows are made: a 2,048-node report's tree
    // and its 59,000 figures are not held at once (issue 34, item 2).
    std::optional<preflight::Report> job;
    std::optional<health::Report> node;
    {
        const auto j = parse_report_json(text, limits);
        if (report_kind(j) == ReportKind::job_check) job = job_check_from_json(j);
        else node = node_check_from_json(j);
    }
    return rows_of(job, node, uid, text, limits);
}

CheckRecord parse_report(std::string_view text, std::uint32_t uid, const ReportLimits& limits) {
    std::optional<preflight::Report> job;
    std::optional<health::Report> node;
    bool again = false;  // the tree's way, once what the one pass holds is freed
    {
        JobStream stream;
        // A refusal of the parse itself (syntax, the budget's counts, a key
        // twice, the kind, the node cap) is the tree's, word for word: what
        // the one pass takes changes none of what those count (it takes an
        // array's elements, counted as they came, and the node cap counts
        // them), so it is not parsed again.
        const auto j = parse_report_json(text, limits, &stream);
        // Elements left out, and not all of an array's: the tree is not whole.
        again = stream.stopped && stream.taken > 0;
        if (!again) {
            if (report_kind(j) == ReportKind::job_check) job = job_check_from(j, std::move(stream.parts));
            else node = node_check_from_json(j);
        }
    }
    if (again) return parse_report_tree(text, uid, limits);
    return rows_of(job, node, uid, text, limits);
}

std::string render_job_check(const preflight::Report& r) { return dump_report(job_check_json(r)); }

std::string render_node_check(const health::Report& r) { return dump_line(node_check_json(r)) + "\n"; }

}  // namespace gangway::fleet
