#include "placement.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "../base/error.hpp"

namespace gangway {

namespace {

// Node GPUs in SLURM index order (= PCI bus id order): positions in topo.gpus.
std::vector<size_t> gpu_order(const Topology& topo) {
    std::vector<size_t> order(topo.gpus.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return topo.gpus[a].pci.bus_id < topo.gpus[b].pci.bus_id; });
    return order;
}

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

CpuList intersect(const CpuList& a, const CpuList& b) {
    CpuList out;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

CpuList unite(const CpuList& a, const CpuList& b) {
    CpuList out;
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

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

// Picks from tie sets: element (rank + offset) mod n of the k-th claimant with that set.
struct TieSpreader {
    std::map<std::vector<size_t>, unsigned> seen;
    size_t pick(const std::vector<size_t>& set) { return set[seen[set]++ % set.size()]; }
};

}  // namespace

std::string gpu_bus_id(const Topology& topo, unsigned index) {
    const auto order = gpu_order(topo);
    if (index >= order.size()) {
        std::string have = order.empty() ? "it has no GPUs"
                                         : "it has " + std::to_string(order.size()) + " GPUs, indexes 0-" +
                                               std::to_string(order.size() - 1) + " in PCI bus id order";
        throw Error("GPU index " + std::to_string(index) + " is not on this node (" + have +
                    "); check the step's GPU list, or regenerate the topology cache if GPUs were added");
    }
    return topo.gpus[order[index]].pci.bus_id;
}

std::vector<NicChoice> compute_nics(const Topology& topo, const NicFilter& filter) {
    std::vector<NicChoice> out;
    for (const auto& nic : topo.nics) {
        if (listed(filter.exclude, nic)) continue;
        bool compute;
        if (!filter.include.empty()) {
            compute = listed(filter.include, nic);
        } else {
            compute = std::any_of(topo.gpus.begin(), topo.gpus.end(), [&](const Gpu& g) {
                return pci_distance(g.pci, nic.pci) == PciDistance::Switch;
            });
        }
        if (!compute) continue;
        auto port = usable_port(nic);
        if (!port) continue;
        out.push_back({nic.name, *port, nic.netdev, nic.pci.bus_id, nic.rdma});
    }
    std::sort(out.begin(), out.end(), [](const NicChoice& a, const NicChoice& b) {
        return natural_less(a.name, b.name);
    });
    return out;
}

std::string nccl_ib_hca_value(const std::vector<NicChoice>& nics) {
    std::string out;
    for (const auto& n : nics) {
        if (!n.rdma) continue;
        out += (out.empty() ? "=" : ",") + n.name + ":" + std::to_string(n.port);
    }
    return out;
}

Placement plan_placement(const Topology& topo, const PlacementRequest& req) {
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
    const CpuList cs = [&] {
        CpuList c = req.cpus;
        std::sort(c.begin(), c.end());
        c.erase(std::unique(c.begin(), c.end()), c.end());
        return c;
    }();
    const auto order = gpu_order(topo);
    std::vector<unsigned> step_gpus = req.gpus;
    std::sort(step_gpus.begin(), step_gpus.end());
    for (size_t i = 0; i < step_gpus.size(); ++i) {
        if (i > 0 && step_gpus[i] == step_gpus[i - 1])
            throw Error("GPU index " + std::to_string(step_gpus[i]) + " is listed twice in the step's GPUs");
        gpu_bus_id(topo, step_gpus[i]);  // throws when absent
    }

    Placement plan;
    plan.compute_nics = compute_nics(topo, req.nics);
    plan.nccl_ib_hca = nccl_ib_hca_value(plan.compute_nics);
    std::vector<PciLocation> cand_loc;
    for (const auto& c : plan.compute_nics)
        for (const auto& nic : topo.nics)
            if (nic.name == c.name && nic.pci.bus_id == c.bus_id) {
                cand_loc.push_back(nic.pci);
                break;
            }
    // Candidates ordered by bus id for tie-breaking.
    std::vector<size_t> by_bus(plan.compute_nics.size());
    std::iota(by_bus.begin(), by_bus.end(), 0);
    std::stable_sort(by_bus.begin(), by_bus.end(),
                     [&](size_t a, size_t b) { return cand_loc[a].bus_id < cand_loc[b].bus_id; });
    auto nearest = [&](auto&& dist) {
        std::vector<size_t> best;
        PciDistance bd = PciDistance::System;
        for (size_t c : by_bus) {
            const PciDistance d = dist(cand_loc[c]);
            if (best.empty() || d < bd) {
                best = {c};
                bd = d;
            } else if (d == bd) {
                best.push_back(c);
            }
        }
        return std::make_pair(best, bd);
    };

    const unsigned n = req.local_tasks;
    plan.tasks.resize(n);
    for (unsigned t = 0; t < n; ++t) plan.tasks[t].local_rank = t;

    if (!step_gpus.empty()) {
        // NIC per node GPU (all of them, so that jobs sharing the node spread too).
        std::vector<std::optional<size_t>> nic_of(order.size());
        std::vector<PciDistance> dist_of(order.size(), PciDistance::System);
        TieSpreader spread;
        for (size_t i = 0; i < order.size(); ++i) {
            const auto& g = topo.gpus[order[i]];
            auto [best, d] = nearest([&](const PciLocation& l) { return pci_distance(g.pci, l); });
            if (best.empty()) continue;
            nic_of[i] = spread.pick(best);
            dist_of[i] = d;
        }
        // GPUs to tasks.
        const size_t ng = step_gpus.size();
        std::vector<std::vector<unsigned>> gpus_of(n);
        if (n <= ng) {
            size_t g = 0;
            for (unsigned t = 0; t < n; ++t) {
                const size_t cnt = ng / n + (t < ng % n ? 1 : 0);
                for (size_t k = 0; k < cnt; ++k) gpus_of[t].push_back(step_gpus[g++]);
            }
        } else {
            for (unsigned t = 0; t < n; ++t) gpus_of[t].push_back(step_gpus[size_t(t) * ng / n]);
        }
        for (unsigned t = 0; t < n; ++t) {
            auto& task = plan.tasks[t];
            std::set<int> numas;
            for (unsigned idx : gpus_of[t]) {
                const auto& g = topo.gpus[order[idx]];
                task.gpu_indexes.push_back(idx);
                task.gpus.push_back(g.pci.bus_id);
                numas.insert(g.pci.numa);
                if (!nic_of[idx]) continue;
                const auto& choice = plan.compute_nics[*nic_of[idx]];
                if (std::none_of(task.nics.begin(), task.nics.end(),
                                 [&](const NicChoice& c) { return c.name == choice.name; }))
                    task.nics.push_back(choice);
                if (!task.distance || dist_of[idx] > *task.distance) task.distance = dist_of[idx];
            }
            task.numa = numas.size() == 1 ? *numas.begin() : -1;
        }
        // CPUs.
        if (n == 1) {
            plan.tasks[0].cpus = cs;
        } else {
            auto domain_of = [&](const Gpu& g) {
                CpuList d = intersect(g.pci.local_cpus, cs);
                if (d.empty())
                    if (const auto* nn = find_numa(topo, g.pci.numa)) d = intersect(nn->cpus, cs);
                if (d.empty())
                    if (const auto* p = find_package(topo, g.pci.package)) d = intersect(p->cpus, cs);
                if (d.empty()) d = cs;
                return d;
            };
            // Distinct domains, merged while any two overlap.
            std::vector<CpuList> domains;
            std::vector<std::vector<unsigned>> weight;  // [domain][task]
            for (unsigned t = 0; t < n; ++t)
                for (unsigned idx : gpus_of[t]) {
                    CpuList d = domain_of(topo.gpus[order[idx]]);
                    auto it = std::find(domains.begin(), domains.end(), d);
                    if (it == domains.end()) {
                        domains.push_back(d);
                        weight.emplace_back(n, 0u);
                        it = domains.end() - 1;
                    }
                    ++weight[it - domains.begin()][t];
                }
            for (bool merged = true; merged;) {
                merged = false;
                for (size_t a = 0; a < domains.size() && !merged; ++a)
                    for (size_t b = a + 1; b < domains.size() && !merged; ++b)
                        if (!intersect(domains[a], domains[b]).empty()) {
                            domains[a] = unite(domains[a], domains[b]);
                            for (unsigned t = 0; t < n; ++t) weight[a][t] += weight[b][t];
                            domains.erase(domains.begin() + b);
                            weight.erase(weight.begin() + b);
                            merged = true;
                        }
            }
            for (size_t d = 0; d < domains.size(); ++d) {
                std::vector<unsigned> tasks, w;
                for (unsigned t = 0; t < n; ++t)
                    if (weight[d][t]) {
                        tasks.push_back(t);
                        w.push_back(weight[d][t]);
                    }
                const auto parts = split_cpus(topo, domains[d], w);
                for (size_t k = 0; k < tasks.size(); ++k)
                    plan.tasks[tasks[k]].cpus = unite(plan.tasks[tasks[k]].cpus, parts[k]);
            }
        }
        return plan;
    }

    // No GPUs: spread over the NUMA nodes that hold cpuset CPUs.
    std::vector<std::pair<int, CpuList>> nodes;
    for (const auto& nn : topo.numa_nodes) {
        CpuList c = intersect(nn.cpus, cs);
        if (!c.empty()) nodes.emplace_back(static_cast<int>(nn.os), c);
    }
    if (nodes.empty()) nodes.emplace_back(-1, cs);  // no NUMA information
    std::sort(nodes.begin(), nodes.end());
    const size_t u = nodes.size();
    // Nearest compute NICs per NUMA node, spread over nodes with the same tie set.
    std::vector<std::vector<size_t>> ties(u);
    std::vector<PciDistance> node_dist(u, PciDistance::System);
    std::vector<unsigned> node_rank(u, 0);
    {
        std::map<std::vector<size_t>, unsigned> seen;
        for (size_t i = 0; i < u; ++i) {
            auto [best, d] = nearest([&](const PciLocation& l) {
                return nodes[i].first < 0 ? PciDistance::System
                                          : numa_distance(topo, l, static_cast<unsigned>(nodes[i].first));
            });
            ties[i] = best;
            node_dist[i] = d;
            node_rank[i] = seen[best]++;
        }
    }
    auto add_nic = [&](TaskPlacement& task, size_t node, unsigned offset) {
        if (ties[node].empty()) return;
        const auto& choice = plan.compute_nics[ties[node][(node_rank[node] + offset) % ties[node].size()]];
        if (std::none_of(task.nics.begin(), task.nics.end(), [&](const NicChoice& c) { return c.name == choice.name; }))
            task.nics.push_back(choice);
        if (!task.distance || node_dist[node] > *task.distance) task.distance = node_dist[node];
    };
    if (n < u) {
        for (unsigned t = 0; t < n; ++t) {
            auto& task = plan.tasks[t];
            const size_t lo = size_t(t) * u / n, hi = size_t(t + 1) * u / n;
            for (size_t i = lo; i < hi; ++i) {
                task.cpus = unite(task.cpus, nodes[i].second);
                add_nic(task, i, 0);
            }
            task.numa = hi - lo == 1 ? nodes[lo].first : -1;
        }
        if (n == 1) plan.tasks[0].cpus = cs;
    } else {
        std::vector<std::vector<unsigned>> tasks_of(u);
        for (unsigned t = 0; t < n; ++t) tasks_of[size_t(t) * u / n].push_back(t);
        for (size_t i = 0; i < u; ++i) {
            const auto parts = split_cpus(topo, nodes[i].second, std::vector<unsigned>(tasks_of[i].size(), 1u));
            for (size_t k = 0; k < tasks_of[i].size(); ++k) {
                auto& task = plan.tasks[tasks_of[i][k]];
                task.cpus = n == 1 ? cs : parts[k];
                task.numa = nodes[i].first;
                add_nic(task, i, static_cast<unsigned>(k));
            }
        }
    }
    return plan;
}

}  // namespace gangway
