// Topology-aware pinning: which GPU(s), NIC(s) and CPUs each local task of a
// step gets on one node. A pure function of plain data (topology.hpp); the
// plugin calls it once per node and applies the result per task:
//
//   Result<Topology> topo = sys::load_topology(path)  // the cache, an hwloc XML, or "": live discovery
//                                                     // (lib/sys/node/hwloc_topology.hpp)
//   Placement p  = plan_placement(topo, {local_tasks, step_gpus, step_cpus, site_nics});
//   p.tasks[local_rank] -> CUDA_VISIBLE_DEVICES / UCX_NET_DEVICES / sched_setaffinity
//   p.nccl_ib_hca       -> NCCL_IB_HCA (identical in every task of the node)
//
// GPU indexes. A step's GPUs are given as SLURM indexes. gangway maps index i
// to the i-th GPU of the node in PCI bus id order (Topology::gpus is sorted by
// bus id). That is the order of SLURM's gres autodetection with NVML, which
// keeps "NVML enumeration order (PCI bus order)", and of CUDA with
// CUDA_DEVICE_ORDER=PCI_BUS_ID. A gres.conf that lists File=/dev/nvidiaN in
// another order breaks this assumption.
//
// Rules.
//  * GPUs: the step's GPUs in index order are dealt to tasks in contiguous
//    blocks (8 GPUs, 3 tasks: 3,3,2); with more tasks than GPUs, consecutive
//    tasks share a GPU (2 GPUs, 4 tasks: 0,0,1,1).
//  * Compute NICs: NICs on the PCIe switch of at least one GPU of the node
//    (PCI distance Switch), minus the site's exclude list. A non-empty site
//    include list replaces the locality test: exactly the included NICs that
//    exist are compute NICs (for nodes whose NICs hang off the CPU). NICs whose
//    ports are all known to be down are dropped. Storage and management NICs
//    are thereby never chosen.
//  * NIC per GPU: the compute NICs at the smallest PciDistance (switch, host
//    bridge, NUMA node, socket, system). Ties are spread deterministically:
//    the k-th GPU of the node (all node GPUs, in index order) with the same
//    tied set takes element k mod n of the set (ordered by bus id), so two
//    jobs sharing a node also spread. Tasks sharing a GPU share its NIC; a
//    task with several GPUs gets the NICs of all of them.
//  * CPUs, never outside the step's cpuset: each GPU's domain is its local
//    cpus in the cpuset, else its NUMA node's, else its package's, else the
//    whole cpuset; overlapping domains are merged. A domain's cores are split
//    among the tasks using it, in proportion to how many of their GPUs are in
//    it (evenly when each task has one GPU); contiguous blocks of whole cores,
//    earlier tasks get the extra core; PUs are split when there are fewer
//    cores than tasks, shared when there are fewer PUs.
//  * One task on the node (torchrun and friends): all step GPUs, their NICs,
//    the whole cpuset.
//  * No GPUs: tasks are spread over the NUMA nodes holding cpuset CPUs
//    (block-wise) and split each node's CPUs; NIC = nearest compute NIC to
//    the task's NUMA node (there are none on a GPU-less node unless the site
//    includes some).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "topology.hpp"

namespace gangway {

// Site policy from plugstack.conf; entries are OpenFabrics names (mlx5_0) or
// netdev names (ibp24s0), exact match. Names the node lacks are ignored.
struct NicFilter {
    std::vector<std::string> include;
    std::vector<std::string> exclude;
};

struct PlacementRequest {
    unsigned local_tasks = 0;        // tasks of the step on this node
    std::vector<unsigned> gpus;      // the step's GPUs here, SLURM indexes; empty: none
    CpuList cpus;                    // the step's cpuset here, PU OS indexes
    NicFilter nics;
};

struct NicChoice {
    std::string name;    // mlx5_0
    unsigned port = 1;
    std::string netdev;  // ibp24s0, "" if none
    std::string bus_id;
    bool rdma = true;
    bool fallback = false;  // chosen because no NIC sits on any GPU's switch (see the rules)
};

struct TaskPlacement {
    unsigned local_rank = 0;
    std::vector<unsigned> gpu_indexes;  // SLURM indexes
    std::vector<std::string> gpus;      // PCI bus ids, same order
    std::vector<NicChoice> nics;
    CpuList cpus;
    int numa = -1;                      // -1: the task spans NUMA nodes
    std::optional<PciDistance> distance;// worst GPU-NIC (or NUMA-NIC) pair; none without a NIC
};

struct Placement {
    std::vector<TaskPlacement> tasks;       // by local rank
    std::vector<NicChoice> compute_nics;    // node-wide, natural name order
    std::string nccl_ib_hca;                // "=mlx5_0:1,mlx5_3:1", "" without RDMA compute NICs
};

// Throws gangway::Error on bad input: zero tasks, empty cpuset, a cpu or GPU
// index the topology lacks, a GPU index twice.
Placement plan_placement(const Topology& topo, const PlacementRequest& req);

// The node's compute NICs under the site filter (see the rules above).
std::vector<NicChoice> compute_nics(const Topology& topo, const NicFilter& filter);

// Why each NIC of the node is, or is not, a compute NIC: what `gangway topo`
// explains. The plan itself needs only compute_nics.
enum class NicRole {
    Compute,       // on a GPU's switch, or included by the site
    Fallback,      // a fabric NIC standing in: no NIC is on any GPU's switch
    Excluded,      // nic_exclude
    NotIncluded,   // nic_include is set and does not name it
    PortsDown,     // every port known to be down
    NotFabric,     // plain Ethernet (management, service)
    OffGpuSwitch,  // other NICs sit on GPU switches; this one does not (storage)
    NoGpus,        // a GPU-less node without nic_include
};
const char* to_string(NicRole r);

struct NicVerdict {
    const Nic* nic;                 // into the topology
    NicRole role;
    std::optional<unsigned> port;   // the port it would use; none when all are down
};
std::vector<NicVerdict> nic_verdicts(const Topology& topo, const NicFilter& filter);

// Exact-match NCCL_IB_HCA value for these NICs (RDMA ones only).
std::string nccl_ib_hca_value(const std::vector<NicChoice>& nics);

// How UCX_NET_DEVICES names a chosen NIC: an RDMA device with its port
// ("mlx5_0:1"); a NIC without one (Slingshot's, an included Ethernet port) by
// its interface ("hsi0"), as UCX's tcp transport names its devices: "hsi0:1"
// would match no UCX device.
std::string ucx_device(const NicChoice& nic);

// PCI bus id of SLURM GPU index `index`; throws gangway::Error if absent.
std::string gpu_bus_id(const Topology& topo, unsigned index);

}  // namespace gangway
