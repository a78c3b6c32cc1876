// `gangway fleet ingest`: every report in the spool into the store, each
// file exactly once, whatever else runs at the same time.
//  1. claim: rename SPOOL/NAME to SPOOL/work/PID.SEQ, a name of the ingest's
//     own (rename is atomic: of two ingests one gets the file, the other
//     ENOENT and moves on; a user's name of 250 characters cannot make it
//     longer than a name may be); a claimed file whose ingest died (its PID
//     is gone) is claimed again. A file that cannot be claimed is one line
//     and stays where it is: it never stops the ingest;
//  2. check: a regular file (opened O_NOFOLLOW|O_NONBLOCK, then fstat: no
//     link, FIFO or device is read) with one link and no group or other
//     write bit (so its owner is its writer), at most
//     ReportLimits::max_bytes, of a known schema (lib/fleet/report_schema.hpp),
//     dated within [now - keep window, now + kMaxClockSkewS], within the
//     per-report and per-user caps; the writer is the file's owner: root's
//     is the fleet's own word, anyone else's a user's; a user's report names
//     only nodes of the site's (SLURM's node list, site_nodes.hpp, when it
//     can be read);
//  3. store it (a check already stored is a no-op) within what its user may
//     still add to the store (UserCaps::store_series), then remove the file.
// A file that fails 2 goes to SPOOL/rejected/ with one line; it never stops
// the ingest. A store error stops it, leaving the file claimed for the next.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../../base/result.hpp"
#include "../../fleet/report_schema.hpp"
#include "site_nodes.hpp"
#include "store.hpp"

namespace gangway::sys::fleet {

// What one user (uid other than 0) may add in one ingest, over all its files:
// distinct nodes, figures and findings (`fleet ingest --user-caps`); and to
// the store, over all its reports of the keep window (--keep-days): new
// series (`--user-series`), below a 2,048-node site's own (75,782 in
// BENCHMARKS.md's 30-day store; one job check of all its nodes names 59,392).
// Root's reports are the fleet's own word and have none.
struct UserCaps {
    std::size_t nodes = 65'536;
    std::size_t series = 1'048'576;
    std::size_t findings = 262'144;
    std::uint64_t store_series = 65'536;
};

// The lines naming refused node names, in one ingest: at most this many, then one with the count.
inline constexpr std::size_t kMaxNameLines = 16;

struct IngestOptions {
    std::string spool = "/var/spool/gangway/fleet";
    std::int64_t now = 0;                       // for the fold
    int keep_days = kDefaultKeepDays;
    gangway::fleet::ReportLimits limits;
    UserCaps user_caps;
    SiteNodesOptions site_nodes;
};

struct IngestResult {
    std::size_t stored = 0;      // new checks
    std::size_t duplicates = 0;  // already in the store (or ingested by another run meanwhile)
    std::size_t rejected = 0;    // moved to rejected/
    std::vector<std::string> lines;  // one per rejected file: "NAME (uid U): why", NAME as excerpt() prints it
    // One per node name refused because the site's list does not have it
    // ("NODE (in FILE, uid U)"), at most kMaxNameLines; then how many more.
    std::vector<std::string> names;
    std::size_t more_names = 0;
    std::string names_source;  // the list's source, when names were checked
    std::string note;          // set when users' reports were stored without their names checked: why
    FoldResult folded;
};

// The spool must be a directory owned by this process's user (root) that is
// either closed to others or sticky (1733): else anyone could swap files.
Result<IngestResult> ingest(const IngestOptions& o, Store& store);

}  // namespace gangway::sys::fleet
