// The placement rules as invariants, checked on random requests over every
// topology fixture: random GPU subsets, cpusets, task counts and NIC exclude
// lists. Deterministic (fixed seed, our own draws rather than <random>'s
// distributions, whose results differ between standard libraries) and
// bounded: a fixed number of requests per fixture.
#include "catch_compat.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../../lib/base/error.hpp"
#include "../../lib/pin/placement.hpp"
#include "../../lib/pin/placement_format.hpp"
#include "../../lib/sys/node/hwloc_topology.hpp"
#include "must.hpp"

using namespace gangway;

namespace {

std::string fixture_dir() {
    const char* top = std::getenv("top_srcdir");
    return std::string(top && *top ? top : ".") + "/tests/fixtures/topology/";
}

std::vector<std::string> fixture_files() {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(fixture_dir()))
        if (e.path().extension() == ".xml") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

struct Draw {
    std::mt19937 gen{20240516u};
    unsigned below(unsigned n) { return n == 0 ? 0 : static_cast<unsigned>(gen() % n); }
    bool coin(unsigned percent) { return below(100) < percent; }
};

CpuList intersect(const CpuList& a, const CpuList& b) {
    CpuList out;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

bool subset(const CpuList& a, const CpuList& b) { return intersect(a, b).size() == a.size(); }

// A random non-empty cpuset: everything, one NUMA node, a run of cores, or scattered cores.
CpuList random_cpuset(const Topology& t, Draw& d) {
    switch (d.below(4)) {
        case 0: return all_cpus(t);
        case 1: {
            std::vector<const NumaNode*> with_cpus;
            for (const auto& n : t.numa_nodes)
                if (!n.cpus.empty()) with_cpus.push_back(&n);
            if (!with_cpus.empty()) return with_cpus[d.below(static_cast<unsigned>(with_cpus.size()))]->cpus;
            return all_cpus(t);
        }
        case 2: {
            const unsigned n = static_cast<unsigned>(t.cores.size());
            const unsigned lo = d.below(n), len = 1 + d.below(n - lo);
            std::vector<unsigned> ids;
            for (unsigned i = lo; i < lo + len; ++i) ids.push_back(i);
            return pus_of_cores(t, ids);
        }
        default: {
            std::vector<unsigned> ids;
            for (unsigned i = 0; i < t.cores.size(); ++i)
                if (d.coin(25)) ids.push_back(i);
            if (ids.empty()) ids.push_back(d.below(static_cast<unsigned>(t.cores.size())));
            CpuList pus = pus_of_cores(t, ids);
            if (d.coin(30)) {  // sometimes only the first hardware thread of each core
                CpuList firsts;
                for (unsigned id : ids) firsts.push_back(t.cores[id].pus.front());
                std::sort(firsts.begin(), firsts.end());
                pus = firsts;
            }
            return pus;
        }
    }
}

// The GPU-local CPUs in the cpuset, grouped as the planner merges them: sets
// that overlap form one domain. Returns, per step GPU, its domain (empty when
// the GPU has no local CPU in the cpuset).
std::vector<CpuList> local_domains(const Topology& t, const std::vector<unsigned>& gpus, const CpuList& cs) {
    std::vector<CpuList> dom;
    for (unsigned g : gpus) dom.push_back(intersect(t.gpus[g].pci.local_cpus, cs));
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t a = 0; a < dom.size(); ++a)
            for (size_t b = 0; b < dom.size(); ++b)
                if (a != b && !dom[a].empty() && !dom[b].empty() && dom[a] != dom[b] &&
                    !intersect(dom[a], dom[b]).empty()) {
                    CpuList u;
                    std::set_union(dom[a].begin(), dom[a].end(), dom[b].begin(), dom[b].end(), std::back_inserter(u));
                    dom[a] = dom[b] = u;
                    changed = true;
                }
    }
    return dom;
}

