// The one reader of scontrol's `Key=Value` words (`scontrol -o show job`,
// `scontrol show node`): the job check's requeue (ExcNodeList), the node
// check (NodeName, State), the post-mortem (NodeList, JobState, UserId,
// AdminComment). Pure.
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

}  // namespace gangway
