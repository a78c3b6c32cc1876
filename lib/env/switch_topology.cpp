#include "switch_topology.hpp"

#include <algorithm>
#include <cctype>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "hostlist.hpp"

namespace gangway {
namespace {

// One switch or block as the file states it, before any name is expanded.
struct Def {
    std::string name, children, nodes;
    std::size_t line = 0;
};

struct Parsed {
    TopologyKind kind = TopologyKind::Tree;
    bool kind_known = false;
    std::vector<Def> defs;
};

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

std::string where(std::string_view file, std::size_t line) { return std::string(file) + " line " + std::to_string(line); }

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The expanded names of one expression, counted against the file's bound.
std::vector<std::string> expand_counted(const std::string& expr, std::size_t& total, std::string_view file,
                                        std::size_t line) {
    std::vector<std::string> names;
    try {
        names = expand_hostlist(expr);
    } catch (const Error& e) {
        throw Error(where(file, line) + ": " + e.what());
    }
    total += names.size();
    if (total > kMaxTopologyNames)
        throw Error(where(file, line) + ": the file names more than " + std::to_string(kMaxTopologyNames) +
                    " switches and nodes; gangway reads at most that many (SLURM stops at 65,536 nodes)");
    return names;
}

SwitchTopology build(const Parsed& p, std::string_view file) {
    if (p.defs.empty())
        throw Error(std::string(file) + " defines no switch and no block; rank_order=topology needs SLURM's "
                    "topology/tree or topology/block description (or use rank_order=slurm)");
    SwitchTopology t;
    t.kind = p.kind;
    std::size_t total = 0;
    std::vector<std::vector<std::string>> nodes(p.defs.size());
    for (std::size_t i = 0; i < p.defs.size(); ++i)
        if (!p.defs[i].nodes.empty()) nodes[i] = expand_counted(p.defs[i].nodes, total, file, p.defs[i].line);
    if (p.kind == TopologyKind::Block) {
        for (std::size_t i = 0; i < p.defs.size(); ++i) {
            const auto leaf = static_cast<std::uint32_t>(t.leaves.size());
            t.leaves.push_back(p.defs[i].name);
            t.leaf_parent.emplace_back();
            for (auto& n : nodes[i]) t.leaf_of.emplace(std::move(n), leaf);
        }
        return t;
    }
    std::unordered_map<std::string, std::uint32_t> index;
    index.reserve(p.defs.size());
    for (std::size_t i = 0; i < p.defs.size(); ++i)
        if (!index.emplace(p.defs[i].name, static_cast<std::uint32_t>(i)).second)
            throw Error(where(file, p.defs[i].line) + ": switch \"" + excerpt(p.defs[i].name) +
                        "\" is defined twice; give each SwitchName one line");
    std::vector<std::vector<std::uint32_t>> children(p.defs.size());
    std::vector<std::int64_t> parent(p.defs.size(), -1);
    for (std::size_t i = 0; i < p.defs.size(); ++i) {
        if (p.defs[i].children.empty()) continue;
        for (const auto& c : expand_counted(p.defs[i].children, total, file, p.defs[i].line)) {
            const auto it = index.find(c);
            if (it == index.end())
                throw Error(where(file, p.defs[i].line) + ": switch \"" + excerpt(p.defs[i].name) +
                            "\" names child switch \"" + excerpt(c) + "\" that no line defines");
            children[i].push_back(it->second);
            if (parent[it->second] < 0) parent[it->second] = static_cast<std::int64_t>(i);
        }
    }
    // Depth first from each root in the file's order (then from whatever a
    // cycle left unreached), children in the order listed: leaves under one
    // spine come out side by side. An explicit stack: no recursion on input.
    std::vector<char> seen(p.defs.size(), 0);
    std::vector<std::uint32_t> stack;
    auto walk = [&](std::uint32_t root) {
        stack.push_back(root);
        while (!stack.empty()) {
            const std::uint32_t s = stack.back();
            stack.pop_back();
            if (seen[s]) continue;
            seen[s] = 1;
            if (!nodes[s].empty()) {
                const auto leaf = static_cast<std::uint32_t>(t.leaves.size());
                t.leaves.push_back(p.defs[s].name);
                t.leaf_parent.push_back(parent[s] < 0 ? std::string() : p.defs[static_cast<std::size_t>(parent[s])].name);
                for (auto& n : nodes[s]) t.leaf_of.emplace(std::move(n), leaf);
            }
            for (auto it = children[s].rbegin(); it != children[s].rend(); ++it)
                if (!seen[*it]) stack.push_back(*it);
        }
    };
    for (std::uint32_t i = 0; i < p.defs.size(); ++i)
        if (parent[i] < 0) walk(i);
    for (std::uint32_t i = 0; i < p.defs.size(); ++i)
        if (!seen[i]) walk(i);
    if (t.leaves.empty())
        throw Error(std::string(file) + " has switches but none with Nodes=; rank_order=topology needs the leaf "
                    "switches' nodes (or use rank_order=slurm)");
    return t;
}

void set_kind(Parsed& p, TopologyKind k, std::string_view file, std::size_t line) {
    if (p.kind_known && p.kind != k)
        throw Error(where(file, line) + ": both switches (tree) and blocks in one topology; SLURM uses one plugin, "
                    "keep one kind");
    p.kind = k;
    p.kind_known = true;
}

// A name as SLURM takes it: not empty, no blank, at most a host name's length.
void check_name(std::string_view name, std::string_view what, std::string_view file, std::size_t line) {
    if (name.empty() || name.size() > kMaxHostNameLength)
        throw Error(where(file, line) + ": " + std::string(what) + " \"" + excerpt(name) +
                    "\" is not a name (1 to 255 characters)");
}

}  // namespace

SwitchTopology parse_topology_conf(std::string_view text) {
    constexpr std::string_view file = "topology.conf";
    Parsed p;
    std::size_t line_no = 0, pos = 0;
    while (pos < text.size()) {
        const std::size_t nl = text.find('\n', pos);
        std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        ++line_no;
        if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        Def d;
        d.line = line_no;
        bool is_switch = false, is_block = false, has_links = false;
        std::size_t i = 0;
        while (i < line.size()) {
            while (i < line.size() && blank(line[i])) ++i;
            if (i >= line.size()) break;
            std::size_t j = i;
            while (j < line.size() && !blank(line[j])) ++j;
            const std::string_view word = line.substr(i, j - i);
            i = j;
            const auto eq = word.find('=');
            if (eq == std::string_view::npos || eq == 0)
                throw Error(where(file, line_no) + ": \"" + excerpt(word) +
                            "\" is not Key=Value; topology.conf lines are SwitchName=... Switches=... Nodes=... "
                            "or BlockName=... Nodes=...");
            const std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
            if (iequals(key, "SwitchName")) {
                check_name(value, "SwitchName", file, line_no);
                d.name = value;
                is_switch = true;
            } else if (iequals(key, "BlockName")) {
                check_name(value, "BlockName", file, line_no);
                d.name = value;
                is_block = true;
            } else if (iequals(key, "Switches")) {
                d.children = value;
                has_links = true;
            } else if (iequals(key, "Nodes")) {
                d.nodes = value;
                has_links = true;
            } else if (iequals(key, "LinkSpeed") || iequals(key, "BlockSizes")) {
                // The scheduler's business, not the order's.
            } else {
                throw Error(where(file, line_no) + ": unknown key \"" + excerpt(key) +
                            "\"; gangway reads SwitchName, Switches, Nodes, LinkSpeed, BlockName, BlockSizes");
            }
        }
        if (is_switch && is_block)
            throw Error(where(file, line_no) + ": SwitchName and BlockName on one line; give each its own line");
        if (!is_switch && !is_block) {
            if (has_links)
                throw Error(where(file, line_no) + ": Switches= or Nodes= without SwitchName= or BlockName= before it");
            continue;
        }
        if (is_block && !d.children.empty())
            throw Error(where(file, line_no) + ": a block has Nodes=, not Switches=");
        set_kind(p, is_switch ? TopologyKind::Tree : TopologyKind::Block, file, line_no);
        p.defs.push_back(std::move(d));
    }
    return build(p, file);
}

namespace {

// One line of the YAML subset: its indentation, whether it is a list item
// ("- "), and the key and value of its one mapping pair (or a bare scalar).
struct YamlLine {
    std::size_t indent = 0;
    bool item = false;
    std::string_view key, value;
    bool has_key = false;
};

std::string_view trim(std::string_view s) {
    while (!s.empty() && blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && blank(s.back())) s.remove_suffix(1);
    return s;
}

// A scalar without its quotes; anything YAML would make more than a string is refused.
std::string_view scalar(std::string_view v, std::size_t line) {
    constexpr std::string_view file = "topology.yaml";
    if (v.size() >= 2 && ((v.front() == '"' && v.back() == '"') || (v.front() == '\'' && v.back() == '\'')))
        return v.substr(1, v.size() - 2);
    if (!v.empty() && (v.front() == '&' || v.front() == '*' || v.front() == '{' || v.front() == '|' ||
                       v.front() == '>' || v.front() == '!' || v.front() == '"' || v.front() == '\''))
        throw Error(where(file, line) + ": \"" + excerpt(v) +
                    "\" uses YAML gangway does not read (anchors, aliases, tags, flow mappings, block scalars); "
                    "write plain values as in topology.yaml(5)");
    return v;
}

YamlLine split_yaml(std::string_view raw, std::size_t line) {
    constexpr std::string_view file = "topology.yaml";
    YamlLine y;
    // A comment starts at '#' at the line's start or after a blank (YAML's rule), outside quotes.
    char quote = 0;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        const char c = raw[i];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '#' && (i == 0 || blank(raw[i - 1]))) {
            raw = raw.substr(0, i);
            break;
        } else if (c == '\t' && raw.find_first_not_of(" \t") > i) {
            throw Error(where(file, line) + ": a tab in the indentation; YAML indents with spaces");
        }
    }
    while (y.indent < raw.size() && raw[y.indent] == ' ') ++y.indent;
    std::string_view s = trim(raw.substr(y.indent));
    if (s == "-" || s.starts_with("- ")) {
        y.item = true;
        s = trim(s.substr(1));
        y.indent += 2;
    }
    // "key: value" or "key:"; a colon inside a plain value (none in SLURM's names) is not looked at.
    std::size_t colon = std::string_view::npos;
    if (!s.empty() && s.front() != '"' && s.front() != '\'' && s.front() != '[') {
        for (std::size_t i = 0; i < s.size(); ++i)
            if (s[i] == ':' && (i + 1 == s.size() || blank(s[i + 1]))) {
                colon = i;
                break;
            }
    }
    if (colon != std::string_view::npos) {
        y.has_key = true;
        y.key = trim(s.substr(0, colon));
        y.value = trim(s.substr(colon + 1));
    } else {
        y.value = s;
    }
    return y;
}

