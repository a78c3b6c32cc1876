// Median cost of getting a node's pinning plan: live hwloc discovery + plan
// versus reading gangway's topology cache + plan (what a task start pays),
// side by side in one run. Not built by default: make bench/pinning_bench
//   bench/pinning_bench [--iterations N] [--xml FILE]
// --xml also times an hwloc XML load (e.g. a fixture) for comparison.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <sched.h>
#include <unistd.h>
#include <vector>

#include "../lib/base/error.hpp"
#include "../lib/base/text.hpp"
#include "../lib/pin/placement.hpp"
#include "../lib/sys/node/hwloc_topology.hpp"
#include "../tests/unit/must.hpp"

using namespace gangway;

namespace {

double median_us(int n, const std::function<void()>& f) {
    std::vector<double> t;
    for (int i = 0; i < n; ++i) {
        const auto a = std::chrono::steady_clock::now();
        f();
        const auto b = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

PlacementRequest all_of(const Topology& t) {
    PlacementRequest r;
    for (unsigned i = 0; i < t.gpus.size(); ++i) r.gpus.push_back(i);
    r.local_tasks = t.gpus.empty() ? 1 : static_cast<unsigned>(t.gpus.size());
    r.cpus = all_cpus(t);
    return r;
}

// What the plugin does per task after planning: bind to the task's CPUs.
void bind(const CpuList& cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (unsigned c : cpus) CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) throw Error("sched_setaffinity failed");
}

}  // namespace

int main(int argc, char** argv) {
    int n = 20;
    std::string xml;
    auto usage = [] {
        std::fprintf(stderr, "usage: pinning_bench [--iterations N] [--xml FILE]\n");
        return 2;
    };
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc) {
            const auto v = parse_int(argv[++i]);
            if (!v) return usage();
            n = std::max(1, *v);
        } else if (!std::strcmp(argv[i], "--xml") && i + 1 < argc) {
            xml = argv[++i];
        } else {
            return usage();
        }
    }
    try {
        const std::string cache = "/var/tmp/gangway-bench-" + std::to_string(::getpid()) + ".cache";
        const Topology live = must(sys::load_live_topology());
        must(sys::write_topology_cache(live, cache));
        std::size_t sink = 0;
        const double t_live = median_us(n, [&] {
            const Topology t = must(sys::load_live_topology());
            sink += plan_placement(t, all_of(t)).tasks.size();
        });
        const double t_cache = median_us(n, [&] {
            const Topology t = must(sys::read_topology_cache(cache));
            sink += plan_placement(t, all_of(t)).tasks.size();
        });
        // A task start with the cache: read, plan, bind (to the whole node, so nothing is narrowed between runs).
        const CpuList everything = all_cpus(live);
        const double t_task = median_us(n, [&] {
            const Topology t = must(sys::read_topology_cache(cache));
            const Placement p = plan_placement(t, all_of(t));
            sink += p.tasks.size();
            bind(everything);
        });
        const double t_plan = median_us(n, [&] { sink += plan_placement(live, all_of(live)).tasks.size(); });
        std::printf("median of %d runs on this machine (%zu CPUs, %zu GPUs, %zu NICs)\n", n, live.pus.size(),
                    live.gpus.size(), live.nics.size());
        std::printf("  live hwloc discovery + plan  %10.1f us\n", t_live);
        std::printf("  cache read + plan            %10.1f us   (%.0fx faster)\n", t_cache, t_live / t_cache);
        std::printf("  cache read + plan + bind     %10.1f us   (a task start with the cache)\n", t_task);
        std::printf("  plan only                    %10.1f us\n", t_plan);
        if (!xml.empty()) {
            const Topology x = must(sys::load_topology_xml(xml));
            const std::string xcache = cache + ".xml";
            must(sys::write_topology_cache(x, xcache));
            const double t_xml = median_us(n, [&] {
                const Topology t = must(sys::load_topology_xml(xml));
                sink += plan_placement(t, all_of(t)).tasks.size();
            });
            const double t_xcache = median_us(n, [&] {
                const Topology t = must(sys::read_topology_cache(xcache));
                sink += plan_placement(t, all_of(t)).tasks.size();
            });
            std::printf("%s (%zu CPUs, %zu GPUs, %zu NICs)\n", xml.c_str(), x.pus.size(), x.gpus.size(), x.nics.size());
            std::printf("  hwloc XML load + plan        %10.1f us\n", t_xml);
            std::printf("  cache read + plan            %10.1f us\n", t_xcache);
            std::remove(xcache.c_str());
        }
        std::remove(cache.c_str());
        return sink == 0 ? 1 : 0;
    } catch (const Error& e) {
        std::fprintf(stderr, "pinning_bench: %s\n", e.what());
        return 1;
    }
}
