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

// Calls f(line, number) for each line, in place: a copy of every line (a
// std::string each) cost 32 bytes for each empty one, 32 times the text.
template <class F>
void for_each_line(std::string_view text, F&& f) {
    std::size_t number = 0;
    while (!text.empty()) {  // the newline that ends the last line starts no line
        const auto nl = text.find('\n');
        f(text.substr(0, nl), ++number);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    }
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

std::string plugstack_config(std::string_view slurm_conf) {
    std::string found;
    for_each_line(slurm_conf, [&](std::string_view line, std::size_t) {
        if (!found.empty()) return;
        // Blanks around '=' are allowed: the words joined, then split at '='.
        std::string joined;
        for (const auto& w : words_of(line)) joined += w;
        const auto eq = joined.find('=');
        if (eq == std::string::npos) return;
        std::string key = joined.substr(0, eq);
        for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (key == "plugstackconfig" && eq + 1 < joined.size()) found = joined.substr(eq + 1);
    });
    return found;
}

}  // namespace gangway
