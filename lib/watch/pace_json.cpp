// The running job's records as text (pace_json.hpp).
#include "pace_json.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "../postmortem/record.hpp"
#include "../slurm/drain_rules.hpp"

namespace gangway::watch {
namespace pm = gangway::postmortem;
using nlohmann::json;

namespace {

// A parse that stops building the tree past what the record may hold.
json bounded_parse(std::string_view text, std::size_t max_bytes, std::size_t max_values, int max_depth, const char* what) {
    if (text.size() > max_bytes)
        throw Error(std::string(what) + " of " + std::to_string(text.size()) + " bytes, more than " + size_text(max_bytes));
    std::size_t values = 0;
    const json::parser_callback_t bound = [&](int depth, json::parse_event_t ev, json&) {
        if (depth > max_depth) throw Error(std::string(what) + " nested deeper than its format");
        if (ev == json::parse_event_t::value && ++values > max_values)
            throw Error(std::string(what) + " of more than " + std::to_string(max_values) + " values");
        return true;
    };
    json j = json::parse(text.begin(), text.end(), bound, false);
    if (j.is_discarded() || !j.is_object()) throw Error(std::string(what) + " is not a JSON object");
    return j;
}

void want_kind(const json& j, const char* kind, const char* what) {
    const auto k = j.find("kind");
    if (k == j.end() || !k->is_string() || k->get<std::string>() != kind)
        throw Error(std::string("not ") + what + " (a JSON object with \"kind\":\"" + kind + "\")");
}

std::uint64_t unsigned_of(const json& j, const char* key, std::uint64_t max, const char* what) {
    const auto v = j.find(key);
    if (v == j.end() || !v->is_number_unsigned() || v->get<std::uint64_t>() > max)
        throw Error(std::string(what) + "'s \"" + key + "\" is not a whole number up to " + std::to_string(max));
    return v->get<std::uint64_t>();
}

std::int64_t time_of(const json& v, const char* what) {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
        throw Error(std::string(what) + " holds a time that is not a whole number of nanoseconds");
    return std::int64_t(v.get<std::uint64_t>());
}

Pace pace_from(const json& j) {
    want_kind(j, "gangway-rank-pace", "a gangway pace report");
    Pace p;
    p.rank = std::uint32_t(unsigned_of(j, "rank", 0xffffffffu, "a pace report"));
    p.t_ns = std::int64_t(unsigned_of(j, "time_ns", std::uint64_t(INT64_MAX), "a pace report"));
    const auto groups = j.find("groups");
    if (groups == j.end() || !groups->is_object()) throw Error("a pace report's \"groups\" is not an object of process groups");
    if (groups->size() > kMaxPaceGroups)
        throw Error("a pace report of " + std::to_string(groups->size()) + " process groups, more than " +
                    std::to_string(kMaxPaceGroups));
    for (const auto& [name, g] : groups->items()) {
        if (name.empty() || name.size() > pm::kMaxGroupName || printable_name(name, pm::kMaxGroupName) != name)
            throw Error("a pace report's group name \"" + excerpt(name) + "\" is not 1 to " + std::to_string(pm::kMaxGroupName) +
                        " printable bytes");
        if (!g.is_object()) throw Error("a pace report's group \"" + excerpt(name) + "\" is not an object");
        GroupPace gp;
        gp.group = name;
        gp.entered = unsigned_of(g, "entered", UINT64_MAX, "a pace report's group");
        gp.completed = unsigned_of(g, "completed", UINT64_MAX, "a pace report's group");
        if (gp.completed > gp.entered) throw Error("a pace report's group \"" + excerpt(name) + "\" completed more than it entered");
        const auto e = g.find("enters");
        if (e != g.end()) {
            if (!e->is_array() || e->size() > kMaxEnters)
                throw Error("a pace report's \"enters\" is not a list of at most " + std::to_string(kMaxEnters) + " [seq, time]");
            for (const auto& row : *e) {
                if (!row.is_array() || row.size() != 2 || !row[0].is_number_unsigned())
                    throw Error("a pace report's \"enters\" holds something else than [seq, time_ns]");
                const GroupPace::Enter en{row[0].get<std::uint64_t>(), time_of(row[1], "a pace report's \"enters\"")};
                if (en.seq > gp.entered) throw Error("a pace report's \"enters\" holds a collective after the newest entered");
                if (!gp.enters.empty() && en.seq <= gp.enters.back().seq)
                    throw Error("a pace report's \"enters\" is not in increasing order");
                if (en.t_ns > 0) gp.enters.push_back(en);  // 0: the recorder had no time
            }
        }
        p.groups.push_back(std::move(gp));
    }
    return p;
}

json pace_to(const Pace& p) {
    json groups = json::object();
    for (const auto& g : p.groups) {
        json enters = json::array();
        for (const auto& e : g.enters) enters.push_back(json::array({e.seq, std::uint64_t(e.t_ns)}));
        groups[g.group] = {{"entered", g.entered}, {"completed", g.completed}, {"enters", std::move(enters)}};
    }
    return {{"kind", "gangway-rank-pace"}, {"schema", 1}, {"rank", p.rank}, {"time_ns", std::uint64_t(p.t_ns)},
            {"groups", std::move(groups)}};
}

constexpr std::size_t kPaceValues = 8 + kMaxPaceGroups * (4 + 3 * kMaxEnters);

}  // namespace

const char* on_hang_name(OnHang h) noexcept {
    switch (h) {
        case OnHang::cancel: return "cancel";
        case OnHang::requeue: return "requeue";
        case OnHang::report: break;
    }
    return "report";
}

std::optional<OnHang> parse_on_hang(std::string_view s) noexcept {
    for (OnHang h : {OnHang::report, OnHang::cancel, OnHang::requeue})
        if (s == on_hang_name(h)) return h;
    return std::nullopt;
}

Pace parse_pace(std::string_view text) {
    return pace_from(bounded_parse(text, kMaxPaceBytes, kPaceValues, 5, "a pace report"));
}

std::string pace_json(const Pace& p) { return pace_to(p).dump(); }

std::string progress_json(const NodeProgress& p) {
    json paces = json::array(), samples = json::array(), pressure = json::array();
    for (const auto& x : p.paces) paces.push_back(pace_to(x));
    for (const auto& s : p.samples)
        samples.push_back(json::array({std::uint64_t(s.t_ns), s.rank, std::string(1, pm::state_letter(s.state)), s.cpu_ns,
                                       s.wait_ns, s.procs}));
    json links = json::array();
    for (const auto& l : p.links)
        links.push_back(json::array({l.name, l.tx_bytes, l.tx_errors, l.tx_dropped, l.qdisc_drops, l.qdisc_overlimits}));
    for (const auto& s : p.pressure)
        pressure.push_back(json::array({std::uint64_t(s.t_ns), s.cpu, s.memory, s.io, s.scope == pm::PressureScope::step ? "s" : "n"}));
    json j = {{"kind", "gangway-progress"}, {"schema", 1}, {"job", p.job}, {"step", p.step}, {"node", p.node}, {"uid", p.uid},
              {"time_ns", std::uint64_t(p.t_ns)}, {"interval_ns", std::uint64_t(p.interval_ns)}, {"on_hang", on_hang_name(p.on_hang)}, {"ranks", p.ranks},
              {"paces", std::move(paces)}, {"samples", std::move(samples)}, {"pressure", std::move(pressure)}, {"links", std::move(links)}};
    return j.dump();
}

NodeProgress parse_progress(std::string_view text) {
    constexpr std::size_t kValues =
        32 + kMaxProgressRanks * (1 + kPaceValues) + kMaxProgressSamples * 7 + kMaxProgressPressure * 6 + kMaxLinkQueues * 7;
    const json j = bounded_parse(text, kMaxProgressBytes, kValues, 7, "a progress record");
    want_kind(j, "gangway-progress", "a gangway progress record");
    NodeProgress p;
    p.job = std::uint32_t(unsigned_of(j, "job", 0xffffffffu, "a progress record"));
    p.step = std::uint32_t(unsigned_of(j, "step", 0xffffffffu, "a progress record"));
    p.uid = std::uint32_t(unsigned_of(j, "uid", 0xffffffffu, "a progress record"));
    p.t_ns = std::int64_t(unsigned_of(j, "time_ns", std::uint64_t(INT64_MAX), "a progress record"));
    p.interval_ns = std::int64_t(unsigned_of(j, "interval_ns", std::uint64_t(3600) * 1'000'000'000, "a progress record"));
    const auto hang = j.find("on_hang");
    if (hang == j.end() || !hang->is_string() || !parse_on_hang(hang->get<std::string>()))
        throw Error("a progress record's \"on_hang\" is not report, cancel or requeue");
    p.on_hang = *parse_on_hang(hang->get<std::string>());
    const auto node = j.find("node");
    if (node == j.end() || !node->is_string() || !slurm::is_node_name(node->get<std::string>()))
        throw Error("a progress record's \"node\" is not a node name");
    p.node = node->get<std::string>();
    const auto list = [&](const char* key, std::size_t max) -> const json& {
        const auto v = j.find(key);
        if (v == j.end() || !v->is_array() || v->size() > max)
            throw Error(std::string("a progress record's \"") + key + "\" is not a list of at most " + std::to_string(max));
        return *v;
    };
    for (const auto& r : list("ranks", kMaxProgressRanks)) {
        if (!r.is_number_unsigned() || r.get<std::uint64_t>() > 0xffffffffu) throw Error("a progress record's \"ranks\" holds something else than a rank");
        p.ranks.push_back(std::uint32_t(r.get<std::uint64_t>()));
    }
    for (const auto& x : list("paces", kMaxProgressRanks)) {
        Pace one = pace_from(x);
        if (std::find(p.ranks.begin(), p.ranks.end(), one.rank) == p.ranks.end())
            throw Error("a progress record holds the pace of rank " + std::to_string(one.rank) + ", not one of its node's ranks");
        p.paces.push_back(std::move(one));
    }
    for (const auto& s : list("samples", kMaxProgressSamples)) {
        if (!s.is_array() || s.size() != 6 || !s[2].is_string() || s[2].get<std::string>().size() != 1)
            throw Error("a progress record's \"samples\" holds something else than [t, rank, state, cpu, wait, procs]");
        pm::TaskSample t;
        t.t_ns = time_of(s[0], "a progress record's sample");
        for (int i : {1, 3, 4, 5})
            if (!s[i].is_number_unsigned()) throw Error("a progress record's sample holds something else than whole numbers");
        if (s[1].get<std::uint64_t>() > 0xffffffffu || s[5].get<std::uint64_t>() > 0xffffffffu)
            throw Error("a progress record's sample holds a rank or a process count out of range");
        t.rank = std::uint32_t(s[1].get<std::uint64_t>());
        const auto st = pm::parse_state_letter(s[2].get<std::string>()[0]);
        if (!st) throw Error("a progress record's sample holds an unknown task state");
        t.state = *st;
        t.cpu_ns = s[3].get<std::uint64_t>();
        t.wait_ns = s[4].get<std::uint64_t>();
        t.procs = std::uint32_t(s[5].get<std::uint64_t>());
        t.step = p.step;
        p.samples.push_back(t);
    }
    for (const auto& s : list("pressure", kMaxProgressPressure)) {
        if (!s.is_array() || s.size() != 5 || !s[4].is_string()) throw Error("a progress record's \"pressure\" holds something else than [t, cpu, memory, io, scope]");
        pm::PressureSample ps;
        ps.t_ns = time_of(s[0], "a progress record's pressure");
        std::uint32_t* fields[] = {&ps.cpu, &ps.memory, &ps.io};
        for (int i = 1; i <= 3; ++i) {
            if (!s[i].is_number_unsigned() || s[i].get<std::uint64_t>() > 10000) throw Error("a progress record's pressure is not 0 to 10000");
            *fields[i - 1] = std::uint32_t(s[i].get<std::uint64_t>());
        }
        ps.scope = s[4].get<std::string>() == "s" ? pm::PressureScope::step : pm::PressureScope::node;
        ps.step = p.step;
        p.pressure.push_back(ps);
    }
    if (j.contains("links"))  // an agent of before the links: none
        for (const auto& l : list("links", kMaxLinkQueues)) {
            if (!l.is_array() || l.size() != 6 || !l[0].is_string())
                throw Error("a progress record's \"links\" holds something else than [name, tx_bytes, tx_errors, tx_dropped, drops, overlimits]");
            LinkQueue q;
            q.name = l[0].get<std::string>();
            if (q.name.empty() || q.name.size() > 15 || printable_name(q.name, 15) != q.name || q.name.find(' ') != std::string::npos)
                throw Error("a progress record's link name \"" + excerpt(q.name) + "\" is not an interface's name");
            std::uint64_t* fields[] = {&q.tx_bytes, &q.tx_errors, &q.tx_dropped, &q.qdisc_drops, &q.qdisc_overlimits};
            for (int i = 1; i <= 5; ++i) {
                if (!l[i].is_number_unsigned()) throw Error("a progress record's link counters are not whole numbers");
                *fields[i - 1] = l[i].get<std::uint64_t>();
            }
            p.links.push_back(std::move(q));
        }
    return p;
}

}  // namespace gangway::watch
