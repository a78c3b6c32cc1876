#include "catch_compat.hpp"

#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <map>
#include <sstream>
#include <string>
#include <string_view>

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

// The name by value (a view): a std::string parameter made from a literal is a
// temporary, and GCC 14 warns (-Wdangling-reference) when a function returning
// a reference is given one, though the reference is into the cache.
const Topology& fixture(std::string_view name) {
    static std::map<std::string, Topology, std::less<>> cache;
    auto it = cache.find(name);
    if (it == cache.end()) it = cache.emplace(name, must(sys::load_topology_xml(fixture_dir() + std::string(name) + ".xml"))).first;
    return it->second;
}

std::string read_compact(const std::string& path) {
    std::ifstream in(path);
    REQUIRE(in);
    std::string out;
    for (char c; in.get(c);)
        if (c != ' ' && c != '\n' && c != '\t') out += c;  // no JSON string here holds whitespace
    return out;
}

PlacementRequest request(const Topology& t, unsigned tasks, const std::string& gpus = "all",
                         const std::string& cpus = "all") {
    PlacementRequest r;
    r.local_tasks = tasks;
    if (gpus == "all") {
        for (unsigned i = 0; i < t.gpus.size(); ++i) r.gpus.push_back(i);
    } else if (gpus != "none") {
        r.gpus = parse_cpu_list(gpus);  // the same list syntax
    }
    r.cpus = cpus == "all" ? all_cpus(t) : parse_cpu_list(cpus);
    return r;
}

struct Scenario {
    std::string fixture, gpus, cpus, expected;
    unsigned tasks;
};

std::vector<Scenario> scenarios() {
    std::ifstream in(fixture_dir() + "scenarios.tsv");
    REQUIRE(in);
    std::vector<Scenario> out;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream f(line);
        Scenario s;
        f >> s.fixture >> s.tasks >> s.gpus >> s.cpus >> s.expected;
        out.push_back(s);
    }
    return out;
}

}  // namespace

TEST_CASE("every fixture scenario plans as documented", "[topo]") {
    const auto all = scenarios();
    REQUIRE(all.size() >= 20);
    for (const auto& s : all) {
        INFO(s.fixture << " tasks=" << s.tasks << " gpus=" << s.gpus << " cpus=" << s.cpus << " -> " << s.expected);
        const Topology& t = fixture(s.fixture);
        const Placement p = plan_placement(t, request(t, s.tasks, s.gpus, s.cpus));
        CHECK(format_placement_json(p) == read_compact(fixture_dir() + s.expected));
        // Never outside the cpuset, never empty, tasks with distinct GPUs never overlap.
        const CpuList cs = s.cpus == "all" ? all_cpus(t) : parse_cpu_list(s.cpus);
        for (const auto& task : p.tasks) {
            CHECK_FALSE(task.cpus.empty());
            for (unsigned c : task.cpus) CHECK(std::binary_search(cs.begin(), cs.end(), c));
        }
    }
}

TEST_CASE("DGX H100: NCCL_IB_HCA lists the 8 compute HCAs exactly, storage ones never", "[topo]") {
    const Topology& t = fixture("dgx-h100");
    const Placement p = plan_placement(t, request(t, 8));
    CHECK(p.nccl_ib_hca == "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1");
    for (const auto& task : p.tasks) {
        REQUIRE(task.nics.size() == 1);
        for (const char* storage : {"mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8", "eno3"}) CHECK(task.nics[0].name != storage);
        CHECK(task.nics[0].port == 1);
    }
    CHECK(p.tasks[5].nics[0].netdev == "ibp192s0");
    CHECK(p.tasks[5].gpu_indexes == std::vector<unsigned>{5});
    CHECK(gpu_bus_id(t, 5) == "0000:c3:00.0");
}

TEST_CASE("the table is readable", "[topo]") {
    const Topology& t = fixture("dgx-h100");
    const std::string table = format_placement_table(plan_placement(t, request(t, 2)));
    CHECK_THAT(table, Catch::Matchers::StartsWith("task  GPU"));
    CHECK_THAT(table, Catch::Matchers::ContainsSubstring("PCIe distance"));
    CHECK_THAT(table, Catch::Matchers::ContainsSubstring("0-7,16-23"));
    CHECK_THAT(table, Catch::Matchers::ContainsSubstring("mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1"));
    CHECK_THAT(table, Catch::Matchers::ContainsSubstring("ibp24s0,ibp64s0"));
    CHECK_THAT(table, Catch::Matchers::ContainsSubstring("switch"));
    CHECK_THAT(table, Catch::Matchers::EndsWith("NCCL_IB_HCA==mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,"
                                      "mlx5_11:1\n"));
}

