#include "site_nodes.hpp"

#include <algorithm>

namespace gangway::fleet {

std::vector<std::string> names_not_in(const CheckRecord& rec, const std::vector<std::string>& site) {
    std::vector<std::string> out;
    auto look = [&](const std::string& n) {
        if (!n.empty() && !std::binary_search(site.begin(), site.end(), n)) out.push_back(n);
    };
    for (const auto& n : rec.check.nodes) look(n);
    // A report's figures come in runs of one node: a name is looked up once per run.
    const std::string* last = nullptr;
    for (const auto& f : rec.figures) {
        if (!last || *last != f.node) look(f.node), last = &f.node;
        look(f.peer);
    }
    for (const auto& f : rec.findings) look(f.node);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace gangway::fleet
