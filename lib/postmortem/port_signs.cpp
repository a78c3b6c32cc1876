#include "port_signs.hpp"

#include <string>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "../health/judge.hpp"

namespace gangway::postmortem {

PortSnapshot port_snapshot(const std::vector<health::PortFacts>& ports) {
    PortSnapshot s = health::counter_values(ports);
    for (const auto& f : ports) s[verbs::port_name(f.port) + " active"] = f.port.state == verbs::kPortActive ? 1 : 0;
    return s;
}

std::string render_port_snapshot(const PortSnapshot& s) {
    std::string out;
    for (const auto& [k, v] : s) out += k + " " + std::to_string(v) + "\n";
    return out;
}

PortSnapshot parse_port_snapshot(std::string_view text) {
    PortSnapshot s;
    for_each_line(text, [&](std::string_view line, std::size_t n) {
        if (n > kMaxSnapshotLines) throw Error("port snapshot: more than " + std::to_string(kMaxSnapshotLines) + " lines");
        // "HCA/PORT NAME VALUE": the key is the text before the last blank.
        const auto blank = line.rfind(' ');
        const auto value = blank == std::string_view::npos ? std::nullopt : parse_uint<std::uint64_t>(line.substr(blank + 1));
        if (!value || blank == 0 || line.substr(0, blank).find(' ') == std::string_view::npos)
            throw Error("port snapshot: line " + std::to_string(n) + " is not \"HCA/PORT NAME VALUE\"");
        s[std::string(line.substr(0, blank))] = *value;
    });
    return s;
}

std::vector<Evidence> port_signs(const PortSnapshot& start, const std::vector<health::PortFacts>& now,
                                 const health::SiteConf& site, std::int64_t t_ns) {
    std::vector<Evidence> out;
    auto add = [&](Sign sign, std::string device, std::int64_t code, std::string text) {
        if (out.size() >= kMaxEvidence) return;
        Evidence e;
        e.t_ns = t_ns;
        e.sign = sign;
        // Names from sysfs: printable and bounded as the record's fields are (record.hpp).
        e.device = printable_name(device, 64);
        e.code = code;
        e.text = printable_name(text, kMaxEvidenceText - 4);
        out.push_back(std::move(e));
    };
    for (const auto& f : now) {
        const std::string name = verbs::port_name(f.port);
        const auto was = start.find(name + " active");
        if (was != start.end() && was->second == 1 && f.port.state != verbs::kPortActive)
            add(Sign::link_down, name, 0,
                name + " was ACTIVE at the job's start and is " + (f.port.state_name.empty() ? "not" : f.port.state_name) +
                    " at its end");
    }
    // The node check's rule and allowances: a port's counter grown past them.
    for (const auto& r : health::judge_counters(now, &start, site)) {
        if (r.status != health::Status::failed) continue;
        const auto blank = r.device.find(' ');
        const std::string port = r.device.substr(0, blank), counter = r.device.substr(blank + 1);
        const auto grew = parse_uint<std::uint64_t>(r.figure).value_or(0);
        add(Sign::ib_errors, port, static_cast<std::int64_t>(grew),
            port + " " + counter + " +" + r.figure + " during the job (node-check.conf allows " + r.expected.substr(3) + ")");
    }
    return out;
}

}  // namespace gangway::postmortem
