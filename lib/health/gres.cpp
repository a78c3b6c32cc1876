#include "gres.hpp"

#include <cctype>
#include <vector>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "../env/hostlist.hpp"

namespace gangway::health {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// "Key=Value" words of a line without its comment; keys in lower case (SLURM's are case-blind).
std::vector<std::pair<std::string, std::string>> words(std::string_view line) {
    if (auto h = line.find('#'); h != std::string_view::npos) line = line.substr(0, h);
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& w : split_nonempty(line, ' ')) {
        for (const auto& t : split_nonempty(w, '\t')) {
            const auto eq = t.find('=');
            if (eq == std::string::npos) out.push_back({lower(t), ""});
            else out.push_back({lower(t.substr(0, eq)), t.substr(eq + 1)});
        }
    }
    return out;
}

// Names a file may make us expand, in all: a slurm.conf of a 10,000-node
// cluster names each node once; a file of 1 MiB of "n[1-65536]" would
// otherwise cost minutes. Past it, nothing more matches.
constexpr std::size_t kExpandBudget = std::size_t(1) << 20;

// The names of a hostlist, within what is left of the budget; none when it is
// malformed (slurmctld would have refused it) or the budget is spent.
std::vector<std::string> expand(const std::string& list, std::size_t& budget) {
    if (budget == 0) return {};
    try {
        auto names = expand_hostlist(list);
        if (names.size() > budget) {
            budget = 0;
            return {};
        }
        budget -= names.size();
        return names;
    } catch (const Error&) {
        return {};
    }
}

bool names_node(const std::string& list, const std::string& node, std::size_t& budget) {
    for (const auto& n : expand(list, budget))
        if (n == node) return true;
    return false;
}

// The items of a Gres= value, split at commas outside parentheses ("gpu:8(S:0-1),nic:1").
std::vector<std::string> gres_items(std::string_view v) {
    std::vector<std::string> out;
    std::string cur;
    int depth = 0;
    for (char c : v) {
        if (c == '(') ++depth;
        if (c == ')') --depth;
        if (c == ',' && depth == 0) {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

// One Gres item: "gpu", "gpu:8", "gpu:h100:8", "gpu:h100:8(S:0-1)"; count 0 for another gres.
struct Item {
    unsigned count = 0;
    std::string type;
};
std::optional<Item> gpu_item(std::string item) {
    if (auto p = item.find('('); p != std::string::npos) item.erase(p);
    const auto parts = split_keep_empty(item, ':');
    if (parts.empty() || lower(parts[0]) != "gpu") return Item{};
    if (parts.size() == 1) return Item{1, ""};
    const auto n = parse_uint<unsigned>(parts.back());
    if (parts.size() == 2) return n ? Item{*n, ""} : Item{1, parts[1]};
    if (parts.size() == 3 && n) return Item{*n, parts[1]};
    return std::nullopt;
}

// Sums the items; the type only when they all name one.
void add(GresGpus& g, const Item& it, bool& mixed) {
    g.count = g.count.value_or(0) + it.count;
    if (it.count == 0) return;
    if (g.type.empty() && !mixed) g.type = it.type;
    else if (g.type != it.type) {
        mixed = true;
        g.type.clear();
    }
}

}  // namespace

GresGpus gres_from_slurm_conf(std::string_view text, const std::string& node) {
    std::size_t budget = kExpandBudget;
    std::string default_gres;
    GresGpus out;
    for (const auto& line : split_keep_empty(text, '\n')) {
        const auto w = words(line);
        if (w.empty() || w[0].first != "nodename") continue;
        std::string gres;
        bool has_gres = false;
        for (const auto& [k, v] : w)
            if (k == "gres") {
                gres = v;
                has_gres = true;
            }
        if (lower(w[0].second) == "default") {
            if (has_gres) default_gres = gres;
            continue;
        }
        if (!names_node(w[0].second, node, budget)) continue;
        if (!has_gres) gres = default_gres;
        GresGpus g;
        g.source = "slurm.conf Gres=";
        bool mixed = false, ok = true;
        for (const auto& item : gres_items(gres)) {
            if (item.empty()) continue;
            const auto it = gpu_item(item);
            if (!it) ok = false;
            else if (it->count) add(g, *it, mixed);
        }
        if (ok) {
            if (!g.count) g.count = 0u;  // a node line without gpus: SLURM expects none
            out = g;
        }
    }
    return out;
}

GresGpus gres_from_gres_conf(std::string_view text, const std::string& node) {
    std::size_t budget = kExpandBudget;
    GresGpus out;
    out.source = "gres.conf";
    bool mixed = false;
    for (const auto& line : split_keep_empty(text, '\n')) {
        const auto w = words(line);
        std::string name, type, file, count, nodes;
        bool has_nodes = false;
        for (const auto& [k, v] : w) {
            if (k == "name") name = v;
            else if (k == "type") type = v;
            else if (k == "file" || k == "files") file = v;
            else if (k == "count") count = v;
            else if (k == "nodename") {
                nodes = v;
                has_nodes = true;
            }
        }
        if (lower(name) != "gpu") continue;
        if (has_nodes && !names_node(nodes, node, budget)) continue;
        Item it{1, type};
        if (const auto n = parse_uint<unsigned>(count)) it.count = *n;
        else if (!file.empty()) {
            const auto files = expand(file, budget);
            if (files.empty()) continue;
            it.count = static_cast<unsigned>(files.size());
        }
        add(out, it, mixed);
    }
    return out;
}

bool model_matches(std::string_view name, std::string_view expected) {
    auto squash = [](std::string_view s) {
        std::string out;
        for (char c : s)
            if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return out;
    };
    const auto e = squash(expected);
    return !e.empty() && squash(name).find(e) != std::string::npos;
}

}  // namespace gangway::health
