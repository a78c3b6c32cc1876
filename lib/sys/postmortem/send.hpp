// The node's side of the post-mortem's delivery (issue 33): its Epilog
// (`gangway postmortem collect`, root) POSTs its NodeRecord to the admin
// host's `gangway fleet serve --stops-key` at /v1/stops, signed under the
// site's key (lib/postmortem/stops_auth.hpp) and stamped with the time of
// each try (a record sent again later is a new request, never a replay).
// Each try has a deadline for the whole request (connect, send, the
// answer); a try that could not connect, timed out or got a 5xx (503:
// serve's bounds) is tried again after a short pause while tries are left;
// a 4xx is not: it would be answered the same. What the answer means for
// the record (taken, refused for good, or to keep and send again) is
// lib/postmortem/outbox's delivery_of.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "../../base/result.hpp"
#include "../../postmortem/outbox.hpp"
#include "../net/http_client.hpp"
#include "stops_auth.hpp"

namespace gangway::sys::postmortem {

inline constexpr double kSendTryS = 3;
inline constexpr std::size_t kStopsKeyMaxBytes = 4096;

// The site's key file as the check reads it: a regular file of this
// process's user (root on the nodes), closed to group and others, at most
// 4 KiB, not a link (read_owned_file).
Result<std::string> read_stops_key(const std::string& path);

// What became of a record sent: the last try's HTTP status (0: no answer)
// and one line: serve's answer when it took it, else why not and what
// serve said.
struct Sent {
    gangway::postmortem::Delivery delivery = gangway::postmortem::Delivery::retry;
    unsigned status = 0;
    std::string line;
};

// POSTs `body` (a NodeRecord's JSON) for job and node to `to` (serve's base
// URL; its path is ignored), stamped with now at each try: at most `tries`
// tries of `try_s` seconds each, 0.5 s apart.
// With Signed::progress, a running job's progress record to /v1/progress
// (lib/sys/watch/agent), signed as such.
Sent send_stop(const HttpUrl& to, std::string_view key, std::uint32_t job, const std::string& node, std::string_view body,
               int tries = 2, double try_s = kSendTryS, Signed what = Signed::stop);

}  // namespace gangway::sys::postmortem
