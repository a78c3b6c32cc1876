#include "render.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "../base/text.hpp"

namespace gangway::health {
namespace {

const char* mark(const Record& r) {
    if (r.status != Status::failed) return to_string(r.status);
    return r.confirmed ? "FAILED" : "failed once";
}

}  // namespace

std::string render_table(const Report& r) {
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

std::string failure_line(const std::vector<Record>& records, bool confirmed_only) {
    return join(failed(records, confirmed_only), "; ", [](const Record* r) { return r->reason; });
}

std::string unjudged_line(const std::vector<Record>& records) {
    std::vector<std::string> parts;
    for (const auto& r : records)
        if (r.check == Check::gpu_xid && r.status == Status::skipped) parts.push_back(r.reason);
    return join(parts, "; ");
}

std::string unfinished_line(const std::vector<preflight::StageResult>& stages) {
    std::vector<std::string> parts;
    for (const auto& s : stages)
        if (s.status == preflight::StageStatus::aborted) parts.push_back(s.name + ": " + s.detail);
    return join(parts, "; ");
}

}  // namespace gangway::health
