#include "tasks_per_node.hpp"

#include <string>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "hostlist.hpp"

namespace gangway {
namespace {

Error bad(std::string_view whole, const std::string& why) {
    return Error("per-node count list \"" + excerpt(whole) + "\": " + why);
}

unsigned number(std::string_view s, std::string_view whole) {
    const auto v = parse_uint(s);
    if (!v) throw bad(whole, "\"" + excerpt(s) + "\" is not a count");
    return *v;
}

}  // namespace

std::vector<unsigned> expand_counts(std::string_view expr) {
    std::vector<unsigned> out;
    if (expr.empty()) throw Error("per-node count list is empty");
    // Item by item, in place: an empty item is not a count.
    for (std::size_t pos = 0;;) {
        const auto comma = expr.find(',', pos);
        std::string_view item = expr.substr(pos, comma == std::string_view::npos ? comma : comma - pos);
        unsigned repeat = 1;
        if (const auto paren = item.find('('); paren != std::string_view::npos) {
            if (item.size() < paren + 4 || item[paren + 1] != 'x' || item.back() != ')')
                throw bad(expr, "\"" + excerpt(item) + "\" is not of the form N(xM)");
            repeat = number(item.substr(paren + 2, item.size() - paren - 3), expr);
            item = item.substr(0, paren);
        }
        const unsigned count = number(item, expr);
        if (count > kMaxTasksPerNode)
            throw bad(expr, std::to_string(count) + " tasks on a node is more than " + std::to_string(kMaxTasksPerNode) +
                                ", SLURM's most (MaxTasksPerNode); was the variable overwritten?");
        if (repeat == 0) throw bad(expr, "bad repeat count");
        if (repeat > kMaxHostlistHosts - out.size())
            throw bad(expr, "more than " + std::to_string(kMaxHostlistHosts) + " nodes");
        out.insert(out.end(), repeat, count);
        if (comma == std::string_view::npos) return out;
        pos = comma + 1;
    }
}

}  // namespace gangway
