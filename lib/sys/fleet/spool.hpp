// The fleet spool: the directory every check drops its report into, for
// `gangway fleet ingest` on the admin host (gangway-fleet(8)). The site
// makes it root's, sticky and open to all (mode 1733, as the drain spool):
// a user's job can add a file but not list, read, replace or remove
// another's; the ingest knows a file's writer from its owner (root: a node
// check), never from what it says.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "../../base/result.hpp"

namespace gangway::sys::fleet {

inline constexpr const char* kDefaultSpool = "/var/spool/gangway/fleet";

// A check's id, unique without coordination: "<what>.<time>.<16 random hex
// digits>", e.g. "job-42.0.1700000000.9f3c…" or "node-node08.1700000000.…".
// Only letters, digits and ".-_" (anything else in `what` becomes '_'), so it
// is a file name too.
Result<std::string> new_check_id(std::string_view what, std::int64_t time);

// Whether `dir` is a directory: a site without a spool gets no file and no message.
bool spool_exists(const std::string& dir);

// Writes `text` as dir/ID.json, atomically (write_file_atomic), mode 0600: the
// ingest runs as root; no other user reads it. One line on failure.
Result<std::string> spool_report(const std::string& dir, const std::string& id, const std::string& text);

}  // namespace gangway::sys::fleet
