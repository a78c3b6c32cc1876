#include "placement_format.hpp"

#include <algorithm>
#include <cstdio>

#include "../base/text.hpp"

namespace gangway {

namespace {

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

}  // namespace

std::string format_placement_json(const Placement& plan) {
    std::string out = "{\"tasks\":[";
    bool first = true;
    for (const auto& t : plan.tasks) {
        out += first ? "" : ",";
        first = false;
        out += "{\"local_rank\":" + std::to_string(t.local_rank);
        out += ",\"gpus\":[" + join(t.gpus, ",", json_string) + "]";
        out += ",\"nics\":[" + join(t.nics, ",", [](const NicChoice& n) { return json_string(n.name); }) + "]";
        out += ",\"cpus\":[" + join(t.cpus, ",", [](unsigned c) { return std::to_string(c); }) + "]";
        out += ",\"numa\":" + (t.numa < 0 ? std::string("null") : std::to_string(t.numa));
        out += ",\"distance\":" + (t.distance ? json_string(to_string(*t.distance)) : std::string("null")) + "}";
    }
    out += "],\"nccl_ib_hca\":" + json_string(plan.nccl_ib_hca) + "}";
    return out;
}

std::string format_placement_table(const Placement& plan) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"task", "GPU", "NIC", "netdev", "NUMA", "cores", "PCIe distance"});
    for (const auto& t : plan.tasks) {
        auto dash = [](std::string s) { return s.empty() ? std::string("-") : s; };
        rows.push_back({
            std::to_string(t.local_rank),
            dash(join(t.gpus, ",")),
            dash(join(t.nics, ",", [](const NicChoice& n) { return n.name + ":" + std::to_string(n.port); })),
            dash(join(t.nics, ",", [](const NicChoice& n) { return n.netdev.empty() ? std::string("-") : n.netdev; })),
            t.numa < 0 ? std::string("-") : std::to_string(t.numa),
            dash(format_cpu_list(t.cpus)),
            t.distance ? to_string(*t.distance) : "-",
        });
    }
    std::vector<size_t> width(rows[0].size(), 0);
    for (const auto& r : rows)
        for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (size_t i = 0; i < r.size(); ++i) {
            line += r[i];
            if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
        }
        out += line + "\n";
    }
    out += "NCCL_IB_HCA=" + plan.nccl_ib_hca + "\n";
    return out;
}

}  // namespace gangway