TEST_CASE("site exclude list: the next nearest compute NIC, spread over GPUs", "[topo]") {
    const Topology& t = fixture("pcie-4gpu");
    auto r = request(t, 4);
    r.nics.exclude = {"mlx5_2"};
    const Placement p = plan_placement(t, r);
    CHECK(p.nccl_ib_hca == "=mlx5_0:1,mlx5_1:1");
    // GPU2 and GPU3 (socket 1) now only have socket 0's HCAs; the tie is spread.
    CHECK(p.tasks[2].nics[0].name == "mlx5_0");
    CHECK(p.tasks[3].nics[0].name == "mlx5_1");
    CHECK(*p.tasks[2].distance == PciDistance::System);
    // Excluding by netdev name works too.
    r.nics.exclude = {"ibp135s0"};
    CHECK(plan_placement(t, r).nccl_ib_hca == "=mlx5_0:1,mlx5_1:1");
}

TEST_CASE("site include list: only those, even if no GPU is near", "[topo]") {
    const Topology& t = fixture("cpu-2numa");
    auto r = request(t, 2);
    r.nics.include = {"mlx5_0", "mlx5_99"};  // a name the node lacks is ignored
    const Placement p = plan_placement(t, r);
    CHECK(p.nccl_ib_hca == "=mlx5_0:1");
    CHECK(p.tasks[0].nics[0].name == "mlx5_0");
    CHECK(*p.tasks[0].distance == PciDistance::Numa);
    CHECK(p.tasks[1].nics[0].name == "mlx5_0");
    CHECK(*p.tasks[1].distance == PciDistance::System);

    const Topology& h = fixture("dgx-h100");
    auto rh = request(h, 8);
    rh.nics.include = {"mlx5_0", "mlx5_1"};
    const Placement ph = plan_placement(h, rh);
    CHECK(ph.nccl_ib_hca == "=mlx5_0:1,mlx5_1:1");
    CHECK(ph.tasks[0].nics[0].name == "mlx5_0");
    CHECK(*ph.tasks[0].distance == PciDistance::Switch);
    // GPU1-3 tie between both (NUMA distance): spread over those three GPUs.
    CHECK(ph.tasks[1].nics[0].name == "mlx5_0");
    CHECK(ph.tasks[2].nics[0].name == "mlx5_1");  // a storage HCA, by the site's choice
    CHECK(*ph.tasks[2].distance == PciDistance::Numa);
}

TEST_CASE("NICs whose ports are all down are not used", "[topo]") {
    Topology t = fixture("dgx-h100");
    for (auto& n : t.nics)
        if (n.name == "mlx5_0") n.ports[0].state = 1;
    const Placement p = plan_placement(t, request(t, 8));
    CHECK(p.nccl_ib_hca == "=mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1");
    // GPU0 falls back to the socket's other compute HCAs (different host bridges: NUMA distance).
    CHECK(*p.tasks[0].distance == PciDistance::Numa);
    CHECK(p.tasks[0].nics[0].name == "mlx5_3");
}

TEST_CASE("partial cpusets: never outside, fall back to the NUMA node, then socket, then all", "[topo]") {
    const Topology& t = fixture("dgx-a100");
    // GPU0 (NUMA 3) with a cpuset on NUMA 2 only (same socket): the whole cpuset.
    const Placement p = plan_placement(t, request(t, 2, "0,1", "8-11,40-43"));
    CHECK(p.tasks[0].cpus == CpuList{8, 9, 40, 41});
    CHECK(p.tasks[1].cpus == CpuList{10, 11, 42, 43});
    // GPU0 and GPU4 with cpus from both sockets but not their NUMA nodes: each its own socket's part.
    const Placement q = plan_placement(t, request(t, 2, "0,4", "0,32,16,48"));
    CHECK(q.tasks[0].cpus == CpuList{0, 32});
    CHECK(q.tasks[1].cpus == CpuList{16, 48});
}

TEST_CASE("more tasks than cores or PUs: split PUs, then share", "[topo]") {
    const Topology& t = fixture("dgx-h100");
    const Placement p = plan_placement(t, request(t, 4, "0", "0,16"));
    CHECK(p.tasks[0].cpus == CpuList{0});
    CHECK(p.tasks[1].cpus == CpuList{0});
    CHECK(p.tasks[2].cpus == CpuList{16});
    CHECK(p.tasks[3].cpus == CpuList{16});
    const Placement q = plan_placement(t, request(t, 2, "0", "0,16"));
    CHECK(q.tasks[0].cpus == CpuList{0});
    CHECK(q.tasks[1].cpus == CpuList{16});
}

