#include "render.hpp"

#include <cstdio>

#include "../base/text.hpp"

namespace gangway::health {
namespace {

// A figure that is a number goes into JSON as one, so a store can compare it.
std::string json_value(const std::string& s) {
    if (!s.empty() && parse_double(s) && s.find_first_not_of("0123456789.-") == std::string::npos) return s;
    return "\"" + preflight::json_escape(s) + "\"";
}

std::string q(const std::string& s) { return "\"" + preflight::json_escape(s) + "\""; }

const char* mark(const Record& r) {
    if (r.status != Status::failed) return to_string(r.status);
    return r.confirmed ? "FAILED" : "failed once";
}

}  // namespace

std::string render_table(const Run& r) {
    std::string out;
    char b[512];
    std::snprintf(b, sizeof b, "gangway node-check on %s (%s, %.2f s): %s\n", r.node.c_str(), r.level.c_str(), r.seconds,
                  to_string(r.verdict));
    out += b;
    for (const auto& s : r.stages) {
        std::snprintf(b, sizeof b, "  stage %-8s %-8s %6.2f s  %s\n", s.name.c_str(), to_string(s.status), s.seconds, s.detail.c_str());
        out += b;
    }
    std::snprintf(b, sizeof b, "  %-12s %-34s %-14s %-10s %s\n", "check", "device", "figure", "expected", "status");
    out += b;
    for (const auto& rec : r.records) {
        const std::string fig = rec.figure + (rec.unit.empty() || rec.figure.empty() ? "" : " " + rec.unit);
        std::snprintf(b, sizeof b, "  %-12s %-34s %-14s %-10s %s%s%s\n", to_string(rec.check), rec.device.c_str(), fig.c_str(),
                      rec.expected.c_str(), mark(rec), rec.reason.empty() ? "" : ": ", rec.reason.c_str());
        out += b;
    }
    return out;
}

std::string render_json(const Run& r) {
    std::string out = "{\"node\": " + q(r.node) + ", \"level\": " + q(r.level) + ", \"time\": " + std::to_string(r.time);
    char b[64];
    std::snprintf(b, sizeof b, ", \"seconds\": %.3f", r.seconds);
    out += b;
    out += ", \"verdict\": " + q(to_string(r.verdict)) + ",\n \"stages\": [";
    for (std::size_t i = 0; i < r.stages.size(); ++i) {
        const auto& s = r.stages[i];
        std::snprintf(b, sizeof b, "%.3f", s.seconds);
        out += std::string(i ? ",\n  " : "\n  ") + "{\"name\": " + q(s.name) + ", \"status\": " + q(to_string(s.status)) +
               ", \"seconds\": " + b + ", \"detail\": " + q(s.detail) + "}";
    }
    out += "],\n \"records\": [";
    for (std::size_t i = 0; i < r.records.size(); ++i) {
        const auto& rec = r.records[i];
        out += std::string(i ? ",\n  " : "\n  ") + "{\"node\": " + q(r.node) + ", \"check\": " + q(to_string(rec.check)) +
               ", \"device\": " + q(rec.device) + ", \"figure\": " + json_value(rec.figure) + ", \"unit\": " + q(rec.unit) +
               ", \"expected\": " + json_value(rec.expected) + ", \"status\": " + q(to_string(rec.status)) +
               ", \"confirmed\": " + (rec.confirmed ? "true" : "false") + ", \"reason\": " + q(rec.reason) + "}";
    }
    out += "]}\n";
    return out;
}

std::string failure_line(const std::vector<Record>& records, bool confirmed_only) {
    return join(failed(records, confirmed_only), "; ", [](const Record* r) { return r->reason; });
}

std::string unfinished_line(const std::vector<preflight::StageResult>& stages) {
    std::vector<std::string> parts;
    for (const auto& s : stages)
        if (s.status == preflight::StageStatus::aborted) parts.push_back(s.name + ": " + s.detail);
    return join(parts, "; ");
}

}  // namespace gangway::health
