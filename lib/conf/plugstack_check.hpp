// `gangway doctor`'s verdict on plugstack.conf: whether SLURM will load
// gangway.so once, as required, with arguments the plugin accepts, and what
// to write when it will not. Plain data in (the lines plugstack_lines found
// in the files the doctor read), remarks out; the doctor prints them.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "plugstack_text.hpp"

namespace gangway {

struct Remark {
    enum class Level { ok, note, problem };
    Level level = Level::ok;
    std::string text;
};

// `conf`: the plugstack.conf the doctor started from; `files_read`: how many
// files it could read, conf and its includes (0: not even conf); `lines`:
// the gangway.so lines of them all, in SLURM's order; `plugin`: the plugin
// to name in the line to add. Two lines are a problem (SLURM would load the
// plugin twice), so are `optional` (SLURM then ignores its failures and
// tasks start without their variables), another first word, and arguments
// parse_site_args refuses; a relative path is a note (SLURM looks in its
// PluginDir).
std::vector<Remark> check_plugstack(const std::string& conf, std::size_t files_read,
                                    const std::vector<PlugstackLine>& lines, const std::string& plugin);

// The plugin file to inspect: the one given, else the first line's when its
// path is absolute (a relative one is in SLURM's PluginDir, which the doctor
// does not know), else `fallback`.
std::string plugin_to_check(const std::string& given, const std::vector<PlugstackLine>& lines, const std::string& fallback);

}  // namespace gangway
