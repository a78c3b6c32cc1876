// A node's hardware as plain data: PUs, cores, NUMA nodes, packages, and the
// GPUs and NICs with their PCIe ancestry. Filled by lib/sys/node/hwloc_topology
// (from hwloc, live or XML, or from gangway's own cache file); no hwloc type
// appears here, so the planner (placement.hpp) and its tests need no hardware.
//
// Conventions: CPUs are always PU OS indexes (what sched_setaffinity and
// /proc/self/status "Cpus_allowed_list" use); every cpu list is sorted and
// free of duplicates. PCI bus ids are "dddd:bb:dd.f", lower-case, with domain.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gangway {

using CpuList = std::vector<unsigned>;  // sorted PU OS indexes

struct Pu {
    unsigned os = 0;   // OS index
    unsigned core = 0; // index into Topology::cores
    int numa = -1;     // NUMA node OS index, -1 unknown
    int package = -1;  // package OS index, -1 unknown
};

struct Core {
    CpuList pus;       // its hardware threads
};

struct NumaNode {
    unsigned os = 0;
    int package = -1;  // -1: spans packages or unknown
    CpuList cpus;      // may be empty (GPU/CXL memory-only nodes)
};

struct Package {
    unsigned os = 0;
    CpuList cpus;
};

// Where a PCI device sits. `ancestry` lists the bridges from the device's
// parent up to and including its host bridge: PCI-to-PCI bridges (root ports,
// switch upstream/downstream ports) by their own bus id, a host bridge as
// "host:dddd:bb" (domain and first bus it covers). Two devices whose ancestry
// shares a PCI-to-PCI bridge talk without crossing the CPU's root complex.
struct PciLocation {
    std::string bus_id;                 // "0000:18:00.0"
    std::vector<std::string> ancestry;  // parent first, host bridge last; may be empty
    int numa = -1;                      // NUMA node the device is attached to, -1 unknown
    int package = -1;                   // package, -1 unknown
    CpuList local_cpus;                 // cpus of its closest non-I/O ancestor
};

struct Gpu {
    PciLocation pci;
    std::uint16_t vendor = 0;  // 0x10de NVIDIA, 0x1002 AMD
    std::uint16_t device = 0;
    // OS device name if hwloc had one, the one that tells SLURM's order first:
    // rsmi3, else opencl0d3, else nvml3 or cuda3; "" without one.
    std::string name;
};

// How Topology::gpus is ordered, i.e. how SLURM numbers the node's GPUs.
//   PciBus     NVIDIA (NVML enumerates by PCI bus id), or no GPUs, or mixed vendors.
//   AmdRsmi    AMD, by the rsmiN OS devices hwloc recorded: SLURM's RSMI autodetection order.
//   AmdOpenCl  AMD, by the openclPdN OS devices (ROCm's OpenCL enumerates as RSMI does).
//   AmdPciBus  AMD without either: PCI bus id order, which SLURM's RSMI order
//              may not follow (seen on MI50 nodes); `gangway topo` says so.
enum class GpuOrder { PciBus = 0, AmdRsmi, AmdOpenCl, AmdPciBus };

const char* to_string(GpuOrder o);   // "PCI bus id order", "RSMI order", "OpenCL order"
const char* describe(GpuOrder o);    // the line `gangway topo` prints, with the note for AmdPciBus

struct NicPort {
    unsigned number = 1;
    int state = -1;            // IB port state: 4 ACTIVE, 1 DOWN; -1 unknown
};

struct Nic {
    PciLocation pci;
    std::string name;          // OpenFabrics name (mlx5_0); the netdev name when rdma is false
    std::string netdev;        // network interface (ibp24s0), "" if none
    bool rdma = true;          // has an OpenFabrics device (usable in NCCL_IB_HCA)
    std::vector<NicPort> ports;// empty: unknown (treated as port 1)
    std::uint16_t vendor = 0;  // PCI ids of its function; 0: unknown (a cache written before gangway kept them)
    std::uint16_t device = 0;
};

struct Topology {
    std::vector<Pu> pus;            // by OS index
    std::vector<Core> cores;        // in topology (logical) order, as SLURM's core ids
    std::vector<NumaNode> numa_nodes;// by OS index
    std::vector<Package> packages;  // by OS index
    std::vector<Gpu> gpus;          // in SLURM index order (order_gpus)
    GpuOrder gpu_order = GpuOrder::PciBus;
    std::vector<Nic> nics;          // by PCI bus id, then name
};

// How far apart two PCI devices are, nearest first.
//   Switch     their paths meet at a PCI-to-PCI bridge: a PCIe switch (or a root
//              port) without the CPU; NCCL's PIX/PXB, GPUDirect RDMA works.
//   HostBridge they meet at one host bridge (root complex); NCCL PHB.
//   Numa       different host bridges, same NUMA node; nvidia-smi NODE, NCCL PHB.
//   Socket     same package, different NUMA nodes (SNC/NPS); NCCL SYS.
//   System     different packages or unknown; NCCL SYS.
enum class PciDistance { Switch = 0, HostBridge, Numa, Socket, System };

