#include "requeue.hpp"

#include <string_view>
#include <unordered_set>

#include "../base/error.hpp"
#include "../env/hostlist.hpp"

namespace gangway::preflight {

std::vector<std::string> requeue_exclusions(std::string_view show_job, const std::vector<std::string>& bad) {
    constexpr std::string_view key = "ExcNodeList=";
    std::string excl;
    if (const auto p = show_job.find(key); p != std::string_view::npos) {
        const auto e = show_job.find_first_of(" \n", p);
        excl = show_job.substr(p + key.size(), e == std::string_view::npos ? std::string_view::npos : e - p - key.size());
        if (excl == "(null)") excl.clear();
    }
    std::vector<std::string> names;
    try {
        if (!excl.empty()) names = expand_hostlist(excl);
    } catch (const Error&) {
        names.clear();
    }
    // A set of what is listed, not a search of the list for each bad node:
    // both may hold 65,536 names, and that search was their product.
    names.reserve(names.size() + bad.size());  // first: no reallocation moves what `listed` views
    std::unordered_set<std::string_view> listed(names.begin(), names.end());
    for (const auto& b : bad)
        if (listed.insert(b).second) names.push_back(b);
    return names;
}

}  // namespace gangway::preflight
