// The GPUs' signs of a job's stop from NVML at the job's end (issue 33):
// a page retirement or a row remapping that waits for a GPU reset, or a row
// remapping that failed (health::NvmlGpu, what the node check's NVML reader
// gives). They say the GPU's memory broke, not when: like the ports' counters
// they are timed at the Epilog's reading, shown in the timeline, and a cause
// only within the verdict's window. Pure: the collector reads NVML.
#pragma once
#include <cstdint>
#include <vector>

#include "../health/facts.hpp"
#include "record.hpp"

namespace gangway::postmortem {

// One retired_pages sign per GPU with pending retired pages, pending or
// failed row remapping (device: its bus id; code: its retired pages, 0 when
// NVML did not say); at most kMaxEvidence.
std::vector<Evidence> gpu_signs(const health::NvmlFacts& nvml, std::int64_t t_ns);

}  // namespace gangway::postmortem
