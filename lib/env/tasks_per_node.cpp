#include "tasks_per_node.hpp"

#include <charconv>
#include <string>

#include "../base/error.hpp"
#include "hostlist.hpp"

namespace gangway {
namespace {

unsigned number(std::string_view s, std::string_view whole) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
        throw Error("per-node count list \"" + std::string(whole) + "\": \"" + std::string(s) +
                    "\" is not a count");
    return v;
}

}  // namespace

std::vector<unsigned> expand_counts(std::string_view expr) {
    std::vector<unsigned> out;
    std::size_t pos = 0;
    if (expr.empty()) throw Error("per-node count list is empty");
    while (pos <= expr.size()) {
        const auto comma = expr.find(',', pos);
        std::string_view item =
            expr.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
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
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return out;
}

}  // namespace gangway
