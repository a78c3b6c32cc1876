#include "pinning.hpp"

#include <sched.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "../lib/env/cluster_env.hpp"
#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "../lib/pin/pin_env.hpp"
#include "../lib/sys/node/hwloc_topology.hpp"
#include "../lib/sys/node/pci_devices.hpp"
#include "../lib/sys/node/sysfs.hpp"
#include "env_access.hpp"
#include "log.hpp"
#include "state.hpp"

namespace gangway::plugin::pinning {
namespace {

CpuList own_affinity() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        throw Error(std::string("cannot read slurmstepd's CPU affinity: ") + std::strerror(errno));
    CpuList out;
    for (unsigned c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) out.push_back(c);
    return out;
}

// The step's cpuset here: slurmstepd's own affinity (what the step may use;
// SLURM binds only the tasks), narrowed to the step's allocated cores when
// SLURM names them in this node's numbering.
CpuList step_cpuset(spank_t sp, const Topology& topo) {
    CpuList cpus = own_affinity();
    char* cores = nullptr;
    if (spank_get_item(sp, S_STEP_ALLOC_CORES, &cores) == ESPANK_SUCCESS && cores && *cores) {
        try {
            const CpuList ids = parse_cpu_list(cores);
            cpus = intersect(cpus, pus_of_cores(topo, std::vector<unsigned>(ids.begin(), ids.end())));
        } catch (const Error& e) {
            // slurm.conf declares cores this node lacks (config_overrides): the affinity alone bounds us.
            log_info(std::string("step cores \"") + cores + "\" do not match this node's topology (" + e.what() +
                     "); using slurmstepd's affinity as the step's cpuset");
        }
    }
    if (cpus.empty())
        throw Error("the step's cpuset on this node is empty; check the job's CPU allocation (--cpus-per-task, -c)");
    return cpus;
}

}  // namespace

void plan_node(spank_t sp, const Config& cfg, const StepView& step) {
    struct stat st {};
    // A configured cache that is not there yet (first boot, before the admin
    // wrote it) costs a live discovery, not a failed job.
    const std::string source = !cfg.topology.empty() && stat(cfg.topology.c_str(), &st) == 0 ? cfg.topology : "";
    // Only GPUs make PCI devices matter to the plan (compute NICs are those
    // near a GPU), unless the site names NICs itself: a GPU-less node is
    // discovered without its PCI bus, which is most of a discovery's cost.
    // A cache holds the devices already: its node's PCI bus is not scanned
    // (one class file a PCI function, hundreds on a GPU server).
    const bool devices = source.empty() && (!cfg.nic_include.empty() || sys::pci_has_gpu(sys::sysfs_root()));
    auto loaded = sys::load_topology(source, devices ? sys::IoScope::Devices : sys::IoScope::CpusOnly);
    if (!loaded) throw Error(loaded.error());  // plan_node's callers report an Error as the step's one line
    const Topology& topo = *loaded;
    auto& s = state();
    s.step_gpus.clear();
    if (auto gpus = get_env(sp, "SLURM_STEP_GPUS"); gpus && !gpus->empty()) {
        const CpuList ids = parse_cpu_list(*gpus);
        s.step_gpus.assign(ids.begin(), ids.end());
    }
    PlacementRequest req;
    req.local_tasks = step.local_tasks.value_or(step.tasks_per_node.at(step.node_index));
    req.gpus = s.step_gpus;
    req.cpus = step_cpuset(sp, topo);
    req.nics = NicFilter{cfg.nic_include, cfg.nic_exclude};
    s.placement = plan_placement(topo, req);
    s.pin_ready = true;
}

VarList task_vars(const EnvMap& env, const Config& cfg, const StepView& step) {
    const auto& s = state();
    PinInput in;
    in.plan = &s.placement;
    in.local_rank = step.local_rank.value_or(0);
    in.pin = cfg.pin;
    in.layout = resolve_mode(cfg.mode == Mode::Off ? Mode::Auto : cfg.mode, step);
    in.step_gpus = s.step_gpus;
    // Positions matter (entry k is the step's k-th GPU), so empty entries are kept.
    if (auto it = env.find("CUDA_VISIBLE_DEVICES"); it != env.end() && !it->second.empty())
        in.cuda_visible = split_keep_empty(it->second, ',');
    return pin_env(in);
}

void bind_task(const StepView& step) {
    const auto& tasks = state().placement.tasks;
    const unsigned rank = step.local_rank.value_or(0);
    if (rank >= tasks.size()) throw Error("local task " + std::to_string(rank) + " has no placement");
    cpu_set_t set;
    CPU_ZERO(&set);
    for (unsigned c : tasks[rank].cpus)
        if (c < CPU_SETSIZE) CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        throw Error("cannot bind local task " + std::to_string(rank) + " to CPUs " + format_cpu_list(tasks[rank].cpus) +
                    ": " + std::strerror(errno) + "; run with --gangway-pin=off to keep SLURM's binding");
}

}  // namespace gangway::plugin::pinning
