// The plugin's sysfs CPU reader against hwloc: each fixture machine's CPU
// topology is written out as the sysfs files Linux would show for it, then
// read by both gangway's reader and hwloc's Linux backend (HWLOC_FSROOT), and
// both must give the fixture's own packages, NUMA nodes, cores and PUs.
#include "catch_compat.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "../../lib/pin/topology.hpp"
#include "../../lib/sys/node/cpu_sysfs.hpp"
#include "../../lib/sys/node/hwloc_topology.hpp"
#include "must.hpp"

using namespace gangway;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) {
    const char* top = std::getenv("top_srcdir");
    return std::string(top && *top ? top : ".") + "/tests/fixtures/topology/" + name;
}

// The kernel's cpumask format: 32-bit hex words, most significant first.
std::string mask(const CpuList& cpus) {
    const unsigned words = cpus.empty() ? 1 : cpus.back() / 32 + 1;
    std::vector<unsigned> w(words, 0);
    for (unsigned c : cpus) w[c / 32] |= 1u << (c % 32);
    std::string out;
    for (unsigned i = words; i-- > 0;) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%08x", w[i]);
        if (!out.empty()) out += ',';
        out += buf;
    }
    return out;
}

void put(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << '\n';
}

struct Tree {
    fs::path dir;
    explicit Tree(const std::string& tag)
        : dir(fs::path("/tmp") / ("gangway-cpu-sysfs-" + std::to_string(::getpid()) + "-" + tag)) {
        fs::remove_all(dir);
    }
    ~Tree() { fs::remove_all(dir); }
    Tree(const Tree&) = delete;
    Tree& operator=(const Tree&) = delete;
};

// What Linux shows for `t`'s CPUs: both the _list files gangway reads and the
// masks hwloc reads. A NUMA node lists only the CPUs no lower node listed, so
// a memory-only node (hwloc gives it its parent's cpuset) shows none, as on Linux.
void write_sysfs(const Topology& t, const fs::path& root) {
    const fs::path sys = root / "sys/devices/system";
    put(sys / "cpu/online", format_cpu_list(all_cpus(t)));
    put(sys / "cpu/possible", format_cpu_list(all_cpus(t)));
    for (std::size_t k = 0; k < t.cores.size(); ++k) {
        const Core& core = t.cores[k];
        for (unsigned pu : core.pus) {
            const Pu& p = *std::find_if(t.pus.begin(), t.pus.end(), [&](const Pu& x) { return x.os == pu; });
            const auto pkg = std::find_if(t.packages.begin(), t.packages.end(),
                                          [&](const Package& x) { return static_cast<int>(x.os) == p.package; });
            const CpuList pkg_cpus = pkg == t.packages.end() ? core.pus : pkg->cpus;
            const fs::path top = sys / ("cpu/cpu" + std::to_string(pu)) / "topology";
            put(top / "core_cpus_list", format_cpu_list(core.pus));
            put(top / "core_cpus", mask(core.pus));
            put(top / "thread_siblings_list", format_cpu_list(core.pus));
            put(top / "thread_siblings", mask(core.pus));
            put(top / "package_cpus_list", format_cpu_list(pkg_cpus));
            put(top / "package_cpus", mask(pkg_cpus));
            put(top / "core_siblings_list", format_cpu_list(pkg_cpus));
            put(top / "core_siblings", mask(pkg_cpus));
            put(top / "physical_package_id", std::to_string(p.package));
            put(top / "core_id", std::to_string(k));
        }
    }
    std::vector<unsigned> nodes;
    CpuList claimed;
    for (const auto& n : t.numa_nodes) {
        CpuList own;
        for (unsigned c : n.cpus)
            if (!std::binary_search(claimed.begin(), claimed.end(), c)) own.push_back(c);
        claimed.insert(claimed.end(), own.begin(), own.end());
        std::sort(claimed.begin(), claimed.end());
        nodes.push_back(n.os);
        const fs::path d = sys / ("node/node" + std::to_string(n.os));
        put(d / "cpulist", format_cpu_list(own));
        put(d / "cpumap", mask(own));
        put(d / "meminfo", "Node " + std::to_string(n.os) + " MemTotal:       1048576 kB");
    }
    put(sys / "node/online", format_cpu_list(nodes));
    put(sys / "node/possible", format_cpu_list(nodes));
}

