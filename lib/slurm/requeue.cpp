#include "requeue.hpp"

#include <string_view>
#include <unordered_set>

#include "../base/error.hpp"
#include "../env/hostlist.hpp"

namespace gangway::slurm {

std::vector<std::string> requeue_exclusions(std::string_view excluded, const std::vector<std::string>& bad) {
    std::vector<std::string> names;
    try {
        if (!excluded.empty() && excluded != "(null)") names = expand_hostlist(excluded);
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

}  // namespace gangway::slurm
