#include "slurm_nodes.hpp"

#include <algorithm>
#include <cctype>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "hostlist.hpp"

namespace gangway {
namespace {

void sort_unique(std::vector<std::string>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
            return false;
    return true;
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

std::vector<std::string> node_names_from_scontrol(std::string_view text) {
    std::vector<std::string> out;
    for_each_line(text, [&](std::string_view line, std::size_t) {
        if (out.size() >= kMaxSiteNodes || !line.starts_with("NodeName=")) return;
        line.remove_prefix(9);
        std::size_t e = 0;
        while (e < line.size() && !blank(line[e])) ++e;
        if (e) out.emplace_back(line.substr(0, e));
    });
    sort_unique(out);
    return out;
}

std::vector<std::string> node_names_from_slurm_conf(std::string_view text) {
    std::vector<std::string> out;
    for_each_line(text, [&](std::string_view line, std::size_t) {
        if (const auto h = line.find('#'); h != std::string_view::npos) line = line.substr(0, h);
        std::size_t b = 0;
        while (b < line.size() && blank(line[b])) ++b;
        line.remove_prefix(b);
        if (!starts_with_nocase(line, "NodeName=")) return;
        line.remove_prefix(9);
        std::size_t e = 0;
        while (e < line.size() && !blank(line[e])) ++e;
        const std::string_view list = line.substr(0, e);
        if (list.empty() || (list.size() == 7 && starts_with_nocase(list, "DEFAULT"))) return;
        if (out.size() >= kMaxSiteNodes) return;
        try {
            auto names = expand_hostlist(list);
            if (names.size() > kMaxSiteNodes - out.size()) names.resize(kMaxSiteNodes - out.size());
            for (auto& n : names) out.push_back(std::move(n));
        } catch (const Error&) {
        }
    });
    sort_unique(out);
    return out;
}

}  // namespace gangway
