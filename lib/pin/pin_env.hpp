// The environment that tells a task (and NCCL, UCX, OpenMP, CUDA) what the
// placement planner chose for it. Pure: the plugin binds the CPUs and sets
// the variables; `gangway topo` shows the same plan.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "../env/config.hpp"
#include "../env/var_list.hpp"
#include "placement.hpp"

namespace gangway {

struct PinInput {
    const Placement* plan = nullptr;
    unsigned local_rank = 0;
    PinMode pin = PinMode::On;
    Mode layout = Mode::Task;                 // Node: one task drives all GPUs (torchrun)
    std::vector<unsigned> step_gpus;          // the step's GPUs here, SLURM indexes, as planned
    std::vector<std::string> cuda_visible;    // CUDA_VISIBLE_DEVICES entries SLURM set, one per step GPU
};

// Variables in a stable order:
//   CUDA_DEVICE_ORDER=PCI_BUS_ID (GPUs present), so CUDA numbers GPUs as SLURM and gangway do
//   NCCL_IB_HCA=  node-wide exact list of compute HCAs (the same in every task, as NCCL's maintainers advise)
//   UCX_NET_DEVICES=  this task's NIC(s): an RDMA device's port (mlx5_0:1), else the
//                     interface, which is how UCX's tcp transport names its devices (hsi0)
//   OMP_NUM_THREADS=  the task's CPU count, task layout only (torchrun sets its workers' own)
//   CUDA_VISIBLE_DEVICES  narrowed to the task's GPU(s), narrow mode only
//   GANGWAY_GPUS, GANGWAY_NICS, GANGWAY_CPUS: what was chosen, for people and logs
// Throws gangway::Error when the task's GPUs are not among the step's.
VarList pin_env(const PinInput& in);

}  // namespace gangway
