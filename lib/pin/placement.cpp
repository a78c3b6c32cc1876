#include "placement.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "../base/error.hpp"

namespace gangway {

namespace {

// Node GPUs in SLURM index order: positions in topo.gpus, which order_gpus
// (topology.hpp) already sorted that way, NVIDIA by bus id, AMD by RSMI index.
std::vector<size_t> gpu_order(const Topology& topo) {
    std::vector<size_t> order(topo.gpus.size());
    std::iota(order.begin(), order.end(), 0);
    return order;
}

}  // namespace

std::string gpu_bus_id(const Topology& topo, unsigned index) {
    const auto order = gpu_order(topo);
    if (index >= order.size()) {
        std::string have = order.empty() ? "it has no GPUs"
                                         : "it has " + std::to_string(order.size()) + " GPUs, indexes 0-" +
                                               std::to_string(order.size() - 1) + " in " + to_string(topo.gpu_order);
        throw Error("GPU index " + std::to_string(index) + " is not on this node (" + have +
                    "); check the step's GPU list, or regenerate the topology cache if GPUs were added");
    }
    return topo.gpus[order[index]].pci.bus_id;
}

// --- compute NICs ------------------------------------------------------------

namespace {

bool listed(const std::vector<std::string>& names, const Nic& nic) {
    for (const auto& n : names)
        if (n == nic.name || (!nic.netdev.empty() && n == nic.netdev)) return true;
    return false;
}

// Chosen port: the first active one, else the first of unknown state; nullopt
// when every port is known to be down.
std::optional<unsigned> usable_port(const Nic& nic) {
    if (nic.ports.empty()) return 1u;
    for (const auto& p : nic.ports)
        if (p.state == 4) return p.number;
    for (const auto& p : nic.ports)
        if (p.state < 0) return p.number;
    return std::nullopt;
}

}  // namespace

namespace {

// A fabric NIC, what the fallback may choose, by what it is: one with an
// OpenFabrics device (InfiniBand, RoCE, iWARP, EFA, Omni-Path), or HPE
// Slingshot's Cassini by its PCI ids (is_fabric_nic_pci: its netdev may be
// named anything, hsiN on El Capitan-class nodes). The names HPE gives by
// default (cxiN, netdev hsnN) stay a fallback, as before the ids: for a cache
// written before gangway recorded them, and for whatever the ids miss. Any
// other NIC with only a netdev is plain Ethernet: hwloc records no link
// speed, so it cannot be told from the management port and is never chosen.
bool is_fabric(const Nic& nic) {
    return nic.rdma || is_fabric_nic_pci(nic.vendor, nic.device) || nic.name.rfind("cxi", 0) == 0 ||
           nic.netdev.rfind("hsn", 0) == 0;
}

bool on_gpu_switch(const Topology& topo, const Nic& nic) {
    return std::any_of(topo.gpus.begin(), topo.gpus.end(),
                       [&](const Gpu& g) { return pci_distance(g.pci, nic.pci) == PciDistance::Switch; });
}

}  // namespace

const char* to_string(NicRole r) {
    switch (r) {
        case NicRole::Compute: return "compute NIC";
        case NicRole::Fallback: return "compute NIC (fallback: no NIC on any GPU's PCIe switch)";
        case NicRole::Excluded: return "excluded by the site (nic_exclude)";
        case NicRole::NotIncluded: return "not in the site's nic_include";
        case NicRole::PortsDown: return "every port is down";
        case NicRole::NotFabric: return "Ethernet without RDMA (management or service network)";
        case NicRole::OffGpuSwitch: return "on no GPU's PCIe switch, while other NICs are (storage or service)";
        case NicRole::NoGpus: return "the node has no GPUs and the site includes no NICs";
    }
    return "not a compute NIC";
}

std::vector<NicVerdict> nic_verdicts(const Topology& topo, const NicFilter& filter) {
    std::vector<NicVerdict> out;
    for (const auto& nic : topo.nics) {
        NicVerdict v{&nic, NicRole::Compute, usable_port(nic)};
        if (listed(filter.exclude, nic)) v.role = NicRole::Excluded;
        else if (!filter.include.empty() && !listed(filter.include, nic)) v.role = NicRole::NotIncluded;
        else if (!v.port) v.role = NicRole::PortsDown;
        else if (filter.include.empty() && topo.gpus.empty()) v.role = NicRole::NoGpus;
        else if (filter.include.empty() && !on_gpu_switch(topo, nic)) v.role = NicRole::OffGpuSwitch;
        out.push_back(v);
    }
    // No NIC on any GPU's switch (AC922, cloud GPU nodes with EFA, Slingshot
    // nodes, most 1- and 2-GPU servers): the fabric NICs stand in, and each
    // GPU takes the nearest of them by the same distance order.
    const bool none_local = std::none_of(out.begin(), out.end(), [](const NicVerdict& v) { return v.role == NicRole::Compute; });
    if (none_local)
        for (auto& v : out)
            if (v.role == NicRole::OffGpuSwitch) v.role = is_fabric(*v.nic) ? NicRole::Fallback : NicRole::NotFabric;
    return out;
}

std::vector<NicChoice> compute_nics(const Topology& topo, const NicFilter& filter) {
    std::vector<NicChoice> out;
    for (const auto& v : nic_verdicts(topo, filter)) {
        if (v.role != NicRole::Compute && v.role != NicRole::Fallback) continue;
        const Nic& nic = *v.nic;
        out.push_back({nic.name, *v.port, nic.netdev, nic.pci.bus_id, nic.rdma, v.role == NicRole::Fallback});
    }
    std::sort(out.begin(), out.end(), [](const NicChoice& a, const NicChoice& b) {
        return natural_less(a.name, b.name);
    });
    return out;
}

std::string ucx_device(const NicChoice& nic) {
    if (nic.rdma) return nic.name + ":" + std::to_string(nic.port);
    return nic.netdev.empty() ? nic.name : nic.netdev;
}

std::string nccl_ib_hca_value(const std::vector<NicChoice>& nics) {
    std::string out;
    for (const auto& n : nics) {
        if (!n.rdma) continue;
        out += (out.empty() ? "=" : ",") + n.name + ":" + std::to_string(n.port);
    }
    return out;
}

namespace {

// --- the request -------------------------------------------------------------

// The step's cpuset, sorted and without repeats. Throws for zero tasks, an
// empty cpuset or a CPU the topology lacks.
CpuList checked_cpuset(const Topology& topo, const PlacementRequest& req) {
    if (req.local_tasks == 0)
        throw Error("the step has no tasks on this node (0 local tasks); nothing to place");
    if (req.cpus.empty())
        throw Error("the step's cpuset on this node is empty; pass the CPUs the step may use (e.g. 0-13,112-125)");
    std::set<unsigned> known;
    for (const auto& p : topo.pus) known.insert(p.os);
    for (unsigned c : req.cpus)
        if (!known.count(c))
            throw Error("CPU " + std::to_string(c) + " of the step's cpuset is not in the topology (it has CPUs " +
                        format_cpu_list(CpuList(known.begin(), known.end())) +
                        "); the topology is from another machine: regenerate the topology cache");
    CpuList cs = req.cpus;
    std::sort(cs.begin(), cs.end());
    cs.erase(std::unique(cs.begin(), cs.end()), cs.end());
    return cs;
}

// The step's GPU indexes in order. Throws for an index listed twice or one
// the node lacks.
std::vector<unsigned> checked_gpus(const Topology& topo, std::vector<unsigned> gpus) {
    std::sort(gpus.begin(), gpus.end());
    for (size_t i = 0; i < gpus.size(); ++i) {
        if (i > 0 && gpus[i] == gpus[i - 1])
            throw Error("GPU index " + std::to_string(gpus[i]) + " is listed twice in the step's GPUs");
        gpu_bus_id(topo, gpus[i]);  // throws when absent
    }
    return gpus;
}

// --- NIC per GPU (and per NUMA node without GPUs) ----------------------------

// Tie sets shared out: the k-th claimant of a set (counted per set) starts at
// its element k mod n, so that claimants with the same set spread over it.
struct TieSpreader {
    std::map<std::vector<size_t>, unsigned> seen;
    unsigned rank(const std::vector<size_t>& set) { return seen[set]++; }
    size_t pick(const std::vector<size_t>& set) { return set[rank(set) % set.size()]; }
};

// The compute NICs as candidates for a GPU or a NUMA node. Candidates are
// indexes into the compute NIC list; they are visited in PCI bus id order, so
// a tie set lists them by bus id.
class NicCandidates {
public:
    NicCandidates(const Topology& topo, const std::vector<NicChoice>& compute) : compute_(compute) {
        for (const auto& c : compute)
            for (const auto& nic : topo.nics)
                if (nic.name == c.name && nic.pci.bus_id == c.bus_id) {
                    loc_.push_back(nic.pci);
                    break;
                }
        by_bus_.resize(compute.size());
        std::iota(by_bus_.begin(), by_bus_.end(), 0);
        std::stable_sort(by_bus_.begin(), by_bus_.end(),
                         [&](size_t a, size_t b) { return loc_[a].bus_id < loc_[b].bus_id; });
    }

