// The pure half of the GPU stages of the preflight (cuda, nccl): what a GPU
// model is expected to reach, nccl-tests' bandwidth arithmetic, outliers among
// the GPUs of a job, the allocation's GPU count, where the job's NCCL is, the
// site's thresholds and the verdicts. Plain data in, plain data out; the CUDA
// and NCCL calls live in lib/sys/stages/cuda_stage and nccl_stage.
//
// Units: GB/s is 10^9 bytes per second, as nccl-tests prints it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "../base/stats.hpp"  // median, mad
#include "../env/step_view.hpp"  // EnvMap
#include "stage_status.hpp"

namespace gangway::gpu {

// ------------------------------------------------------------ expectations
struct GpuModel {
    std::string key;                       // "H100-SXM", "L40S", ... "" when unknown
    int pcie_gen_max = 0;                  // what the part supports; 0: unknown
    int pcie_width_max = 0;                // its lanes; 0: unknown
    bool host_over_pcie = true;            // false: Grace-attached (C2C), no PCIe figure applies
    std::optional<double> ring_busbw_8;    // NCCL all-reduce busbw, 8 GPUs of one node, NCCL_ALGO=Ring
};

// The model from the CUDA device name ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB").
// This and pcie_gen_from_speed: O(n), a copy of the text at most (SECURITY.md,
// "What a parser may spend").
GpuModel gpu_model(const std::string& device_name);

// "32.0 GT/s PCIe" (sysfs current_link_speed / max_link_speed) -> 5; 0 when unknown.
int pcie_gen_from_speed(const std::string& sysfs_speed);

// Pinned host<->device copy bandwidth, GB/s, that a link of this generation
// and width reaches at the plateau; nullopt for an unknown generation.
std::optional<double> expected_copy_gbps(int pcie_gen, int width);

// All-reduce busbw over the network per NIC of this rate (Gb/s), GB/s.
double nic_busbw_gbps(double rate_gbps);

// ------------------------------------------------------------ site thresholds
// Defaults, each overridable by the environment (the site's TaskProlog or the
// user): see gangway(1) "GPU AND RDMA STAGES".
struct Thresholds {
    bool require_cuda = false, require_nccl = false, require_verbs = false;  // GANGWAY_REQUIRE=cuda,nccl,verbs
    std::optional<double> copy_gbps;      // GANGWAY_H2D_GBPS: expected H2D and D2H, replaces the table
    double copy_ratio = 0.85;             // GANGWAY_GPU_BW_RATIO: slow below ratio * expected
    double copy_bytes = double(256u << 20); // GANGWAY_COPY_BYTES: H2D/D2H copy size (reaches the plateau)
    std::optional<double> busbw_gbps;     // GANGWAY_NCCL_BUSBW_GBPS: expected all-reduce busbw
    double busbw_ratio = 0.8;             // GANGWAY_NCCL_RATIO
    double nccl_bytes = double(1u << 30); // GANGWAY_NCCL_BYTES: all-reduce size (quick)
    std::string nccl_lib;                 // GANGWAY_NCCL_LIB (the --nccl-lib option wins)
    std::optional<double> ib_rate_gbps;  // GANGWAY_IB_RATE_GBPS: expected port rate; default: the node's best port
    double rdma_ratio = 0.9;              // GANGWAY_RDMA_RATIO: RDMA write slow below ratio * port rate
    std::optional<int> gid_index;         // GANGWAY_IB_GID_INDEX, else NCCL_IB_GID_INDEX
    double outlier_z = 3.5;               // GANGWAY_OUTLIER_Z: modified z-score below -z is an outlier
};
// Throws gangway::Error naming the variable when a value is malformed.
// This and allocated_gpus: O(n) in the variables' length; memory their lists
// split into items, at most 32 bytes a byte (SECURITY.md).
Thresholds thresholds_from_env(const EnvMap& env);

// ------------------------------------------------------------ arithmetic
// nccl-tests (doc/PERFORMANCE.md): algbw = S / t; all-reduce busbw = algbw * 2(n-1)/n.
double algbw_gbps(double bytes, double seconds);
double allreduce_busbw_gbps(double algbw, unsigned nranks);


// Indices of low outliers: modified z-score 0.6745 (x - median) / MAD below
// -z, and below 0.9 x median so that a tight group is not split over noise.
// With MAD 0 only the 0.9 x median rule applies. Fewer than 4 values: none.
std::vector<std::size_t> low_outliers(const std::vector<double>& values, double z);

// GPUs the allocation gives this task/node: CUDA_VISIBLE_DEVICES when set
// (its entries), else SLURM_STEP_GPUS / SLURM_JOB_GPUS, else SLURM_GPUS_ON_NODE;
// nullopt when none of them says.
std::optional<unsigned> allocated_gpus(const EnvMap& env);

// ------------------------------------------------------------ CUDA verdicts
struct GpuResult {
    int index = 0;                // CUDA ordinal
    std::string name, bus_id;     // "NVIDIA H100 80GB HBM3", "0000:18:00.0"
    int pcie_gen = 0, pcie_width = 0;   // the trained link, sysfs current_link_* after traffic; 0 unknown
    std::string error;            // init, allocation or the computation failed: what
    bool kernel_ok = false;       // the computation check ran and was right
    std::string kernel_note;      // why it did not run (the driver cannot compile it): not the GPU's fault
    std::optional<double> h2d_gbps, d2h_gbps;
};

struct Finding {
    std::string what;    // "gpu 3 (0000:9a:00.0)", "mlx5_2/1"
    std::string problem; // "H2D 21.4 GB/s, expected >= 46.8 GB/s (0.85 x 55 GB/s, H100-SXM PCIe Gen5 x16)"
};

struct StageVerdict {
    preflight::StageStatus status = preflight::StageStatus::ok;  // ok, failed or skipped
    std::string detail;
    std::vector<Finding> findings;
};

// expected_count: allocated_gpus(); visible: what CUDA reports.
StageVerdict judge_cuda(const std::vector<GpuResult>& gpus, std::optional<unsigned> expected_count, unsigned visible,
                        const Thresholds& t);

// Each node judges its own GPUs; this compares every GPU of the job, so that a
// node whose GPUs are all equally slow (no figure for the model, no outlier at
// home) still stands out. H2D and D2H separately, low_outliers with `z`.
struct JobGpu {
    unsigned node = 0;      // the node's position in the job
    GpuResult gpu;
};
struct JobFinding {
    unsigned node = 0;
    Finding finding;
};
std::vector<JobFinding> job_copy_outliers(const std::vector<JobGpu>& gpus, double z);

// A skipped stage: failed instead when the site or user required it.
StageVerdict skipped(const std::string& why, bool required, const std::string& stage);

// ------------------------------------------------------------ NCCL
struct NcclResult {
    std::string scope;          // "node" (this node's GPUs) or "job" (across nodes)
    unsigned nranks = 0;
    double bytes = 0, seconds = 0;  // one all-reduce, the slowest local rank, averaged over iterations
    bool data_ok = true;
    std::string error;          // init/collective failed or aborted: what
    std::string model;          // GPU model key of this node
    std::optional<double> expected_busbw;  // from thresholds or the table
};
// algbw/busbw and the verdict, nccl-tests' way.
StageVerdict judge_nccl(const std::vector<NcclResult>& runs, const Thresholds& t);
// The expected busbw of an all-reduce: the site's figure, else the model's
// 8-GPU Ring figure for a single node of 8 GPUs, else (across nodes) the
// compute NICs' network bound capped by the single-node figure; nullopt when unknown.
std::optional<double> expected_busbw(const GpuModel& m, unsigned gpus_per_node, unsigned nodes,
                                     const std::vector<double>& nic_rates_gbps, const Thresholds& t);

// Where to look for libnccl, in order: the explicit path, then the copy bundled
// with PyTorch (<site-packages>/nvidia/nccl/lib/libnccl.so.2) in each Python
// prefix given, then each LD_LIBRARY_PATH directory, then ldconfig's libnccl.so.2.
std::vector<std::string> nccl_candidates(const std::string& explicit_path, const std::vector<std::string>& site_packages,
                                         const std::string& ld_library_path, const std::string& ldconfig_output);
// The Python site-packages directories a job would use: $VIRTUAL_ENV,
// $CONDA_PREFIX, ~/.local, /usr/local and /usr, for the python3.X names given.
std::vector<std::string> site_packages_dirs(const EnvMap& env, const std::vector<std::string>& python_versions);

std::string fmt_gbps(double gbps);  // "48.2 GB/s"

}  // namespace gangway::gpu
