// A run of the node check written out for people: a table for the admin at
// a terminal, and the lines for NHC and the logs. Its JSON is the fleet's
// schema's (lib/fleet/report_schema.hpp), beside the job check's.
#pragma once
#include <string>
#include <vector>

#include "record.hpp"
#include "report.hpp"

namespace gangway::health {

std::string render_table(const Report& r);

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