    struct Nearest {
        std::vector<size_t> set;  // empty: no compute NICs
        PciDistance distance = PciDistance::System;
    };
    // The candidates at the smallest `dist` (PciLocation -> PciDistance).
    template <class Distance>
    Nearest nearest(Distance&& dist) const {
        Nearest best;
        for (size_t c : by_bus_) {
            const PciDistance d = dist(loc_[c]);
            if (best.set.empty() || d < best.distance) best = {{c}, d};
            else if (d == best.distance) best.set.push_back(c);
        }
        return best;
    }

    const NicChoice& nic(size_t candidate) const { return compute_[candidate]; }

private:
    const std::vector<NicChoice>& compute_;
    std::vector<PciLocation> loc_;
    std::vector<size_t> by_bus_;
};

// A task's NICs gather without repeats; its distance is that of its worst pair.
void add_nic(TaskPlacement& task, const NicChoice& nic, PciDistance d) {
    if (std::none_of(task.nics.begin(), task.nics.end(), [&](const NicChoice& c) { return c.name == nic.name; }))
        task.nics.push_back(nic);
    if (!task.distance || d > *task.distance) task.distance = d;
}

struct GpuNic {
    std::optional<size_t> nic;  // a candidate; none without compute NICs
    PciDistance distance = PciDistance::System;
};

// The NIC of every node GPU, in index order: all of them, not only the
// step's, so that jobs sharing the node spread over tied NICs too.
std::vector<GpuNic> nic_per_gpu(const Topology& topo, const std::vector<size_t>& order, const NicCandidates& nics) {
    std::vector<GpuNic> out(order.size());
    TieSpreader spread;
    for (size_t i = 0; i < order.size(); ++i) {
        const Gpu& g = topo.gpus[order[i]];
        const auto best = nics.nearest([&](const PciLocation& l) { return pci_distance(g.pci, l); });
        if (best.set.empty()) continue;
        out[i] = {spread.pick(best.set), best.distance};
    }
    return out;
}

// --- GPU dealing -------------------------------------------------------------

// The step's GPUs, in index order, dealt to `tasks` tasks in contiguous blocks
// (8 GPUs, 3 tasks: 3,3,2); with more tasks than GPUs, consecutive tasks share
// one (2 GPUs, 4 tasks: 0,0,1,1).
std::vector<std::vector<unsigned>> deal_gpus(const std::vector<unsigned>& step_gpus, unsigned tasks) {
    const size_t ng = step_gpus.size();
    std::vector<std::vector<unsigned>> gpus_of(tasks);
    if (tasks <= ng) {
        size_t g = 0;
        for (unsigned t = 0; t < tasks; ++t) {
            const size_t cnt = ng / tasks + (t < ng % tasks ? 1 : 0);
            for (size_t k = 0; k < cnt; ++k) gpus_of[t].push_back(step_gpus[g++]);
        }
    } else {
        for (unsigned t = 0; t < tasks; ++t) gpus_of[t].push_back(step_gpus[size_t(t) * ng / tasks]);
    }
    return gpus_of;
}

// Each task's GPUs and their NICs (tasks sharing a GPU share its NIC); its
// NUMA node when all its GPUs are on one.
void give_gpus(const Topology& topo, const std::vector<size_t>& order, const std::vector<std::vector<unsigned>>& gpus_of,
               const std::vector<GpuNic>& nic_of, const NicCandidates& nics, std::vector<TaskPlacement>& tasks) {
    for (size_t t = 0; t < tasks.size(); ++t) {
        auto& task = tasks[t];
        std::set<int> numas;
        for (unsigned idx : gpus_of[t]) {
            const Gpu& g = topo.gpus[order[idx]];
            task.gpu_indexes.push_back(idx);
            task.gpus.push_back(g.pci.bus_id);
            numas.insert(g.pci.numa);
            if (nic_of[idx].nic) add_nic(task, nics.nic(*nic_of[idx].nic), nic_of[idx].distance);
        }
        task.numa = numas.size() == 1 ? *numas.begin() : -1;
    }
}

// --- CPU domains and splitting -----------------------------------------------

// Splits `total` units among claimants in proportion to `weights`, every
// claimant at least one unit (total >= weights.size() is guaranteed by the
// caller); the largest remainders, then the earlier claimants, get the extras.
std::vector<size_t> proportional(size_t total, const std::vector<unsigned>& weights) {
    const unsigned wsum = std::accumulate(weights.begin(), weights.end(), 0u);
    std::vector<size_t> size(weights.size());
    std::vector<std::pair<size_t, size_t>> rem;  // (remainder numerator, index)
    size_t used = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
        size[i] = total * weights[i] / wsum;
        rem.emplace_back(total * weights[i] % wsum, i);
        used += size[i];
    }
    std::stable_sort(rem.begin(), rem.end(), [](auto& a, auto& b) { return a.first > b.first; });
    for (size_t k = 0; used < total; ++k, ++used) ++size[rem[k % rem.size()].second];
    for (size_t i = 0; i < size.size(); ++i) {
        while (size[i] == 0) {  // take one from the largest share (the latest of equals)
            size_t big = 0;
            for (size_t j = 0; j < size.size(); ++j)
                if (size[j] >= size[big]) big = j;
            --size[big];
            ++size[i];
        }
    }
    return size;
}

// Splits `cpus` among claimants (weights as above): whole cores when there
// are enough, else PUs, else claimants share PUs.
std::vector<CpuList> split_cpus(const Topology& topo, const CpuList& cpus, const std::vector<unsigned>& weights) {
    std::map<unsigned, unsigned> core_of;
    for (const auto& p : topo.pus) core_of[p.os] = p.core;
    // Group by core, cores ordered by their lowest PU here.
    std::vector<CpuList> cores;
    std::map<unsigned, size_t> slot;
    for (unsigned c : cpus) {
        auto it = core_of.find(c);
        const unsigned key = it == core_of.end() ? 0x80000000u + c : it->second;
        auto [s, fresh] = slot.emplace(key, cores.size());
        if (fresh) cores.emplace_back();
        cores[s->second].push_back(c);
    }
    const size_t k = weights.size();
    std::vector<CpuList> out(k);
    std::vector<CpuList> units;
    if (cores.size() >= k) {
        units = cores;
    } else {
        for (const auto& c : cores)
            for (unsigned pu : c) units.push_back({pu});
    }
    if (units.size() >= k) {
        const auto sizes = proportional(units.size(), weights);
        size_t u = 0;
        for (size_t i = 0; i < k; ++i)
            for (size_t n = 0; n < sizes[i]; ++n, ++u) out[i] = unite(out[i], units[u]);
    } else {
        for (size_t i = 0; i < k; ++i) out[i] = units[i * units.size() / k];
    }
    return out;
}

const NumaNode* find_numa(const Topology& topo, int os) {
    for (const auto& n : topo.numa_nodes)
        if (static_cast<int>(n.os) == os) return &n;
    return nullptr;
}

const Package* find_package(const Topology& topo, int os) {
    for (const auto& p : topo.packages)
        if (static_cast<int>(p.os) == os) return &p;
    return nullptr;
}

// The first non-empty of: the GPU's NUMA node's CPUs in `within`, its
// package's, all of `within`.
CpuList nearby(const Topology& topo, const Gpu& g, const CpuList& within) {
    CpuList d;
    if (const auto* nn = find_numa(topo, g.pci.numa)) d = intersect(nn->cpus, within);
    if (d.empty())
        if (const auto* p = find_package(topo, g.pci.package)) d = intersect(p->cpus, within);
    return d.empty() ? within : d;
}

// CPUs split among tasks. weight[t]: how many of task t's GPUs have this
// domain; guests (tasks whose GPUs have no local CPU in the cpuset and that
// found no free CPU elsewhere) take the last blocks, after the hosts.
struct Domain {
    CpuList cpus;
    std::vector<unsigned> weight;
    std::vector<bool> guest;
};

Domain& domain_for(std::vector<Domain>& domains, CpuList cpus, size_t tasks) {
    auto it = std::find_if(domains.begin(), domains.end(), [&](const Domain& x) { return x.cpus == cpus; });
    if (it == domains.end())
        it = domains.insert(domains.end(), Domain{std::move(cpus), std::vector<unsigned>(tasks, 0u), std::vector<bool>(tasks, false)});
    return *it;
}

void merge_overlapping(std::vector<Domain>& domains) {
    for (bool merged = true; merged;) {
        merged = false;
        for (size_t a = 0; a < domains.size() && !merged; ++a)
            for (size_t b = a + 1; b < domains.size() && !merged; ++b)
                if (!intersect(domains[a].cpus, domains[b].cpus).empty()) {
                    domains[a].cpus = unite(domains[a].cpus, domains[b].cpus);
                    for (size_t t = 0; t < domains[a].weight.size(); ++t) domains[a].weight[t] += domains[b].weight[t];
                    domains.erase(domains.begin() + static_cast<std::ptrdiff_t>(b));
                    merged = true;
                }
    }
}

// The tasks' CPU domains, never outside the cpuset. First every GPU with
// local CPUs in the cpuset claims them (overlapping claims merge): a task
// keeps its GPU-local cores whatever the others need. Then a task none of
// whose GPUs has local CPUs there takes, from the CPUs nobody claimed, its
// GPU's NUMA node's, else package's, else any; with none unclaimed it joins
// the claimed domain nearest to it (the one with the most CPUs per task among
// those holding its NUMA node's, else package's, else any CPUs) as a guest.
std::vector<Domain> gpu_domains(const Topology& topo, const std::vector<size_t>& order,
                                const std::vector<std::vector<unsigned>>& gpus_of, const CpuList& cs) {
    const size_t n = gpus_of.size();
    std::vector<Domain> local;
    std::vector<size_t> homeless;
    for (size_t t = 0; t < n; ++t) {
        bool has_local = false;
        for (unsigned idx : gpus_of[t]) {
            CpuList d = intersect(topo.gpus[order[idx]].pci.local_cpus, cs);
            if (d.empty()) continue;
            ++domain_for(local, std::move(d), n).weight[t];
            has_local = true;
        }
        if (!has_local) homeless.push_back(t);
    }
    merge_overlapping(local);
    CpuList claimed;
    for (const auto& d : local) claimed = unite(claimed, d.cpus);
    const CpuList free = subtract(cs, claimed);
    std::vector<Domain> rest;
    for (size_t t : homeless)
        for (unsigned idx : gpus_of[t]) {
            const Gpu& g = topo.gpus[order[idx]];
            if (!free.empty()) {
                ++domain_for(rest, nearby(topo, g, free), n).weight[t];
                continue;
            }
            const CpuList near = nearby(topo, g, cs);
            Domain* best = nullptr;
            double best_room = -1;
            for (auto& d : local) {
                if (intersect(d.cpus, near).empty()) continue;
                const unsigned users = static_cast<unsigned>(std::count_if(d.weight.begin(), d.weight.end(), [](unsigned w) { return w > 0; }));
                const double room = double(d.cpus.size()) / (users + 1);
                if (room > best_room) best = &d, best_room = room;
            }
            if (!best) best = &local.front();  // near is within cs, all of it claimed: never reached
            ++best->weight[t];
            best->guest[t] = true;
        }
    merge_overlapping(rest);
    local.insert(local.end(), rest.begin(), rest.end());
    return local;
}

// Each domain's CPUs split among the tasks using it, in proportion to how
// many of their GPUs are in it (split_cpus: whole cores, else PUs, else
// shared); hosts first, guests last.
void split_domains(const Topology& topo, const std::vector<Domain>& domains, std::vector<TaskPlacement>& tasks) {
    for (const auto& domain : domains) {
        std::vector<unsigned> users, w;
        for (bool guests : {false, true})
            for (unsigned t = 0; t < tasks.size(); ++t)
                if (domain.weight[t] && domain.guest[t] == guests) {
                    users.push_back(t);
                    w.push_back(domain.weight[t]);
                }
        const auto parts = split_cpus(topo, domain.cpus, w);
        for (size_t k = 0; k < users.size(); ++k) tasks[users[k]].cpus = unite(tasks[users[k]].cpus, parts[k]);
    }
}

// --- no GPUs -----------------------------------------------------------------

// A NUMA node holding cpuset CPUs (os -1: the whole cpuset, without NUMA
// information), with its nearest compute NICs.
struct NumaShare {
    int os = -1;
    CpuList cpus;                       // its CPUs in the cpuset
    NicCandidates::Nearest nics;
    unsigned rank = 0;                  // earlier nodes with the same tie set (TieSpreader)

