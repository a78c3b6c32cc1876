#include "pin_env.hpp"

#include <algorithm>

#include "../base/error.hpp"
#include "../base/text.hpp"

namespace gangway {

VarList pin_env(const PinInput& in) {
    VarList out;
    if (in.pin == PinMode::Off || !in.plan) return out;
    if (in.local_rank >= in.plan->tasks.size())
        throw Error("local task " + std::to_string(in.local_rank) + " has no placement (the plan has " +
                    std::to_string(in.plan->tasks.size()) + " tasks)");
    const TaskPlacement& t = in.plan->tasks[in.local_rank];
    if (!in.step_gpus.empty()) add_var(out, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    if (!in.plan->nccl_ib_hca.empty()) add_var(out, "NCCL_IB_HCA", in.plan->nccl_ib_hca);
    std::vector<std::string> nics;
    for (const auto& n : t.nics) nics.push_back(ucx_device(n));
    if (!nics.empty()) add_var(out, "UCX_NET_DEVICES", join(nics, ","));
    if (in.layout == Mode::Task && !t.cpus.empty()) add_var(out, "OMP_NUM_THREADS", std::to_string(t.cpus.size()));
    if (in.pin == PinMode::Narrow && !t.gpu_indexes.empty()) {
        std::vector<std::string> visible;
        for (unsigned g : t.gpu_indexes) {
            const auto it = std::find(in.step_gpus.begin(), in.step_gpus.end(), g);
            if (it == in.step_gpus.end())
                throw Error("GPU " + std::to_string(g) + " planned for local task " + std::to_string(in.local_rank) +
                            " is not one of the step's GPUs");
            const auto pos = static_cast<std::size_t>(it - in.step_gpus.begin());
            // SLURM's CUDA_VISIBLE_DEVICES may hold cgroup-local indexes: keep its own spelling.
            visible.push_back(pos < in.cuda_visible.size() ? in.cuda_visible[pos] : std::to_string(g));
        }
        add_var(out, "CUDA_VISIBLE_DEVICES", join(visible, ","));
    }
    if (!t.gpus.empty()) add_var(out, "GANGWAY_GPUS", join(t.gpus, ","));
    if (!nics.empty()) add_var(out, "GANGWAY_NICS", join(nics, ","));
    add_var(out, "GANGWAY_CPUS", format_cpu_list(t.cpus));
    return out;
}

}  // namespace gangway
