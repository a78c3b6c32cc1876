// The cuda stage: every GPU of this node through the CUDA driver API
// (cuda_api.hpp), judged by gpu::judge_cuda.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "stage.hpp"

namespace gangway::sys {

struct CudaStageOptions {
    bool full = false;
    std::size_t copy_bytes = std::size_t(256) << 20;  // reaches the copy plateau
    int iterations = 5;                               // timed copies per direction (full: 20)
    bool measure_copy = true;                         // false: no timed copies (the node check's quick level)
    std::string root = "/";                           // sysfs root for the PCIe links
    EnvMap env;                                       // CUDA_VISIBLE_DEVICES, SLURM_*: the allocation
    gpu::Thresholds t;
};
// Device count against the allocation; per GPU: context, allocation, a
// memset/copy-back check, pinned H2D and D2H bandwidth (event timing).
StageOutcome run_cuda_stage(const CudaStageOptions& o, std::vector<gpu::GpuResult>* per_gpu = nullptr);

}  // namespace gangway::sys
