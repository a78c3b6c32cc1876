// A run of the node check written out: a table for the admin at a terminal,
// one line for NHC and the logs, and JSON records (node, check, device,
// figure, unit, expected, status) in the spirit of the job check's report
// (lib/preflight/report.hpp), so that a fleet store can keep both.
#pragma once
#include <string>
#include <vector>

#include "../preflight/report.hpp"  // StageResult
#include "confirm.hpp"
#include "record.hpp"

namespace gangway::health {

struct Run {
    std::string id;                             // unique per check when spooled for the fleet ("" otherwise)
    std::string node;
    std::string level;                          // "quick", "full"
    std::int64_t time = 0;                      // its start, seconds since the epoch
    double seconds = 0;
    Verdict verdict = Verdict::healthy;
    std::vector<preflight::StageResult> stages;  // each part of the check, how it ended
    std::vector<Record> records;
    // The measured figures for the fleet memory, in the job check's shapes
    // (node index 0: this node): each GPU's copy rates, the local all-reduce.
    std::vector<preflight::GpuRecord> gpus;
    std::vector<preflight::NcclRecord> nccl;
};

std::string render_table(const Run& r);

// The failures for one line: each record's reason, "; " between them, the
// confirmed ones only when `confirmed_only`.
std::string failure_line(const std::vector<Record>& records, bool confirmed_only);

// What the kernel log showed and the check did not judge (skipped gpu-xid
// records: Xids naming no GPU of the node, records lost to a flood, a log
// that could not be read), for a line in the logs: never a reason to drain,
// never passed over in silence either. "" when there is none.
std::string unjudged_line(const std::vector<Record>& records);

// The stages that did not finish, for the line that says so ("nvml: did not
// finish within 4 s"); "" when all did.
std::string unfinished_line(const std::vector<preflight::StageResult>& stages);

}  // namespace gangway::health
