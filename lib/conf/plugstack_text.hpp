// SLURM's plugstack.conf and slurm.conf as text, for `gangway doctor` and the node check: which
// lines of a plugstack.conf load a gangway.so (with what arguments) and which
// include other files, and where slurm.conf says plugstack.conf is. Pure
// parsing: the doctor (launcher/cmd_doctor.cpp) reads the files and expands
// the includes' globs.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gangway {

// A line of a plugstack.conf that matters to gangway.
struct PlugstackLine {
    std::string file;               // the file it is in
    int line = 0;                   // 1-based
    bool include = false;           // `include PATTERN`: path is the pattern, a relative one made absolute against file's directory
    std::string kind;               // the first word: "required" or "optional" as SLURM wants it, whatever is written
    std::string path;               // the plugin's path as written (its file name is gangway.so), or the include's pattern
    std::vector<std::string> args;  // the plugin's arguments (parse_site_args judges them)
};

// The lines of `text` (the contents of `file`) that load a gangway.so or
// include other files, in order: the includes' lines belong where the include
// stands. '#' starts a comment; words are separated by blanks; an include
// without a pattern and a line with a single word load nothing.
//
// Cost (SECURITY.md, "What a parser may spend"): one pass, line by line in place, O(n);
// memory the lines kept, at most 32 bytes a byte of text ("include a\n").
std::vector<PlugstackLine> plugstack_lines(std::string_view text, const std::string& file);

// Where slurm.conf (its text) puts plugstack.conf: its PlugStackConfig= value
// (the key in any case, blanks around '=' allowed, '#' a comment); "" when
// it does not say, and plugstack.conf then lies next to slurm.conf.
// Cost: O(n); memory a few copies of the longest line (8 bytes a byte at most).
std::string plugstack_config(std::string_view slurm_conf);

// slurm.conf's value of `key` (the key in any case, blanks around '='
// allowed, '#' a comment): the first line that sets it; "" when none does.
// Cost: O(n); memory a few copies of the longest line.
std::string slurm_conf_value(std::string_view slurm_conf, std::string_view key);

// The file a slurm.conf `Include FILE` line names (the keyword in any case,
// the rest of the line without its comment and outer blanks), or "" when
// `line` is no Include line. %c is left for the caller (slurm_conf_walk.hpp).
std::string slurm_conf_include(std::string_view line);

// The directory part of a path as dirname(1) has it for these: "a/b" gives
// "a", "/b" gives "/", "b" gives ".".
std::string dirname_of(std::string_view path);

}  // namespace gangway
