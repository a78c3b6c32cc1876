#include "plugstack_check.hpp"

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "../env/config.hpp"

namespace gangway {

std::vector<Remark> check_plugstack(const std::string& conf, std::size_t files_read,
                                    const std::vector<PlugstackLine>& lines, const std::string& plugin) {
    using L = Remark::Level;
    if (files_read == 0)
        return {{L::problem, conf + " does not exist or cannot be read: create it with the line `required " + plugin +
                                 "` (or `include plugstack.conf.d/*.conf`) on login and compute nodes"}};
    if (lines.empty())
        return {{L::problem, "no line of " + conf + (files_read > 1 ? " or its includes" : "") + " loads gangway.so: add `required " +
                                 plugin + " [iface=...]` (or `include " + dirname_of(conf) + "/plugstack.conf.d/*.conf`)"}};
    std::vector<Remark> out;
    const auto where = [](const PlugstackLine& l) { return l.file + ":" + std::to_string(l.line); };
    if (lines.size() > 1)
        out.push_back({L::problem, "gangway.so is loaded " + std::to_string(lines.size()) + " times (" + where(lines[0]) + ", " +
                                       where(lines[1]) + "): keep one line"});
    for (const auto& l : lines) {
        const std::string at = where(l);
        if (l.kind == "optional")
            out.push_back({L::problem, at + " loads gangway.so as optional: SLURM then ignores its failures and tasks start "
                                            "without their variables; use required"});
        else if (l.kind != "required")
            out.push_back({L::problem, at + ": \"" + l.kind + "\" is not required or optional"});
        try {
            parse_site_args(l.args);
            out.push_back({L::ok, at + " loads " + l.path + " (" + l.kind + ")" + (l.args.empty() ? "" : "; " + join(l.args, " "))});
        } catch (const Error& e) {
            out.push_back({L::problem, at + ": " + e.what()});
        }
        if (l.path[0] != '/') out.push_back({L::note, at + ": " + l.path + " is relative: SLURM looks for it in its PluginDir"});
    }
    return out;
}

std::string plugin_to_check(const std::string& given, const std::vector<PlugstackLine>& lines, const std::string& fallback) {
    if (!given.empty()) return given;
    if (!lines.empty() && lines[0].path[0] == '/') return lines[0].path;
    return fallback;
}

}  // namespace gangway
