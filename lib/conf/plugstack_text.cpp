#include "plugstack_text.hpp"

#include <cctype>
#include <sstream>

#include "../base/text.hpp"

namespace gangway {
namespace {

// Blank-separated words before any '#', as SLURM's parser splits them.
std::vector<std::string> words_of(std::string_view line) {
    std::istringstream in(std::string(line.substr(0, line.find('#'))));
    std::vector<std::string> w;
    for (std::string x; in >> x;) w.push_back(x);
    return w;
}

}  // namespace

std::string dirname_of(std::string_view p) {
    const auto slash = p.rfind('/');
    return slash == std::string_view::npos ? "." : (slash == 0 ? "/" : std::string(p.substr(0, slash)));
}

std::vector<PlugstackLine> plugstack_lines(std::string_view text, const std::string& file) {
    std::vector<PlugstackLine> out;
    for_each_line(text, [&](std::string_view line, std::size_t n) {
        const auto w = words_of(line);
        if (w.size() < 2) return;
        PlugstackLine l{file, static_cast<int>(n), false, w[0], w[1], {}};
        if (w[0] == "include") {
            l.include = true;
            if (l.path[0] != '/') l.path = dirname_of(file) + "/" + l.path;
            out.push_back(std::move(l));
            return;
        }
        const auto slash = l.path.rfind('/');
        if (l.path.substr(slash == std::string::npos ? 0 : slash + 1) != "gangway.so") return;
        l.args.assign(w.begin() + 2, w.end());
        out.push_back(std::move(l));
    });
    return out;
}

std::string slurm_conf_value(std::string_view slurm_conf, std::string_view key) {
    std::string found;
    for_each_line(slurm_conf, [&](std::string_view line, std::size_t) {
        if (!found.empty()) return;
        // Blanks around '=' are allowed: the words joined, then split at '='.
        std::string joined;
        for (const auto& w : words_of(line)) joined += w;
        const auto eq = joined.find('=');
        if (eq == std::string::npos || eq != key.size() || eq + 1 == joined.size()) return;
        for (std::size_t i = 0; i < eq; ++i)
            if (std::tolower(static_cast<unsigned char>(joined[i])) != std::tolower(static_cast<unsigned char>(key[i]))) return;
        found = joined.substr(eq + 1);
    });
    return found;
}

std::string plugstack_config(std::string_view slurm_conf) { return slurm_conf_value(slurm_conf, "PlugStackConfig"); }

std::string slurm_conf_include(std::string_view line) {
    const auto w = words_of(line);
    if (w.size() < 2) return "";
    std::string kw = w[0];
    for (auto& c : kw) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (kw != "include") return "";
    // The rest of the line, as SLURM takes it: the name may hold blanks.
    std::string rest(line.substr(0, line.find('#')));
    rest = rest.substr(rest.find(w[0]) + w[0].size());
    return std::string(trim_right(rest.substr(std::min(rest.size(), rest.find_first_not_of(" \t")))));
}

}  // namespace gangway
