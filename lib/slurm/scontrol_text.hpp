// The one reader of scontrol's `Key=Value` words in texts that only the site
// writes: `scontrol show node` (the node check's NodeName, State and Reason;
// the node states of node_state.hpp) and `scontrol show config`'s
// `Key = Value` lines (the post-mortem's AccountingStorageType). Never a
// job's text: `scontrol show job` prints the user's JobName, Comment, WorkDir
// and paths among SLURM's fields, and any of them may hold " NodeList=..." (a
// job's fields come from job_view.hpp's fixed fields instead). Pure.
#pragma once
#include <string>
#include <string_view>

namespace gangway {

// The value of `key` (without its '=') in scontrol's text: the first
// occurrence at the text's or a line's start or after a blank ("NodeList" is
// not "ReqNodeList"), up to the line's end or the next blank that starts
// another field (a key of letters, digits, '_' or ':', then '='), so that a
// value with blanks (AdminComment's line, a Reason) is whole. Empty when the
// key is absent or its value is "(null)".
std::string scontrol_field(std::string_view text, std::string_view key);

// The value of `key` in `scontrol show config`'s text: the line that starts
// with the key, then blanks, '=', blanks and the value (trimmed) to the line's
// end. Empty when no line has the key or its value is "(null)".
std::string scontrol_config_field(std::string_view text, std::string_view key);

}  // namespace gangway
