// The one reader of scontrol's `Key=Value` words (`scontrol -o show job`,
// `scontrol show node`): the job check's requeue (ExcNodeList), the node
// check (NodeName, State), the post-mortem (NodeList, JobState, UserId,
// AdminComment), and of `scontrol show config`'s `Key = Value` lines (the
// post-mortem's AccountingStorageType). Pure.
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
