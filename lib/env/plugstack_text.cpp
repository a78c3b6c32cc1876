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

std::vector<std::string> lines_of(std::string_view text) {
    auto lines = split_keep_empty(text, '\n');
    if (!lines.empty() && lines.back().empty()) lines.pop_back();  // the newline that ends the last line
    return lines;
}

}  // namespace

std::string dirname_of(std::string_view p) {
    const auto slash = p.rfind('/');
    return slash == std::string_view::npos ? "." : (slash == 0 ? "/" : std::string(p.substr(0, slash)));
}

std::vector<PlugstackLine> plugstack_lines(std::string_view text, const std::string& file) {
    std::vector<PlugstackLine> out;
    const auto lines = lines_of(text);
    for (std::size_t n = 0; n < lines.size(); ++n) {
        const auto w = words_of(lines[n]);
        if (w.size() < 2) continue;
        PlugstackLine l{file, static_cast<int>(n + 1), false, w[0], w[1], {}};
        if (w[0] == "include") {
            l.include = true;
            if (l.path[0] != '/') l.path = dirname_of(file) + "/" + l.path;
            out.push_back(std::move(l));
            continue;
        }
        const auto slash = l.path.rfind('/');
        if (l.path.substr(slash == std::string::npos ? 0 : slash + 1) != "gangway.so") continue;
        l.args.assign(w.begin() + 2, w.end());
        out.push_back(std::move(l));
    }
    return out;
}

std::string plugstack_config(std::string_view slurm_conf) {
    for (const auto& line : lines_of(slurm_conf)) {
        // Blanks around '=' are allowed: the words joined, then split at '='.
        std::string joined;
        for (const auto& w : words_of(line)) joined += w;
        const auto eq = joined.find('=');
        if (eq == std::string::npos) continue;
        std::string key = joined.substr(0, eq);
        const std::string value = joined.substr(eq + 1);
        for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (key == "plugstackconfig" && !value.empty()) return value;
    }
    return "";
}

}  // namespace gangway