    // The NIC of its k-th task: the tie set spread over nodes, then over the node's tasks.
    void add_nic_to(TaskPlacement& task, unsigned k, const NicCandidates& cands) const {
        if (nics.set.empty()) return;
        add_nic(task, cands.nic(nics.set[(rank + k) % nics.set.size()]), nics.distance);
    }
};

// The NUMA nodes holding cpuset CPUs, by OS index; nodes with the same tie set spread over it.
std::vector<NumaShare> numa_shares(const Topology& topo, const CpuList& cs, const NicCandidates& cands) {
    std::vector<NumaShare> nodes;
    // A CPU belongs to the first node (by OS index) listing it: hwloc 2 gives a
    // memory-only node (KNL MCDRAM, HBM in flat mode, Optane) its parent's
    // cpuset, and counting it again would hand the same cores to two tasks.
    CpuList placed;
    for (const auto& nn : topo.numa_nodes) {
        CpuList c = subtract(intersect(nn.cpus, cs), placed);
        placed = unite(placed, c);
        if (!c.empty()) nodes.push_back({static_cast<int>(nn.os), std::move(c), {}, 0});
    }
    if (nodes.empty()) nodes.push_back({-1, cs, {}, 0});  // no NUMA information
    std::sort(nodes.begin(), nodes.end(), [](const NumaShare& a, const NumaShare& b) { return a.os < b.os; });
    TieSpreader spread;
    for (auto& node : nodes) {
        node.nics = cands.nearest([&](const PciLocation& l) {
            return node.os < 0 ? PciDistance::System : numa_distance(topo, l, static_cast<unsigned>(node.os));
        });
        node.rank = spread.rank(node.nics.set);
    }
    return nodes;
}

// Tasks spread block-wise over the NUMA nodes holding cpuset CPUs: with fewer
// tasks than nodes each task takes whole nodes, else each node's CPUs are
// split evenly among its tasks. A task's NIC is its node's nearest.
void spread_over_numa(const Topology& topo, const CpuList& cs, const NicCandidates& cands,
                      std::vector<TaskPlacement>& tasks) {
    const auto nodes = numa_shares(topo, cs, cands);
    const size_t u = nodes.size(), n = tasks.size();
    if (n < u) {
        for (size_t t = 0; t < n; ++t) {
            auto& task = tasks[t];
            const size_t lo = t * u / n, hi = (t + 1) * u / n;
            for (size_t i = lo; i < hi; ++i) {
                task.cpus = unite(task.cpus, nodes[i].cpus);
                nodes[i].add_nic_to(task, 0, cands);
            }
            task.numa = hi - lo == 1 ? nodes[lo].os : -1;
        }
        return;
    }
    std::vector<std::vector<size_t>> tasks_of(u);
    for (size_t t = 0; t < n; ++t) tasks_of[t * u / n].push_back(t);
    for (size_t i = 0; i < u; ++i) {
        const auto parts = split_cpus(topo, nodes[i].cpus, std::vector<unsigned>(tasks_of[i].size(), 1u));
        for (size_t k = 0; k < tasks_of[i].size(); ++k) {
            auto& task = tasks[tasks_of[i][k]];
            task.cpus = parts[k];
            task.numa = nodes[i].os;
            nodes[i].add_nic_to(task, static_cast<unsigned>(k), cands);
        }
    }
}

}  // namespace

