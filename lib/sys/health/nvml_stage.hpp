// NVML, where the driver installed it: each GPU's name and bus id, and what
// it says of the GPU's memory (pending or too many retired pages, row
// remapping, uncorrectable ECC errors), and whether a process computes on it
// (a job: the node check then leaves the GPU alone). libnvidia-ml.so.1 is loaded with
// dlopen, as NCCL is, so gangway runs where it is absent; then the facts say
// why (health::judge_nvml skips with that reason). Every call is bounded by
// the caller's deadline (run_bounded: the node check's parts, the post-mortem's
// collect), never by NVML's own. The node check's, so here in its room.
#pragma once
#include "../../health/facts.hpp"

namespace gangway::sys {

// GANGWAY_NVML_LIB names another library (the test double in tests/fakes).
health::NvmlFacts read_nvml();

}  // namespace gangway::sys
