#include "drain_rules.hpp"

#include <algorithm>

#include "../base/text.hpp"

namespace gangway::slurm {

namespace {

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

}  // namespace

bool is_node_name(std::string_view n) {
    if (n.empty() || n.size() > kMaxNodeName || !alnum(n.front())) return false;
    return std::all_of(n.begin(), n.end(), [](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

std::string reason_text(std::string_view raw) {
    std::string out;
    for (const char c : raw) {
        if (out.size() == kMaxReasonText) break;
        if (alnum(c) || std::string_view(" ._:/,=()+-").find(c) != std::string_view::npos) out += c;
    }
    return out;
}

std::string job_drain_reason(std::string_view why, std::string_view job) {
    return "gangway: " + reason_text(why) + " (job " + std::string(job) + ")";
}

std::vector<std::string> drained_for_job(std::string_view show_nodes, std::string_view job) {
    const std::string mark = "(job " + std::string(job) + ")";
    std::vector<std::string> out;
    for_each_line(show_nodes, [&](std::string_view line, std::size_t) {
        if (!line.starts_with("NodeName=")) return;
        const auto r = line.find(" Reason=gangway: ");
        if (r == std::string_view::npos) return;
        std::string_view reason = line.substr(r);
        if (const auto b = reason.find(" ["); b != std::string_view::npos) reason = reason.substr(0, b);
        if (!trim_right(reason).ends_with(mark)) return;
        const auto e = line.find(' ');
        out.emplace_back(line.substr(9, e - 9));
    });
    return out;
}

bool drain_within_cap(const std::vector<std::string>& drained_before, const std::string& node, std::size_t max) {
    const bool again = std::find(drained_before.begin(), drained_before.end(), node) != drained_before.end();
    return drained_before.size() + (again ? 0 : 1) <= max;
}

std::string deciding_node(const std::vector<std::string>& job_nodes) { return job_nodes.empty() ? std::string() : job_nodes.front(); }

std::string request_prefix(std::string_view job) { return "gangway-drain." + std::string(job) + "."; }

std::string request_file(std::string_view job, std::string_view node) { return request_prefix(job) + std::string(node); }

std::string request_node(std::string_view name, std::string_view job) {
    const std::string prefix = request_prefix(job);
    if (!name.starts_with(prefix)) return {};
    std::string_view node = name.substr(prefix.size());
    if (const auto comma = node.find(','); comma != std::string_view::npos) {
        const std::string_view tag = node.substr(comma + 1);
        const bool hex16 = tag.size() == 16 && std::all_of(tag.begin(), tag.end(), [](char c) {
                               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                           });
        if (!hex16) return {};
        node = node.substr(0, comma);
    }
    return is_node_name(node) ? std::string(node) : std::string();
}

std::string request_reason(std::string_view text) {
    std::string out;
    bool found = false;
    for_each_line(text, [&](std::string_view line, std::size_t) {
        if (!found && line.starts_with("reason=")) {
            out = reason_text(line.substr(7));
            found = true;
        }
    });
    return out;
}

}  // namespace gangway::slurm