Placement plan_placement(const Topology& topo, const PlacementRequest& req) {
    const CpuList cs = checked_cpuset(topo, req);
    const std::vector<unsigned> step_gpus = checked_gpus(topo, req.gpus);
    Placement plan;
    plan.compute_nics = compute_nics(topo, req.nics);
    plan.nccl_ib_hca = nccl_ib_hca_value(plan.compute_nics);
    const NicCandidates cands(topo, plan.compute_nics);
    plan.tasks.resize(req.local_tasks);
    for (unsigned t = 0; t < req.local_tasks; ++t) plan.tasks[t].local_rank = t;

    if (!step_gpus.empty()) {
        const auto order = gpu_order(topo);
        const auto gpus_of = deal_gpus(step_gpus, req.local_tasks);
        give_gpus(topo, order, gpus_of, nic_per_gpu(topo, order, cands), cands, plan.tasks);
        if (req.local_tasks > 1) split_domains(topo, gpu_domains(topo, order, gpus_of, cs), plan.tasks);
    } else {
        spread_over_numa(topo, cs, cands, plan.tasks);
    }
    // One task on the node (torchrun and friends) drives all its GPUs or NUMA
    // nodes: it gets the whole cpuset, not the union of their domains.
    if (req.local_tasks == 1) plan.tasks[0].cpus = cs;
    return plan;
}

}  // namespace gangway