const char* to_string(PciDistance d);  // "switch", "hostbridge", "numa", "socket", "system"

// Pure: classifies by walking both ancestries (never a depth-based lookup).
PciDistance pci_distance(const PciLocation& a, const PciLocation& b);

// Distance from a device to a NUMA node (Numa if attached there, Socket if in
// the same package, System otherwise).
PciDistance numa_distance(const Topology& topo, const PciLocation& dev, unsigned numa_os);

// Cpu list syntax of the kernel and SLURM: "0-13,112-125". Throws gangway::Error.
//
// Cost (SECURITY.md, "What a parser may spend"): at most kMaxCpuListEntries
// entries over all its ranges, repeats included, else refused before any is
// written out. Work O(n log n + entries) (the ranges are sorted, then merged);
// memory 8 bytes per range (a range takes at least 2 bytes of input: 4 n)
// and the CPUs out, 4 bytes each, at most 4 MiB.
inline constexpr std::size_t kMaxCpuListEntries = std::size_t(1) << 20;  // over all its ranges, repeats included
CpuList parse_cpu_list(std::string_view text);

// The same syntax for a list of GPU indexes as a user writes it (gangway
// topo --gpus): in its order, repeats kept, so that the planner can refuse a
// GPU listed twice. Bounded as a whole like a cpu list (twenty full-range
// parts, each bounded alone, took seconds: issue 23, item 3); checked whole
// before any entry is written. Work O(n + entries), memory the entries,
// 4 bytes each, at most 4 MiB.
std::vector<unsigned> parse_index_list(std::string_view text);
std::string format_cpu_list(const CpuList& cpus);

// PUs of the cores with these logical ids (SLURM's S_STEP_ALLOC_CORES counts
// cores in topology order). Throws gangway::Error for an id the node lacks.
CpuList pus_of_cores(const Topology& topo, const std::vector<unsigned>& core_ids);

// All PUs of the node.
CpuList all_cpus(const Topology& topo);

// Set operations on sorted, duplicate-free cpu lists; the result is one too.
CpuList intersect(const CpuList& a, const CpuList& b);
CpuList unite(const CpuList& a, const CpuList& b);
CpuList subtract(const CpuList& a, const CpuList& b);

// The cache file format (text, versioned; first line "gangway-topology 2",
// and "gangway-topology 1" files, whose NICs have no PCI ids, are read too).
// parse_topology throws gangway::Error naming `origin` and the bad line.
std::string serialize_topology(const Topology& topo);
Topology parse_topology(std::string_view text, const std::string& origin);

// Fills topo.pus (by OS index) from `pus`, each PU with its core already
// set, stamping its NUMA node and package from topo's NUMA nodes and
// packages: the last step of both the hwloc reader and the cache parser.
void set_pus(Topology& topo, std::map<unsigned, Pu> pus);

// A PCI function gangway counts as a compute GPU by its IDs alone: NVIDIA
// (10de) or AMD (1002) with class 0300 (VGA), 0302 (3D controller) or 0380
// (display, AMD Instinct), except AMD's display-only parts (device ids
// 4000-5fff: Rage, Radeon 7000, ES1000, the BMC-era VGA on servers), which
// neither NVML nor RSMI enumerate, so SLURM never counts them. ASPEED (1a03),
// Matrox (102b) and every other vendor's VGA chip never count. One rule for
// hwloc's devices and the plugin's sysfs pre-scan; where hwloc recorded
// compute OS devices the hwloc reader narrows it further (hwloc_topology.hpp).
bool is_gpu_pci(std::uint16_t vendor_id, std::uint16_t device_id, std::uint16_t class_id);

// A NIC that is a fabric NIC by its PCI ids alone, though hwloc gives it only
// a network interface: HPE Slingshot's Cassini (vendor 17db, Cray; device
// 0501 is Cassini 1, Slingshot 11's 200 Gb/s NIC). Cassini is the only Cray
// PCI function on today's nodes, so the whole vendor counts (a Cassini 2
// too, whose device id gangway does not know). Its netdev is named by the
// site (hsnN by HPE's default, hsiN on LLNL's El Capitan-class nodes), and
// lstopo (hwloc 2.12) of such a node shows no cxiN device for it, so neither
// the name nor an RDMA device can tell.
bool is_fabric_nic_pci(std::uint16_t vendor_id, std::uint16_t device_id);

// Puts topo.gpus in SLURM index order and sets topo.gpu_order (see GpuOrder):
// NVIDIA by PCI bus id; AMD by the rsmiN, else openclPdN, OS device names
// when every AMD GPU has one, else by bus id. Idempotent.
void order_gpus(Topology& topo);

// Natural order of names: mlx5_2 < mlx5_10.
bool natural_less(std::string_view a, std::string_view b);

}  // namespace gangway