// The CPU half only, in the cache format (so a difference prints readably).
std::string cpu_part(Topology t) {
    t.gpus.clear();
    t.nics.clear();
    t.gpu_order = GpuOrder::PciBus;
    return serialize_topology(t);
}

class Env {
public:
    Env(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
    ~Env() { ::unsetenv(name_); }
    Env(const Env&) = delete;
    Env& operator=(const Env&) = delete;

private:
    const char* name_;
};

// hwloc's Linux backend on the tree, as the plugin would call it on such a node.
Topology hwloc_on(const fs::path& root) {
    Env fsroot("HWLOC_FSROOT", root.string());
    return must(sys::load_live_topology(sys::IoScope::CpusOnly));
}

bool has_memory_only_node(const Topology& t) {
    CpuList seen;
    for (const auto& n : t.numa_nodes) {
        bool own = false;
        for (unsigned c : n.cpus)
            if (std::find(seen.begin(), seen.end(), c) == seen.end()) own = true, seen.push_back(c);
        if (!own) return true;
    }
    return false;
}

}  // namespace

TEST_CASE("sysfs CPU reader: every fixture machine as hwloc reads the same files", "[topo][cpu_sysfs]") {
    int plain = 0;
    for (const auto& entry : fs::directory_iterator(fixture(""))) {
        if (entry.path().extension() != ".xml") continue;
        const std::string name = entry.path().filename().string();
        INFO(name);
        const Topology fixed = must(sys::load_topology_xml(entry.path().string()));
        Tree tree(name);
        write_sysfs(fixed, tree.dir);
        const auto mine = sys::read_cpu_topology(tree.dir.string());
        if (has_memory_only_node(fixed)) {
            CHECK_FALSE(mine.has_value());  // hwloc's rules for HBM/GPU memory apply: it falls back
            continue;
        }
        ++plain;
        REQUIRE(mine.has_value());
        CHECK(cpu_part(*mine) == cpu_part(fixed));
        CHECK(cpu_part(hwloc_on(tree.dir)) == cpu_part(fixed));
    }
    CHECK(plain >= 5);
}

TEST_CASE("sysfs CPU reader: interleaved numbering keeps hwloc's core order (SLURM's core ids)", "[topo][cpu_sysfs]") {
    // Two packages, even CPUs on one and odd on the other, 2 threads a core
    // (0,8), (2,10), ... as some BIOSes number them; two NUMA nodes, one per package.
    Topology t;
    t.packages = {{0, {0, 2, 4, 6, 8, 10, 12, 14}}, {1, {1, 3, 5, 7, 9, 11, 13, 15}}};
    t.numa_nodes = {{0, 0, {0, 2, 4, 6, 8, 10, 12, 14}}, {1, 1, {1, 3, 5, 7, 9, 11, 13, 15}}};
    std::map<unsigned, Pu> pus;
    for (unsigned p = 0; p < 2; ++p)
        for (unsigned c = 0; c < 4; ++c) {
            const unsigned a = 2 * c + p, b = a + 8;
            const auto index = static_cast<unsigned>(t.cores.size());
            t.cores.push_back(Core{{a, b}});
            pus[a] = Pu{a, index, -1, -1};
            pus[b] = Pu{b, index, -1, -1};
        }
    set_pus(t, pus);
    Tree tree("interleaved");
    write_sysfs(t, tree.dir);
    const auto mine = sys::read_cpu_topology(tree.dir.string());
    REQUIRE(mine.has_value());
    CHECK(mine->cores[1].pus == CpuList{2, 10});  // package 0's second core, not CPU 1's
    CHECK(mine->cores[4].pus == CpuList{1, 9});
    CHECK(cpu_part(*mine) == cpu_part(hwloc_on(tree.dir)));
    CHECK(cpu_part(*mine) == cpu_part(t));
}