TEST_CASE("uneven GPU blocks weigh the core split by GPU count", "[topo]") {
    const Topology& t = fixture("dgx-h100");
    // 3 tasks: GPUs {0,1,2}, {3,4,5}, {6,7}. NUMA 0 (8 cores): 3 GPUs of task 0, 1 of task 1.
    const Placement p = plan_placement(t, request(t, 3));
    CHECK(p.tasks[0].gpu_indexes == std::vector<unsigned>{0, 1, 2});
    CHECK(p.tasks[0].cpus == parse_cpu_list("0-5,16-21"));
    // Task 1: 1 of NUMA 0's 4 GPUs (2 cores) and 2 of NUMA 1's 4 (4 cores).
    CHECK(p.tasks[1].cpus == parse_cpu_list("6-11,22-27"));
    CHECK(p.tasks[1].numa == -1);
    CHECK(p.tasks[2].cpus == parse_cpu_list("12-15,28-31"));
}

TEST_CASE("CPU-only step on a GPU node: NUMA spread, nearest compute NIC", "[topo]") {
    const Topology& t = fixture("dgx-h100");
    const Placement p = plan_placement(t, request(t, 2, "none"));
    CHECK(p.tasks[0].gpus.empty());
    CHECK(p.tasks[0].numa == 0);
    CHECK(p.tasks[0].cpus == parse_cpu_list("0-7,16-23"));
    REQUIRE(p.tasks[0].nics.size() == 1);
    CHECK(p.tasks[0].nics[0].name == "mlx5_0");
    CHECK(*p.tasks[0].distance == PciDistance::Numa);
    CHECK(p.tasks[1].nics[0].name == "mlx5_6");
    // Two tasks on one NUMA node spread over its HCAs.
    const Placement q = plan_placement(t, request(t, 2, "none", "0-7,16-23"));
    CHECK(q.tasks[0].nics[0].name == "mlx5_0");
    CHECK(q.tasks[1].nics[0].name == "mlx5_3");
}

TEST_CASE("a hand-built topology reaches the NUMA distance class", "[topo]") {
    Topology t;
    for (unsigned c = 0; c < 4; ++c) {
        t.cores.push_back({{c}});
        t.pus.push_back({c, c, 0, 0});
    }
    t.numa_nodes.push_back({0, 0, {0, 1, 2, 3}});
    t.packages.push_back({0, {0, 1, 2, 3}});
    auto dev = [](std::string bus, std::vector<std::string> anc) {
        PciLocation l;
        l.bus_id = std::move(bus);
        l.ancestry = std::move(anc);
        l.numa = 0;
        l.package = 0;
        l.local_cpus = {0, 1, 2, 3};
        return l;
    };
    t.gpus.push_back({dev("0000:01:00.0", {"0000:00:01.0", "host:0000:00"}), 0x10de, 0x2330, ""});
    t.gpus.push_back({dev("0000:41:00.0", {"0000:40:02.0", "0000:40:01.0", "host:0000:40"}), 0x10de, 0x2330, ""});
    Nic n;
    n.pci = dev("0000:42:00.0", {"0000:40:03.0", "0000:40:01.0", "host:0000:40"});
    n.name = "mlx5_0";
    t.nics.push_back(n);
    const Placement p = plan_placement(t, request(t, 2));
    CHECK(*p.tasks[0].distance == PciDistance::Numa);
    CHECK(*p.tasks[1].distance == PciDistance::Switch);
    CHECK(p.tasks[0].cpus == CpuList{0, 1});
    CHECK(p.tasks[1].cpus == CpuList{2, 3});
    CHECK(p.nccl_ib_hca == "=mlx5_0:1");
}