bool yaml_true(std::string_view v) { return v == "true" || v == "True" || v == "TRUE" || v == "yes"; }

}  // namespace

SwitchTopology parse_topology_yaml(std::string_view text) {
    constexpr std::string_view file = "topology.yaml";
    // Each topology's definitions, gathered line by line; then the one SLURM
    // uses by default is built.
    struct Topo {
        std::string name;
        bool cluster_default = false, flat = false;
        Parsed parsed;
        std::size_t line = 0;
    };
    std::vector<Topo> topos;
    enum class Section { None, Tree, Switches, Block, BlockSizes, Blocks } section = Section::None;
    std::size_t line_no = 0, pos = 0;
    const auto known = " (topology.yaml(5): topology, cluster_default, flat, tree: switches: switch/children/nodes, "
                       "block: block_sizes/blocks: block/nodes)";
    while (pos < text.size()) {
        const std::size_t nl = text.find('\n', pos);
        const std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        ++line_no;
        const YamlLine y = split_yaml(raw, line_no);
        if (!y.has_key) {
            if (y.value.empty() && !y.item) continue;
            if (y.value == "---" || y.value == "...") continue;
            // A bare list item: only block_sizes has those (numbers).
            if (y.item && section == Section::BlockSizes && parse_uint<std::uint32_t>(scalar(y.value, line_no))) continue;
            throw Error(where(file, line_no) + ": \"" + excerpt(trim(raw)) + "\" is not a key: value line gangway reads" +
                        known);
        }
        const std::string_view key = y.key;
        const std::string_view value = scalar(y.value, line_no);
        if (key == "topology") {
            if (!y.item) throw Error(where(file, line_no) + ": topology: starts a list item (\"- topology: NAME\")");
            topos.push_back({});
            topos.back().name = value;
            topos.back().line = line_no;
            section = Section::None;
            continue;
        }
        if (topos.empty())
            throw Error(where(file, line_no) + ": \"" + excerpt(key) + "\" before the first \"- topology: NAME\"");
        Topo& t = topos.back();
        if (key == "cluster_default") {
            t.cluster_default = yaml_true(value);
        } else if (key == "flat") {
            t.flat = yaml_true(value);
            section = Section::None;
        } else if (key == "tree" && value.empty()) {
            set_kind(t.parsed, TopologyKind::Tree, file, line_no);
            section = Section::Tree;
        } else if (key == "switches" && value.empty() && section == Section::Tree) {
            section = Section::Switches;
        } else if (key == "block" && value.empty() && !y.item) {
            set_kind(t.parsed, TopologyKind::Block, file, line_no);
            section = Section::Block;
        } else if (key == "block_sizes" && (section == Section::Block || section == Section::BlockSizes ||
                                            section == Section::Blocks)) {
            section = Section::BlockSizes;  // the scheduler's business, as a list or inline
        } else if (key == "blocks" && value.empty() &&
                   (section == Section::Block || section == Section::BlockSizes)) {
            section = Section::Blocks;
        } else if (y.item && ((key == "switch" && section == Section::Switches) ||
                              (key == "block" && section == Section::Blocks))) {
            check_name(value, key, file, line_no);
            Def d;
            d.name = value;
            d.line = line_no;
            t.parsed.defs.push_back(std::move(d));
        } else if (!y.item && (key == "children" || key == "nodes") && !t.parsed.defs.empty() &&
                   (section == Section::Switches || section == Section::Blocks)) {
            if (key == "children" && section == Section::Blocks)
                throw Error(where(file, line_no) + ": a block has nodes:, not children:");
            (key == "children" ? t.parsed.defs.back().children : t.parsed.defs.back().nodes) = value;
        } else {
            throw Error(where(file, line_no) + ": \"" + excerpt(key) + "\" is not where gangway expects it" + known);
        }
    }
    if (topos.empty()) throw Error(std::string(file) + " has no \"- topology: NAME\" entry");
    const auto chosen = std::find_if(topos.begin(), topos.end(), [](const Topo& t) { return t.cluster_default; });
    const Topo& t = chosen == topos.end() ? topos.front() : *chosen;
    if (t.flat)
        throw Error(std::string(file) + ": topology \"" + excerpt(t.name) +
                    "\" is flat: it names no switch or block to order the ranks by (use rank_order=slurm)");
    return build(t.parsed, file);
}

SwitchTopology parse_switch_topology(std::string_view text, TopologyFormat format) {
    return format == TopologyFormat::Yaml ? parse_topology_yaml(text) : parse_topology_conf(text);
}

}  // namespace gangway