TEST_CASE("sysfs CPU reader: offline CPUs are left out, odd trees go to hwloc", "[topo][cpu_sysfs]") {
    const Topology fixed = must(sys::load_topology_xml(fixture("cpu-2numa.xml")));
    Tree tree("odd");
    write_sysfs(fixed, tree.dir);
    const fs::path sys = tree.dir / "sys/devices/system";
    const unsigned last = all_cpus(fixed).back();

    SECTION("an offline CPU: Linux drops it from every list, and so do both readers") {
        // Offline CPUs keep a directory (with online = 0) but no topology files.
        Topology less = fixed;
        for (auto* list : {&less.cores.back().pus, &less.packages.back().cpus, &less.numa_nodes.back().cpus})
            std::erase(*list, last);
        std::erase_if(less.pus, [&](const Pu& p) { return p.os == last; });
        REQUIRE_FALSE(less.cores.back().pus.empty());
        fs::remove_all(tree.dir);
        write_sysfs(less, tree.dir);
        put(sys / "cpu/possible", format_cpu_list(all_cpus(fixed)));
        put(sys / ("cpu/cpu" + std::to_string(last)) / "online", "0");
        const auto mine = sys::read_cpu_topology(tree.dir.string());
        REQUIRE(mine.has_value());
        CHECK(cpu_part(*mine) == cpu_part(less));
        CHECK(cpu_part(hwloc_on(tree.dir)) == cpu_part(less));
    }
    SECTION("no package id") {
        fs::remove(sys / "cpu/cpu0/topology/physical_package_id");
        CHECK_FALSE(sys::read_cpu_topology(tree.dir.string()).has_value());
    }
    SECTION("a package id of -1 (some ARM firmware)") {
        put(sys / "cpu/cpu0/topology/physical_package_id", "-1");
        CHECK_FALSE(sys::read_cpu_topology(tree.dir.string()).has_value());
    }
    SECTION("no NUMA in sysfs") {
        fs::remove_all(sys / "node");
        CHECK_FALSE(sys::read_cpu_topology(tree.dir.string()).has_value());
    }
    SECTION("a CPU in no NUMA node") {
        put(sys / "node/node0/cpulist", "");
        CHECK_FALSE(sys::read_cpu_topology(tree.dir.string()).has_value());
    }
    SECTION("a garbled list") {
        put(sys / "cpu/cpu0/topology/core_cpus_list", "0-");
        put(sys / "cpu/cpu0/topology/thread_siblings_list", "zero");
        CHECK_FALSE(sys::read_cpu_topology(tree.dir.string()).has_value());
    }
    SECTION("no such tree") {
        CHECK_FALSE(sys::read_cpu_topology((tree.dir / "absent").string()).has_value());
    }
}

TEST_CASE("sysfs CPU reader: this machine, as hwloc discovers it", "[topo][cpu_sysfs]") {
    // Any Linux VM or server gangway runs on has these lists; under CI the
    // reader must take this machine, not fall back.
    const auto mine = sys::read_cpu_topology("/");
    REQUIRE(mine.has_value());
    CHECK(cpu_part(*mine) == cpu_part(must(sys::load_live_topology(sys::IoScope::CpusOnly))));
}

TEST_CASE("sysfs CPU reader: NUMA nodes interleaved inside a package keep hwloc's core order", "[topo][cpu_sysfs]") {
    // One package of 8 cores, NUMA node 0 on the even ones and 1 on the odd:
    // hwloc puts each node's cores under a Group, so cores go 0,2,4,6,1,3,5,7.
    Topology t;
    t.packages = {{0, {0, 1, 2, 3, 4, 5, 6, 7}}};
    t.numa_nodes = {{0, 0, {0, 2, 4, 6}}, {1, 0, {1, 3, 5, 7}}};
    std::map<unsigned, Pu> pus;
    for (unsigned c : {0u, 2u, 4u, 6u, 1u, 3u, 5u, 7u}) {
        pus[c] = Pu{c, static_cast<unsigned>(t.cores.size()), -1, -1};
        t.cores.push_back(Core{{c}});
    }
    set_pus(t, pus);
    Tree tree("numa-interleaved");
    write_sysfs(t, tree.dir);
    const auto mine = sys::read_cpu_topology(tree.dir.string());
    REQUIRE(mine.has_value());
    CHECK(cpu_part(*mine) == cpu_part(t));
    CHECK(cpu_part(hwloc_on(tree.dir)) == cpu_part(t));
}