TEST_CASE("bad input is a clear error", "[topo]") {
    const Topology& t = fixture("dgx-h100");
    CHECK_THROWS_WITH(plan_placement(t, request(t, 0)), Catch::Matchers::ContainsSubstring("no tasks"));
    auto r = request(t, 2);
    r.cpus.clear();
    CHECK_THROWS_WITH(plan_placement(t, r), Catch::Matchers::ContainsSubstring("cpuset") && Catch::Matchers::ContainsSubstring("empty"));
    CHECK_THROWS_WITH(plan_placement(t, request(t, 2, "7,8")),
                      Catch::Matchers::ContainsSubstring("GPU index 8 is not on this node") && Catch::Matchers::ContainsSubstring("8 GPUs, indexes 0-7"));
    auto d = request(t, 2);
    d.gpus = {3, 3};
    CHECK_THROWS_WITH(plan_placement(t, d), Catch::Matchers::ContainsSubstring("listed twice"));
    CHECK_THROWS_WITH(plan_placement(t, request(t, 2, "all", "0-40")),
                      Catch::Matchers::ContainsSubstring("CPU 32") && Catch::Matchers::ContainsSubstring("regenerate"));
    const Topology& c = fixture("cpu-2numa");
    CHECK_THROWS_WITH(plan_placement(c, request(c, 1, "0")), Catch::Matchers::ContainsSubstring("it has no GPUs"));
    CHECK_THROWS_WITH(gpu_bus_id(t, 9), Catch::Matchers::ContainsSubstring("GPU index 9"));
}

TEST_CASE("planning is deterministic", "[topo]") {
    const Topology& t = fixture("dgx-a100");
    const auto r = request(t, 8);
    CHECK(format_placement_json(plan_placement(t, r)) == format_placement_json(plan_placement(t, r)));
}

TEST_CASE("no NIC on a GPU's switch: the nearest fabric NIC, never plain Ethernet or a dead port", "[topo]") {
    const Topology& t = fixture("ac922");
    const Placement p = plan_placement(t, request(t, 4));
    CHECK(p.nccl_ib_hca == "=mlx5_0:1,mlx5_1:1,mlx5_2:1");  // mlx5_3's port is down, enP5p1s0f0 is Ethernet
    for (const auto& task : p.tasks) {
        REQUIRE(task.nics.size() == 1);
        CHECK(task.nics[0].fallback);
        CHECK(*task.distance == PciDistance::Numa);
        CHECK(std::string(nic_reason(task)).find("fallback") != std::string::npos);
    }
    std::map<std::string, NicRole> role;
    for (const auto& v : nic_verdicts(t, {})) role[v.nic->name] = v.role;
    CHECK(role["mlx5_0"] == NicRole::Fallback);
    CHECK(role["mlx5_3"] == NicRole::PortsDown);
    CHECK(role["enP5p1s0f0"] == NicRole::NotFabric);
    // Excluding the socket-0 HCAs moves GPUs 0 and 1 to the other socket's.
    PlacementRequest r = request(t, 4);
    r.nics.exclude = {"mlx5_0", "ib1"};
    const Placement q = plan_placement(t, r);
    CHECK(q.tasks[0].nics[0].name == "mlx5_2");
    CHECK(*q.tasks[0].distance == PciDistance::System);
    // Where some NIC sits on a GPU's switch, the others are not candidates (storage HCAs).
    const Topology& h = fixture("dgx-h100");
    for (const auto& v : nic_verdicts(h, {}))
        if (v.nic->name == "mlx5_1") CHECK(v.role == NicRole::OffGpuSwitch);
    const std::string notes = format_placement_notes(t, {}, plan_placement(t, request(t, 1, "0")));
    CHECK(notes.find("NIC mlx5_3 (ib3) not used: every port is down") != std::string::npos);
    CHECK(notes.find("NIC enP5p1s0f0 not used: Ethernet without RDMA") != std::string::npos);
    CHECK(notes.find("GPU indexes: PCI bus id order") != std::string::npos);
}

TEST_CASE("a GPU without local cores in the cpuset never takes another task's local ones", "[topo]") {
    // DGX A100: GPU 4 on NUMA 7, GPU 6 on NUMA 5; the cpuset has one core of
    // NUMA 5 (20) and one of NUMA 6 (24): task 1 keeps core 20.
    const Topology& t = fixture("dgx-a100");
    const Placement p = plan_placement(t, request(t, 2, "4,6", "20,24,52,56"));
    CHECK(p.tasks[0].cpus == CpuList{24, 56});
    CHECK(p.tasks[1].cpus == CpuList{20, 52});
    // With no free core left the task without local cores joins as the last.
    const Placement q = plan_placement(t, request(t, 2, "4,6", "20,21,52,53"));
    CHECK(q.tasks[1].cpus == CpuList{20, 52});
    CHECK(q.tasks[0].cpus == CpuList{21, 53});
}

