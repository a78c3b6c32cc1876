// The user's share of a node's record: what the collector keeps of the rank
// dumps the job's processes left, so that the record always fits the limit
// it is sent under (serve's kMaxStopBody) with root's evidence whole. The
// dumps are the user's (record.hpp): they never crowd out the node's tasks,
// kernel lines, ports or GPUs. Pure: the collector reads, this decides.
//
// The rule, in order:
//  1. only the dumps of ranks that root's task lines place on this node
//     (whatever rank a dump claims, a rank that did not run here has none);
//  2. when the record is over `max_bytes`, every dump keeps its newest K
//     entered and K completed collectives, K the largest that fits (the
//     newest are the ones the verdict reads: where each rank stopped);
//  3. when even kMinSeqsKept each is over, dumps go whole: those without an
//     exception before those with one, the highest rank first;
//  4. what was cut is said in one line (the record's notes).
#pragma once
#include <cstddef>
#include <string>

#include "record.hpp"

namespace gangway::postmortem {

inline constexpr std::size_t kMinSeqsKept = 8;
// Bytes of the record kept for the collector's notes, after the dumps are fitted.
inline constexpr std::size_t kNotesReserve = kMaxNotes * (kMaxNoteText + 8) + 16;

struct DumpCut {
    std::size_t foreign = 0;   // dumps of ranks that ran on no task here: left out
    std::size_t trimmed = 0;   // dumps cut to their newest `kept` collectives
    std::size_t kept = 0;      // K of rule 2 (0: nothing trimmed)
    std::size_t dropped = 0;   // dumps left out whole (rule 3)
    std::size_t dumps = 0;     // dumps in the record now
    bool any() const { return foreign || trimmed || dropped; }
};

// Applies the rule to r.dumps; to_json(r) is then at most max_bytes less
// kNotesReserve, unless root's part alone is over (then no dump is kept).
DumpCut fit_dumps(NodeRecord& r, std::size_t max_bytes);

// The note for the record: "rank dumps: 3 of ranks that ran on no task
// here left out; 30 cut to their newest 812 collectives (the record's 1 MiB
// limit); ..."; empty when nothing was cut.
std::string describe(const DumpCut& c, std::size_t max_bytes);

}  // namespace gangway::postmortem