void check_plan(const Topology& t, const PlacementRequest& req, const Placement& p) {
    const CpuList cs = req.cpus;
    REQUIRE(p.tasks.size() == req.local_tasks);
    // Nothing outside the cpuset, never empty; tasks share at most a PU (only
    // when a domain has fewer PUs than tasks).
    for (const auto& task : p.tasks) {
        CHECK_FALSE(task.cpus.empty());
        CHECK(subset(task.cpus, cs));
    }
    for (size_t a = 0; a < p.tasks.size(); ++a)
        for (size_t b = a + 1; b < p.tasks.size(); ++b) CHECK(intersect(p.tasks[a].cpus, p.tasks[b].cpus).size() <= 1);

    // GPUs: the step's, dealt in SLURM's order, each GPU to consecutive tasks;
    // distinct per task when there are at least as many GPUs as tasks.
    std::vector<unsigned> dealt;
    for (const auto& task : p.tasks) {
        REQUIRE(task.gpus.size() == task.gpu_indexes.size());
        for (size_t k = 0; k < task.gpu_indexes.size(); ++k) {
            CHECK(task.gpus[k] == t.gpus.at(task.gpu_indexes[k]).pci.bus_id);
            if (dealt.empty() || dealt.back() != task.gpu_indexes[k]) dealt.push_back(task.gpu_indexes[k]);
        }
        if (!req.gpus.empty()) CHECK_FALSE(task.gpu_indexes.empty());
    }
    std::vector<unsigned> want = req.gpus;
    std::sort(want.begin(), want.end());
    CHECK(dealt == want);
    if (req.gpus.size() >= req.local_tasks) {
        std::set<unsigned> seen;
        for (const auto& task : p.tasks)
            for (unsigned g : task.gpu_indexes) CHECK(seen.insert(g).second);
    }

    // Cores GPU-local when the cpuset allows: a task with a GPU that has local
    // CPUs in the cpuset stays inside its GPUs' (merged) local domains; a task
    // without takes claimed cores only when no unclaimed one is left.
    if (!req.gpus.empty() && req.local_tasks > 1) {
        const auto dom = local_domains(t, want, cs);
        CpuList claimed;
        for (const auto& d : dom) claimed.insert(claimed.end(), d.begin(), d.end());
        std::sort(claimed.begin(), claimed.end());
        claimed.erase(std::unique(claimed.begin(), claimed.end()), claimed.end());
        const bool free_left = claimed.size() < cs.size();
        for (const auto& task : p.tasks) {
            CpuList mine;
            for (unsigned g : task.gpu_indexes) {
                const auto& d = dom[static_cast<size_t>(std::find(want.begin(), want.end(), g) - want.begin())];
                mine.insert(mine.end(), d.begin(), d.end());
            }
            std::sort(mine.begin(), mine.end());
            if (!mine.empty()) {
                INFO("task " << task.local_rank << " cpus " << format_cpu_list(task.cpus) << " local "
                             << format_cpu_list(mine));
                CHECK(subset(task.cpus, mine));
            } else if (free_left) {
                INFO("task " << task.local_rank << " without local CPUs took claimed ones");
                CHECK(intersect(task.cpus, claimed).empty());
            }
        }
    }

    // NICs: only compute NICs, never an excluded one; a task with GPUs gets,
    // for each of its GPUs, a compute NIC nearest to that GPU.
    const auto compute = compute_nics(t, req.nics);
    auto loc_of = [&](const std::string& name) -> const PciLocation& {
        for (const auto& n : t.nics)
            if (n.name == name) return n.pci;
        FAIL("no NIC " << name);
        return t.nics.front().pci;
    };
    for (const auto& c : compute) {
        for (const auto& x : req.nics.exclude) CHECK(c.name != x);
    }
    for (const auto& task : p.tasks) {
        for (const auto& n : task.nics)
            CHECK(std::any_of(compute.begin(), compute.end(), [&](const NicChoice& c) { return c.name == n.name; }));
        if (task.gpu_indexes.empty() || compute.empty()) continue;
        for (unsigned g : task.gpu_indexes) {
            PciDistance best = PciDistance::System;
            for (const auto& c : compute) best = std::min(best, pci_distance(t.gpus[g].pci, loc_of(c.name)));
            CHECK(std::any_of(task.nics.begin(), task.nics.end(), [&](const NicChoice& n) {
                return pci_distance(t.gpus[g].pci, loc_of(n.name)) == best;
            }));
        }
    }
    // The fallback stands in only when no NIC sits on a GPU's switch, and never
    // picks plain Ethernet: a fallback NIC has an RDMA device or is Slingshot's
    // (its PCI ids, or HPE's default names).
    for (const auto& c : compute) {
        if (!c.fallback) continue;
        CHECK(req.nics.include.empty());
        const auto nic = std::find_if(t.nics.begin(), t.nics.end(), [&](const Nic& n) { return n.name == c.name; });
        REQUIRE(nic != t.nics.end());
        CHECK((c.rdma || is_fabric_nic_pci(nic->vendor, nic->device) || c.netdev.rfind("hsn", 0) == 0 ||
               c.name.rfind("cxi", 0) == 0));
    }
}

}  // namespace

TEST_CASE("random requests over every fixture keep the placement invariants", "[topo][property]") {
    const auto files = fixture_files();
    REQUIRE(files.size() >= 10);
    Draw d;
    unsigned plans = 0;
    for (const auto& file : files) {
        INFO(file);
        const Topology t = must(sys::load_topology_xml(file));
        const Topology cached = parse_topology(serialize_topology(t), file + " (cache)");
        // SLURM's order: bus ids ascending unless AMD's RSMI/OpenCL order is known.
        if (t.gpu_order == GpuOrder::PciBus || t.gpu_order == GpuOrder::AmdPciBus)
            for (size_t i = 1; i < t.gpus.size(); ++i) CHECK(t.gpus[i - 1].pci.bus_id < t.gpus[i].pci.bus_id);
        for (unsigned round = 0; round < 400; ++round) {
            PlacementRequest req;
            const unsigned ng = static_cast<unsigned>(t.gpus.size());
            for (unsigned g = 0; g < ng; ++g)
                if (d.coin(50)) req.gpus.push_back(g);
            if (ng && req.gpus.empty() && d.coin(70)) req.gpus.push_back(d.below(ng));
            req.cpus = random_cpuset(t, d);
            const unsigned base = req.gpus.empty() ? 2u : static_cast<unsigned>(req.gpus.size());
            req.local_tasks = 1 + d.below(2 * base + 1);
            for (const auto& n : t.nics)
                if (d.coin(10)) req.nics.exclude.push_back(d.coin(50) || n.netdev.empty() ? n.name : n.netdev);
            if (d.coin(10) && !t.nics.empty()) req.nics.include.push_back(t.nics[d.below(static_cast<unsigned>(t.nics.size()))].name);
            INFO("tasks " << req.local_tasks << " gpus " << format_cpu_list(req.gpus) << " cpus "
                          << format_cpu_list(req.cpus));
            const Placement p = plan_placement(t, req);
            check_plan(t, req, p);
            if (round % 10 == 0) CHECK(format_placement_json(plan_placement(cached, req)) == format_placement_json(p));
            ++plans;
        }
    }
    CHECK(plans == 400 * files.size());
}