TEST_CASE("GPU-less steps on memory-only NUMA nodes: no two tasks share cores", "[topo]") {
    for (const char* name : {"knl-flat", "xeonmax-flat", "ac922"}) {
        INFO(name);
        const Topology& t = fixture(name);
        const Placement p = plan_placement(t, request(t, 2, "none"));
        REQUIRE(p.tasks.size() == 2);
        CpuList both;
        std::set_intersection(p.tasks[0].cpus.begin(), p.tasks[0].cpus.end(), p.tasks[1].cpus.begin(),
                              p.tasks[1].cpus.end(), std::back_inserter(both));
        CHECK(both.empty());
    }
}

namespace {

// One GPU and one NIC on another root port of its host bridge: no NIC on a
// GPU's switch, so the fallback decides, by what the NIC is.
Topology one_gpu_one_nic(const std::string& name, std::uint16_t vendor, std::uint16_t device, bool rdma) {
    Topology t;
    t.packages = {{0, {0, 1}}};
    t.numa_nodes = {{0, 0, {0, 1}}};
    t.cores = {{{0}}, {{1}}};
    std::map<unsigned, Pu> pus{{0, Pu{0, 0, -1, -1}}, {1, Pu{1, 1, -1, -1}}};
    set_pus(t, std::move(pus));
    Gpu g;
    g.pci = {"0000:02:00.0", {"0000:00:07.1", "host:0000:00"}, 0, 0, {0, 1}};
    g.vendor = 0x1002;
    g.device = 0x74a0;
    t.gpus = {g};
    Nic n;
    n.pci = {"0000:01:00.0", {"0000:00:01.1", "host:0000:00"}, 0, 0, {0, 1}};
    n.name = name;
    n.netdev = name;
    n.rdma = rdma;
    n.vendor = vendor;
    n.device = device;
    t.nics = {n};
    return t;
}

}  // namespace

TEST_CASE("Slingshot NICs by their PCI ids, whatever their names; the names stay a fallback (issue 23 item 10)", "[topo]") {
    auto role = [](const Topology& t) { return nic_verdicts(t, {}).at(0).role; };
    // El Capitan class: a Cassini 1 whose interface is hsi0. Not chosen before.
    CHECK(role(one_gpu_one_nic("hsi0", 0x17db, 0x0501, false)) == NicRole::Fallback);
    // The same name on another vendor's Ethernet port is no fabric NIC
    // (on AC922s hsiN are IPoIB netdevs, which come with their HCA's RDMA device).
    CHECK(role(one_gpu_one_nic("hsi0", 0x14e4, 0x1657, false)) == NicRole::NotFabric);
    // HPE's default names still count, ids known or not (a version 1 cache).
    CHECK(role(one_gpu_one_nic("hsn0", 0, 0, false)) == NicRole::Fallback);
    CHECK(role(one_gpu_one_nic("cxi0", 0, 0, false)) == NicRole::Fallback);
    CHECK(role(one_gpu_one_nic("eno1", 0x8086, 0x1563, false)) == NicRole::NotFabric);
    CHECK(role(one_gpu_one_nic("mlx5_0", 0x15b3, 0x1021, true)) == NicRole::Fallback);
    // The fixture, rebuilt from an El Capitan-class node's lstopo: each APU
    // gets the Cassini NIC of its host bridge, and UCX_NET_DEVICES names it.
    const Topology& e = fixture("elcap-mi300a");
    const Placement p = plan_placement(e, request(e, 4));
    for (unsigned i = 0; i < 4; ++i) {
        REQUIRE(p.tasks[i].nics.size() == 1);
        CHECK(p.tasks[i].nics[0].name == "hsi" + std::to_string(i));
        CHECK(p.tasks[i].nics[0].fallback);
        CHECK_FALSE(p.tasks[i].nics[0].rdma);
        CHECK(*p.tasks[i].distance == PciDistance::HostBridge);
    }
    CHECK(p.nccl_ib_hca.empty());
    // A version 1 cache of that node keeps no ids: the note says to rewrite it.
    Topology old = e;
    for (auto& n : old.nics) n.vendor = n.device = 0;
    CHECK(nic_verdicts(old, {}).at(0).role == NicRole::NotFabric);
    const std::string notes = format_placement_notes(old, {}, plan_placement(old, request(old, 4)));
    CHECK(notes.find("NIC PCI ids unknown (a topology cache written before gangway kept them)") != std::string::npos);
    CHECK(format_placement_notes(e, {}, p).find("PCI ids unknown") == std::string::npos);
}
