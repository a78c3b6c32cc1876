#include "tasks_per_node.hpp"

#include <string>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "hostlist.hpp"

namespace gangway {
namespace {

unsigned number(std::string_view s, std::string_view whole) {
    const auto v = parse_uint(s);
    if (!v)
        throw Error("per-node count list \"" + std::string(whole) + "\": \"" + std::string(s) +
                    "\" is not a count");
    return *v;
}

}  // namespace

std::vector<unsigned> expand_counts(std::string_view expr) {
    std::vector<unsigned> out;
    if (expr.empty()) throw Error("per-node count list is empty");
    for (const std::string& field : split_keep_empty(expr, ',')) {  // an empty item is not a count
        std::string_view item = field;
        unsigned repeat = 1;
        if (const auto paren = item.find('('); paren != std::string_view::npos) {
            if (item.size() < paren + 4 || item[paren + 1] != 'x' || item.back() != ')')
                throw Error("per-node count list \"" + std::string(expr) + "\": \"" + std::string(item) +
                            "\" is not of the form N(xM)");
            repeat = number(item.substr(paren + 2, item.size() - paren - 3), expr);
            item = item.substr(0, paren);
        }
        const unsigned count = number(item, expr);
        if (repeat == 0 || out.size() + repeat > kMaxHostlistHosts)
            throw Error("per-node count list \"" + std::string(expr) + "\": bad repeat count");
        out.insert(out.end(), repeat, count);
    }
    return out;
}

}  // namespace gangway
