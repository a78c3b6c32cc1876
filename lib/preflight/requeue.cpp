#include "requeue.hpp"

#include <string_view>
#include <unordered_set>

#include "../base/error.hpp"
#include "../env/scontrol_text.hpp"
#include "../env/hostlist.hpp"

namespace gangway::preflight {

std::vector<std::string> requeue_exclusions(std::string_view show_job, const std::vector<std::string>& bad) {
    const std::string excl = scontrol_field(show_job, "ExcNodeList");
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
