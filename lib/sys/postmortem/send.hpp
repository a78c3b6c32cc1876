// The node's side of the post-mortem's delivery (issue 33): its Epilog
// (`gangway postmortem collect`, root) POSTs its NodeRecord to the admin
// host's `gangway fleet serve --stops-key` at /v1/stops, signed under the
// site's key (lib/postmortem/stops_auth.hpp). Each try has a deadline of
// kSendTryS for the whole request (connect, send, the answer); a try that
// could not connect, timed out or got 503 (serve's bounds) is tried once
// more after a short pause; a refusal (4xx) is not: it would be refused again.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "../../base/result.hpp"
#include "../../postmortem/record.hpp"
#include "../net/http_client.hpp"

namespace gangway::sys::postmortem {

inline constexpr double kSendTryS = 3;
inline constexpr std::size_t kStopsKeyMaxBytes = 4096;

// The site's key file as the check reads it: a regular file of this
// process's user (root on the nodes), closed to group and others, at most
// 4 KiB, not a link (read_owned_file).
Result<std::string> read_stops_key(const std::string& path);

// POSTs `body` (a NodeRecord's JSON) for job and node to `to` (serve's base
// URL; its path is ignored), stamped with now. The server's answer line on
// success (202), else one line: why, and what the server said.
Result<std::string> send_stop_body(const HttpUrl& to, std::string_view key, std::uint32_t job, const std::string& node,
                                   std::string_view body);
// The same for a record (its JSON, lib/postmortem's to_json).
Result<std::string> send_node_record(const HttpUrl& to, std::string_view key, const gangway::postmortem::NodeRecord& r);

}  // namespace gangway::sys::postmortem
