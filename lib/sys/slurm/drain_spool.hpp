// The drain spool's writer: `gangway run/check` leaves one request file per
// bad node there, and the admins' Epilog (contrib/epilog/gangway-drain.sh),
// as root on the job's first node, reads them and drains through scontrol.
// Which files and what they say is plain data (preflight/drain.hpp); this is
// the writing. It sits beside the SLURM client because the spool is SLURM's
// drain, deferred to the Epilog: the one other way a check drains a node.
// The site makes the directory root's, sticky and open to all (mode 1733).
#pragma once
#include <string>

#include "../../base/result.hpp"
#include "../../preflight/drain.hpp"

namespace gangway::sys {

// Whether `dir` is a directory: a site without the spool gets no file and no message.
bool drain_spool_exists(const std::string& dir);

// Writes `d` as dir/d.file, atomically (write_file_atomic), mode 0644: root's
// Epilog reads it. The names are predictable, and in the sticky spool nobody
// may replace another user's file: one planted under the name would stop the
// request, so then it is written as d.file + "," + 16 random hex digits
// (',' is in no node name), which the Epilog reads as d.file. The name
// written, or one line on failure.
Result<std::string> write_drain_request(const std::string& dir, const preflight::DrainRequest& d);

}  // namespace gangway::sys
