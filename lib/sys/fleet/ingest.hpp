// `gangway fleet ingest`: every report in the spool into the store, each
// file exactly once, whatever else runs at the same time.
//  1. claim: rename SPOOL/NAME to SPOOL/work/PID.NAME (rename is atomic: of
//     two ingests one gets the file, the other ENOENT and moves on); a
//     claimed file whose ingest died (its PID is gone) is claimed again;
//  2. check: a regular file (opened O_NOFOLLOW|O_NONBLOCK, then fstat: no
//     link, FIFO or device is read), at most ReportLimits::max_bytes, of a
//     known schema (lib/fleet/report_schema.hpp); the writer is the file's
//     owner: root's is a node check, anyone else's a job check;
//  3. store it (a check already stored is a no-op), then remove the file.
// A file that fails 2 goes to SPOOL/rejected/ with one line; it never stops
// the ingest. A store error stops it, leaving the file claimed for the next.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../../base/result.hpp"
#include "../../fleet/report_schema.hpp"
#include "store.hpp"

namespace gangway::sys::fleet {

struct IngestOptions {
    std::string spool = "/var/spool/gangway/fleet";
    std::int64_t now = 0;                       // for the fold
    int keep_days = kDefaultKeepDays;
    gangway::fleet::ReportLimits limits;
};

struct IngestResult {
    std::size_t stored = 0;      // new checks
    std::size_t duplicates = 0;  // already in the store (or ingested by another run meanwhile)
    std::size_t rejected = 0;    // moved to rejected/
    std::vector<std::string> lines;  // one per rejected file: "NAME (uid U): why"
    FoldResult folded;
};

// The spool must be a directory owned by this process's user (root) that is
// either closed to others or sticky (1733): else anyone could swap files.
Result<IngestResult> ingest(const IngestOptions& o, Store& store);

}  // namespace gangway::sys::fleet
