// The node check's report: one run on one node, as plain data. Named as the
// job check's is (preflight::Report, lib/preflight/report.hpp), and made of
// the same stage and device records (lib/preflight/check_records.hpp), so
// that the fleet's schema writes both with one set of fields.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../preflight/check_records.hpp"
#include "confirm.hpp"  // Verdict
#include "record.hpp"

namespace gangway::health {

struct Report {
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

}  // namespace gangway::health
