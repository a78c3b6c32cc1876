#include "catch_compat.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <iterator>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/base/error.hpp"
#include "../../lib/pin/placement.hpp"
#include "../../lib/pin/placement_format.hpp"
#include "../../lib/sys/node/hwloc_topology.hpp"
#include "../../lib/pin/topology.hpp"
#include "cost_meter.hpp"
#include "must.hpp"

using namespace gangway;

namespace {

std::string fixture(const std::string& name) {
    const char* top = std::getenv("top_srcdir");
    return std::string(top && *top ? top : ".") + "/tests/fixtures/topology/" + name;
}

// The name by value (a view), not as a temporary std::string: GCC 14's
// -Wdangling-reference takes a reference returned beside a temporary for one into it.
const Nic& nic_named(const Topology& t, std::string_view name) {
    for (const auto& n : t.nics)
        if (n.name == name) return n;
    FAIL("no NIC " << name);
    throw;
}

PciLocation loc(std::vector<std::string> ancestry, int numa, int package) {
    PciLocation l;
    l.ancestry = std::move(ancestry);
    l.numa = numa;
    l.package = package;
    return l;
}

std::string temp_path(const std::string& tag) {
    return "/tmp/gangway-topo-test-" + std::to_string(::getpid()) + "-" + tag;
}

}  // namespace

TEST_CASE("cpu lists parse and print in the kernel's syntax", "[topo]") {
    CHECK(parse_cpu_list("0-3,8,10-11") == CpuList{0, 1, 2, 3, 8, 10, 11});
    CHECK(parse_cpu_list("5,1,1-2\n") == CpuList{1, 2, 5});
    CHECK(format_cpu_list({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11");
    CHECK(format_cpu_list({}) == "");
    CHECK(format_cpu_list(parse_cpu_list("0-13,112-125")) == "0-13,112-125");
    CHECK_THROWS_AS(parse_cpu_list(""), Error);
    CHECK_THROWS_WITH(parse_cpu_list("3-1"), Catch::Matchers::ContainsSubstring("runs backwards"));
    CHECK_THROWS_WITH(parse_cpu_list("a"), Catch::Matchers::ContainsSubstring("not a number"));
    CHECK_THROWS_AS(parse_cpu_list("1,,2"), Error);
}

TEST_CASE("natural order puts mlx5_2 before mlx5_10", "[topo]") {
    CHECK(natural_less("mlx5_2", "mlx5_10"));
    CHECK_FALSE(natural_less("mlx5_10", "mlx5_2"));
    CHECK(natural_less("mlx5_1", "mlx5_1x"));
    CHECK_FALSE(natural_less("mlx5_1", "mlx5_1"));
}

TEST_CASE("PCI distance walks both ancestries", "[topo]") {
    const auto gpu = loc({"0000:17:02.0", "0000:16:00.0", "0000:15:01.0", "host:0000:15"}, 0, 0);
    const auto same_switch = loc({"0000:17:00.0", "0000:16:00.0", "0000:15:01.0", "host:0000:15"}, 0, 0);
    const auto same_host = loc({"0000:15:03.0", "host:0000:15"}, 0, 0);
    const auto same_numa = loc({"0000:3d:01.0", "host:0000:3d"}, 0, 0);
    const auto same_socket = loc({"0000:b5:01.0", "host:0000:b5"}, 1, 0);
    const auto other = loc({"0000:9a:01.0", "host:0000:97"}, 2, 1);
    const auto unknown = loc({}, -1, -1);
    CHECK(pci_distance(gpu, same_switch) == PciDistance::Switch);
    CHECK(pci_distance(same_switch, gpu) == PciDistance::Switch);
    CHECK(pci_distance(gpu, same_host) == PciDistance::HostBridge);
    CHECK(pci_distance(gpu, same_numa) == PciDistance::Numa);
    CHECK(pci_distance(gpu, same_socket) == PciDistance::Socket);
    CHECK(pci_distance(gpu, other) == PciDistance::System);
    CHECK(pci_distance(unknown, unknown) == PciDistance::System);
    CHECK(std::string(to_string(PciDistance::HostBridge)) == "hostbridge");
}

TEST_CASE("hwloc loads the DGX H100 fixture with its I/O tree", "[topo]") {
    const Topology t = must(sys::load_topology_xml(fixture("dgx-h100.xml")));
    REQUIRE(t.pus.size() == 32);
    CHECK(t.cores.size() == 16);
    REQUIRE(t.numa_nodes.size() == 2);
    CHECK(t.numa_nodes[1].cpus == parse_cpu_list("8-15,24-31"));
    CHECK(t.numa_nodes[1].package == 1);
    REQUIRE(t.gpus.size() == 8);
    CHECK(t.gpus[0].pci.bus_id == "0000:1b:00.0");
    CHECK(t.gpus[7].pci.bus_id == "0000:df:00.0");
    CHECK(t.gpus[0].vendor == 0x10de);
    CHECK(t.gpus[0].pci.numa == 0);
    CHECK(t.gpus[4].pci.numa == 1);
    CHECK(t.gpus[4].pci.package == 1);
    CHECK(t.gpus[0].pci.local_cpus == parse_cpu_list("0-7,16-23"));
    CHECK(t.gpus[0].pci.ancestry.back() == "host:0000:15");
    CHECK(t.gpus[0].pci.ancestry.size() == 4);
    // 8 compute + 4 storage HCAs + the management Ethernet port.
    CHECK(t.nics.size() == 13);
    const Nic& m0 = nic_named(t, "mlx5_0");
    CHECK(m0.pci.bus_id == "0000:18:00.0");
    CHECK(m0.netdev == "ibp24s0");
    CHECK(m0.rdma);
    REQUIRE(m0.ports.size() == 1);
    CHECK(m0.ports[0].number == 1);
    CHECK(m0.ports[0].state == 4);
    CHECK(pci_distance(t.gpus[0].pci, m0.pci) == PciDistance::Switch);
    CHECK(pci_distance(t.gpus[1].pci, m0.pci) == PciDistance::Numa);
    CHECK(pci_distance(t.gpus[4].pci, m0.pci) == PciDistance::System);
    const Nic& eno = nic_named(t, "eno3");
    CHECK_FALSE(eno.rdma);
    CHECK(eno.netdev == "eno3");
    // The storage HCAs are two functions of one card, behind no GPU's switch.
    CHECK(nic_named(t, "mlx5_2").pci.bus_id == "0000:29:00.1");
    for (const auto& g : t.gpus) CHECK(pci_distance(g.pci, nic_named(t, "mlx5_1").pci) != PciDistance::Switch);
}

TEST_CASE("every fixture loads, with the GPUs and NICs it documents", "[topo]") {
    struct Want {
        const char* file;
        size_t gpus, nics, numa, pus;
    };
    for (const auto& w : {Want{"dgx-h100.xml", 8, 13, 2, 32}, Want{"dgx-a100.xml", 8, 10, 8, 64},
                          Want{"pcie-4gpu.xml", 4, 4, 2, 20}, Want{"snc-2s.xml", 4, 4, 4, 24},
                          Want{"cpu-2numa.xml", 0, 2, 2, 16},
                          Want{"knl-flat.xml", 0, 2, 2, 16}, Want{"xeonmax-flat.xml", 0, 2, 4, 32},
                          Want{"es1000-2gpu.xml", 2, 2, 2, 24}, Want{"mi50-rsmi.xml", 8, 2, 2, 32},
                          Want{"mi50-pci.xml", 8, 2, 2, 32}, Want{"ac922.xml", 4, 5, 6, 16},
                          Want{"elcap-mi300a.xml", 4, 4, 4, 32}}) {
        INFO(w.file);
        const Topology t = must(sys::load_topology_xml(fixture(w.file)));
        CHECK(t.gpus.size() == w.gpus);
        CHECK(t.nics.size() == w.nics);
        CHECK(t.numa_nodes.size() == w.numa);
        CHECK(t.pus.size() == w.pus);
        // SLURM's order: PCI bus ids, except AMD GPUs whose RSMI order hwloc recorded.
        if (t.gpu_order != GpuOrder::AmdRsmi)
            for (size_t i = 1; i < t.gpus.size(); ++i) CHECK(t.gpus[i - 1].pci.bus_id < t.gpus[i].pci.bus_id);
    }
}

TEST_CASE("SNC: NUMA nodes inside a package, devices attached to their NUMA group", "[topo]") {
    const Topology t = must(sys::load_topology_xml(fixture("snc-2s.xml")));
    REQUIRE(t.gpus.size() == 4);
    CHECK(t.gpus[2].pci.numa == 2);
    CHECK(t.gpus[2].pci.package == 1);
    CHECK(t.gpus[2].pci.local_cpus == parse_cpu_list("6-8,18-20"));
    const Nic& m2 = nic_named(t, "mlx5_2");
    CHECK(m2.pci.numa == 3);
    CHECK(pci_distance(t.gpus[2].pci, m2.pci) == PciDistance::Socket);
    CHECK(pci_distance(t.gpus[3].pci, m2.pci) == PciDistance::Switch);
}

TEST_CASE("DGX A100: both GPUs of a switch see both of its HCAs at switch distance", "[topo]") {
    const Topology t = must(sys::load_topology_xml(fixture("dgx-a100.xml")));
    REQUIRE(t.gpus.size() == 8);
    CHECK(t.gpus[0].pci.bus_id == "0000:07:00.0");
    CHECK(t.gpus[0].pci.numa == 3);
    CHECK(pci_distance(t.gpus[0].pci, nic_named(t, "mlx5_0").pci) == PciDistance::Switch);
    CHECK(pci_distance(t.gpus[0].pci, nic_named(t, "mlx5_1").pci) == PciDistance::Switch);
    CHECK(pci_distance(t.gpus[1].pci, nic_named(t, "mlx5_0").pci) == PciDistance::Switch);
    CHECK(pci_distance(t.gpus[0].pci, nic_named(t, "mlx5_4").pci) == PciDistance::Socket);
    CHECK(nic_named(t, "mlx5_4").pci.numa == 0);
}

TEST_CASE("the topology cache round-trips", "[topo]") {
    for (const char* f : {"dgx-h100.xml", "dgx-a100.xml", "pcie-4gpu.xml", "snc-2s.xml", "cpu-2numa.xml"}) {
        INFO(f);
        const Topology t = must(sys::load_topology_xml(fixture(f)));
        const std::string path = temp_path("cache");
        must(sys::write_topology_cache(t, path));
        const Topology back = must(sys::read_topology_cache(path));
        CHECK(serialize_topology(back) == serialize_topology(t));
        CHECK(back.pus.size() == t.pus.size());
        for (size_t i = 0; i < t.pus.size(); ++i) {
            CHECK(back.pus[i].os == t.pus[i].os);
            CHECK(back.pus[i].core == t.pus[i].core);
            CHECK(back.pus[i].numa == t.pus[i].numa);
            CHECK(back.pus[i].package == t.pus[i].package);
        }
        // The same plan from either.
        PlacementRequest r;
        r.local_tasks = 4;
        for (unsigned i = 0; i < t.gpus.size(); ++i) r.gpus.push_back(i);
        r.cpus = all_cpus(t);
        CHECK(format_placement_json(plan_placement(back, r)) == format_placement_json(plan_placement(t, r)));
        // load_topology tells a cache from XML by its first line.
        CHECK(serialize_topology(must(sys::load_topology(path))) == serialize_topology(t));
        std::remove(path.c_str());
    }
}

// Issue 23 item 7: the cache was written through fopen(PATH.tmp.PID, "w"), a
// name anyone could plant a link at in a shared directory. Before the fix
// this wrote the cache into the link's target and left PATH a link to it.
TEST_CASE("the cache is never written through a link planted at its names", "[topo]") {
    char d[] = "/tmp/gangway-topo-link.XXXXXX";
    REQUIRE(::mkdtemp(d));
    const std::string dir = d, path = dir + "/node.cache", victim = dir + "/victim", victim2 = dir + "/victim2";
    std::ofstream(victim) << "precious\n";
    std::ofstream(victim2) << "precious too\n";
    // At the old predictable temporary name (this process's pid) and at the final name.
    REQUIRE(::symlink(victim.c_str(), (path + ".tmp." + std::to_string(::getpid())).c_str()) == 0);
    REQUIRE(::symlink(victim2.c_str(), path.c_str()) == 0);
    const Topology t = must(sys::load_topology_xml(fixture("pcie-4gpu.xml")));
    must(sys::write_topology_cache(t, path));
    auto slurp = [](const std::string& f) {
        std::ifstream in(f);
        return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    };
    CHECK(slurp(victim) == "precious\n");
    CHECK(slurp(victim2) == "precious too\n");
    struct stat st{};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 0777) == (0644 & ~[] { const mode_t m = ::umask(0); ::umask(m); return m; }()));
    CHECK(serialize_topology(must(sys::read_topology_cache(path))) == serialize_topology(t));
    std::string cmd = "rm -rf '" + dir + "'";
    CHECK(std::system(cmd.c_str()) == 0);
}

TEST_CASE("a missing or corrupt cache is a clear error", "[topo]") {
    const std::string path = temp_path("bad");
    CHECK_THROWS_WITH(must(sys::read_topology_cache(path)),
                      Catch::Matchers::ContainsSubstring("cannot be read") && Catch::Matchers::ContainsSubstring("--write-cache"));
    auto write = [&](const std::string& text) {
        std::ofstream(path) << text;
    };
    write("");
    CHECK_THROWS_WITH(must(sys::read_topology_cache(path)), Catch::Matchers::ContainsSubstring("is empty"));
    write("hello\n");
    CHECK_THROWS_WITH(must(sys::read_topology_cache(path)), Catch::Matchers::ContainsSubstring("not a gangway topology cache"));
    const Topology t = must(sys::load_topology_xml(fixture("pcie-4gpu.xml")));
    const std::string good = serialize_topology(t);
    write(good.substr(0, good.size() / 2));
    CHECK_THROWS_WITH(must(sys::read_topology_cache(path)), Catch::Matchers::ContainsSubstring("corrupt"));
    write("gangway-topology 1\ncore 0-x\nend\n");
    CHECK_THROWS_WITH(must(sys::read_topology_cache(path)), Catch::Matchers::ContainsSubstring("line 2"));
    write("gangway-topology 1\nnuma 0 0 0-3\nend\n");
    CHECK_THROWS_WITH(must(sys::read_topology_cache(path)), Catch::Matchers::ContainsSubstring("no CPUs"));
    write("gangway-topology 1\ncore 0,1\ncore 1\nend\n");
    CHECK_THROWS_WITH(must(sys::read_topology_cache(path)), Catch::Matchers::ContainsSubstring("two cores"));
    std::remove(path.c_str());
    CHECK_THROWS_WITH(must(sys::write_topology_cache(t, "/nonexistent-dir/cache")), Catch::Matchers::ContainsSubstring("cannot write"));
}

// I/O returns a Result (lib/base/result.hpp): a refusal, I/O or parse, is the
// loader's Failure with the user's line, never an exception to catch.
TEST_CASE("the topology loaders return their refusal, they do not throw", "[topo]") {
    const std::string path = temp_path("result");
    std::ofstream(path) << "gangway-topology 1\ncore 0-x\nend\n";
    for (const auto& load : {std::function<Result<Topology>()>([&] { return sys::read_topology_cache(path); }),
                             std::function<Result<Topology>()>([&] { return sys::load_topology(path); }),
                             std::function<Result<Topology>()>([] { return sys::load_topology_xml("/nonexistent.xml"); }),
                             std::function<Result<Topology>()>([] { return sys::load_topology("/nonexistent.xml"); })}) {
        std::optional<Result<Topology>> r;
        REQUIRE_NOTHROW(r.emplace(load()));
        CHECK_FALSE(*r);
        CHECK_FALSE(r->error().empty());
    }
    CHECK_THAT(sys::read_topology_cache(path).error(), Catch::Matchers::ContainsSubstring("line 2"));
    std::optional<Result<void>> w;
    REQUIRE_NOTHROW(w.emplace(sys::write_topology_cache(must(sys::load_topology_xml(fixture("pcie-4gpu.xml"))),
                                                        "/nonexistent-dir/cache")));
    CHECK_THAT(w->error(), Catch::Matchers::ContainsSubstring("cannot write"));
    std::remove(path.c_str());
}

TEST_CASE("a missing or broken XML is a clear error", "[topo]") {
    CHECK_THROWS_WITH(must(sys::load_topology_xml("/nonexistent.xml")), Catch::Matchers::ContainsSubstring("cannot be read"));
    const std::string path = temp_path("xml");
    std::ofstream(path) << "<topology><nonsense";
    // Truncated: said so, with hwloc's own reason.
    CHECK_THROWS_WITH(must(sys::load_topology_xml(path)), Catch::Matchers::ContainsSubstring("is truncated") &&
                                                        Catch::Matchers::ContainsSubstring("hwloc: "));
    std::ofstream(path) << "";
    CHECK_THROWS_WITH(must(sys::load_topology_xml(path)), Catch::Matchers::ContainsSubstring("is empty"));
    {
        std::ifstream in(fixture("cpu-2numa.xml"));
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        text.replace(text.find("version=\"2.0\""), 13, "version=\"3.0\"");
        std::ofstream(path) << text;
    }
    // hwloc 2.9 refuses the version; 2.12 and later read this file (its content is still v2):
    // where it is refused, the advice must be the hwloc 3 one.
    try {
        must(sys::load_topology_xml(path));
        SUCCEED("this hwloc reads a version=\"3.0\" file");
    } catch (const std::exception& e) {
        CHECK_THAT(std::string(e.what()), Catch::Matchers::ContainsSubstring("hwloc 3's XML format") &&
                                              Catch::Matchers::ContainsSubstring("--export-xml-flags v2"));
    }
    std::remove(path.c_str());
}

TEST_CASE("display chips are not GPUs: ES1000, ASPEED, Matrox", "[topo]") {
    CHECK_FALSE(is_gpu_pci(0x1002, 0x515e, 0x0300));  // ATI ES1000
    CHECK_FALSE(is_gpu_pci(0x1002, 0x5969, 0x0300));  // ES1000, other id
    CHECK_FALSE(is_gpu_pci(0x1a03, 0x2000, 0x0300));  // ASPEED AST2500/2600
    CHECK_FALSE(is_gpu_pci(0x102b, 0x0534, 0x0300));  // Matrox G200eR
    CHECK_FALSE(is_gpu_pci(0x10de, 0x1db4, 0x0200));  // not a display class
    CHECK(is_gpu_pci(0x1002, 0x66a1, 0x0380));        // MI50
    CHECK(is_gpu_pci(0x1002, 0x6860, 0x0300));        // MI25, a VGA-class Instinct
    CHECK(is_gpu_pci(0x10de, 0x2230, 0x0300));        // RTX A6000, VGA class
    CHECK(is_gpu_pci(0x10de, 0x2330, 0x0302));        // H100
    const Topology es = must(sys::load_topology_xml(fixture("es1000-2gpu.xml")));
    REQUIRE(es.gpus.size() == 2);
    CHECK(es.gpus[0].pci.bus_id == "0000:04:00.0");
    const Topology xm = must(sys::load_topology_xml(fixture("xeonmax-flat.xml")));
    CHECK(xm.gpus.empty());
    const Topology mi = must(sys::load_topology_xml(fixture("mi50-rsmi.xml")));
    CHECK(mi.gpus.size() == 8);  // the ASPEED VGA at c2:00.0 is not one
}

TEST_CASE("AMD GPUs in SLURM's RSMI order where hwloc recorded it, else PCI order with a note", "[topo]") {
    const Topology r = must(sys::load_topology_xml(fixture("mi50-rsmi.xml")));
    CHECK(r.gpu_order == GpuOrder::AmdRsmi);
    std::vector<std::string> buses;
    for (const auto& g : r.gpus) buses.push_back(g.pci.bus_id.substr(5, 2));
    CHECK(buses == std::vector<std::string>{"63", "43", "03", "27", "e3", "c3", "83", "a3"});
    CHECK(r.gpus[0].name == "rsmi0");
    // The cache keeps the order (and says it again when read back).
    const Topology back = parse_topology(serialize_topology(r), "cache");
    CHECK(back.gpu_order == GpuOrder::AmdRsmi);
    CHECK(back.gpus[0].pci.bus_id == "0000:63:00.0");
    const Topology p = must(sys::load_topology_xml(fixture("mi50-pci.xml")));
    CHECK(p.gpu_order == GpuOrder::AmdPciBus);
    CHECK(p.gpus[0].pci.bus_id == "0000:03:00.0");
    CHECK(std::string(describe(p.gpu_order)).find("SLURM's RSMI order can differ") != std::string::npos);
    CHECK(must(sys::load_topology_xml(fixture("dgx-h100.xml"))).gpu_order == GpuOrder::PciBus);
    // OpenCL names count when there are no rsmi ones.
    Topology o;
    for (auto [bus, name] : {std::pair{"0000:03:00.0", "opencl0d1"}, std::pair{"0000:43:00.0", "opencl0d0"}}) {
        Gpu g;
        g.pci.bus_id = bus;
        g.vendor = 0x1002;
        g.name = name;
        o.gpus.push_back(g);
    }
    order_gpus(o);
    CHECK(o.gpu_order == GpuOrder::AmdOpenCl);
    CHECK(o.gpus[0].pci.bus_id == "0000:43:00.0");
}

TEST_CASE("memory-only NUMA nodes do not take their parent's CPUs", "[topo]") {
    const Topology k = must(sys::load_topology_xml(fixture("knl-flat.xml")));
    REQUIRE(k.numa_nodes.size() == 2);
    CHECK(k.numa_nodes[1].cpus == k.numa_nodes[0].cpus);  // hwloc 2 gives MCDRAM the package's cpuset
    for (const auto& pu : k.pus) CHECK(pu.numa == 0);
    const Topology a = must(sys::load_topology_xml(fixture("ac922.xml")));
    CHECK(a.numa_nodes.size() == 6);  // 0, 8 and the GPUs' memory 252-255
    CHECK(a.gpus[0].pci.numa == 0);
    CHECK(a.gpus[3].pci.numa == 8);
}

// Hidden (run with "[live]"): live discovery goes through hwloc's PCI plugin,
// whose libpciaccess leaks ~1 KiB, which fails the AddressSanitizer run of the
// unit tests. tests/topo_cli.sh covers the live path in the normal build.
TEST_CASE("this machine loads live", "[.][topo][live]") {
    const Topology t = must(sys::load_live_topology());
    CHECK_FALSE(t.pus.empty());
    CHECK_FALSE(t.cores.empty());
}

TEST_CASE("SLURM core ids map to PUs", "[topo]") {
    const Topology t = must(sys::load_topology_xml(fixture("dgx-h100.xml")));
    CHECK(pus_of_cores(t, {0, 1, 8}) == CpuList{0, 1, 8, 16, 17, 24});
    CHECK_THROWS_WITH(pus_of_cores(t, {16}), Catch::Matchers::ContainsSubstring("core 16 is not on this node"));
}

TEST_CASE("a cpu list ending at the largest unsigned ends (SLURM_STEP_GPUS reaches it; it looped forever)") {
    CHECK(parse_cpu_list("4294967295") == CpuList{4294967295u});
    CHECK(parse_cpu_list("4294967294-4294967295") == CpuList{4294967294u, 4294967295u});
}

// Found by tests/fuzz/cpu_list: each range was bounded, the list was not, and
// 400 ranges of 2^20 CPUs (4 KiB, a variable's size) took 3 minutes to parse.
TEST_CASE("a cpu list is bounded as a whole, repeated ranges included") {
    std::string many = "0-1048575";
    CHECK(parse_cpu_list(many).size() == kMaxCpuListEntries);
    for (int i = 0; i < 400; ++i) many += ",0-1048575";
    CHECK_THROWS_WITH(parse_cpu_list(many), Catch::Matchers::ContainsSubstring("more than 1048576 entries"));
    CHECK_THROWS_WITH(parse_cpu_list("0-0,1-1048576"), Catch::Matchers::ContainsSubstring("more than 1048576 entries"));
    CHECK(parse_cpu_list("0-1048574,7").size() == kMaxCpuListEntries - 1);
}

// Issue 23, item 3 and the parsers' budget: a cpu list of 2^20 entries went
// through a std::set of them (40 MB and a fifth of a second); GPU lists, as
// `gangway topo --gpus` takes them, were bounded part by part, so twenty
// full-range parts took seconds.
TEST_CASE("a cpu list costs its length and its CPUs, not a tree of them") {
    using gangway::test::cost_of;
    // The bound (topology.hpp): the CPUs out (4 bytes each, at most 2^20) and its
    // ranges (8 bytes for each item, an item takes 2 bytes of input).
    const auto bound = [](std::size_t input) { return 4 * kMaxCpuListEntries + 4 * input + 4096; };
    CpuList got;
    auto c = cost_of([&] { got = parse_cpu_list("0-1048575"); });
    CHECK(got.size() == kMaxCpuListEntries);
    CHECK(c.peak_bytes <= bound(9));
    CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    // 64 KB of single CPUs, in reverse order, and of overlapping ranges.
    std::string singles, ranges;
    for (unsigned k = 13000; singles.size() < 65000; --k) singles += std::to_string(k) + ",";
    singles += "0";
    for (unsigned k = 0; ranges.size() < 65000; ++k) ranges += std::to_string(k) + "-" + std::to_string(k + 80) + ",";
    ranges += "0";
    for (const std::string* in : {&singles, &ranges}) {
        c = cost_of([&] { got = parse_cpu_list(*in); });
        CHECK_FALSE(c.refused);
        CHECK(std::is_sorted(got.begin(), got.end()));
        CHECK(std::adjacent_find(got.begin(), got.end()) == got.end());
        CHECK(c.peak_bytes <= bound(in->size()));
        CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
    }
    CHECK(parse_cpu_list("9,3-5,4,0-1,2") == CpuList{0, 1, 2, 3, 4, 5, 9});
}

TEST_CASE("a GPU index list keeps order and repeats, and is bounded as a whole") {
    using gangway::test::cost_of;
    CHECK(parse_index_list("3,0-1,1") == std::vector<unsigned>{3, 0, 1, 1});
    CHECK(parse_index_list("7\n") == std::vector<unsigned>{7});
    CHECK_THROWS_WITH(parse_index_list("1,,2"), Catch::Matchers::ContainsSubstring("empty element"));
    std::string twenty = "0-1048575";
    for (int i = 0; i < 19; ++i) twenty += ",0-1048575";
    const auto c = cost_of([&] { (void)parse_index_list(twenty); });
    CHECK(c.refused);
    CHECK_THAT(c.error, Catch::Matchers::ContainsSubstring("more than 1048576 entries"));
    CHECK(c.peak_bytes <= 4 * kMaxCpuListEntries + 4 * twenty.size() + 4096);
    CHECK(c.cpu_seconds < 1.0 * gangway::test::kSlowdown);
}

// Found by tests/fuzz/topology_cache: each line's list was bounded, the file's
// were not, and a handful of "core 8-777777" lines took over 10 s.
TEST_CASE("a topology cache's CPU lists are bounded in all") {
    std::string cache = "gangway-topology 1\n";
    for (int i = 0; i < 3; ++i) cache += "numa 0 0 0-524287\n";  // not cores: a PU past 65535 is refused first
    CHECK_THROWS_WITH(parse_topology(cache, "t.cache"),
                      Catch::Matchers::ContainsSubstring("at line 4 (more than 1048576 CPUs listed in all)"));
}

TEST_CASE("NICs keep their PCI ids, in the cache too; a version 1 cache still loads (issue 23 item 10)", "[topo]") {
    const Topology t = must(sys::load_topology_xml(fixture("elcap-mi300a.xml")));
    const Nic& hsi0 = nic_named(t, "hsi0");
    CHECK(hsi0.vendor == 0x17db);
    CHECK(hsi0.device == 0x0501);
    CHECK_FALSE(hsi0.rdma);
    CHECK(hsi0.netdev == "hsi0");
    CHECK(nic_named(must(sys::load_topology_xml(fixture("dgx-h100.xml"))), "mlx5_0").vendor == 0x15b3);
    const std::string cache = serialize_topology(t);
    CHECK(cache.rfind("gangway-topology 2\n", 0) == 0);
    CHECK(cache.find("nic hsi0 0000:01:00.0 hsi0 0 - 0 0 0-3,16-19 0000:00:01.1,host:0000:00 17db 0501\n") !=
          std::string::npos);
    const Topology back = parse_topology(cache, "cache");
    CHECK(nic_named(back, "hsi0").vendor == 0x17db);
    CHECK(nic_named(back, "hsi0").device == 0x0501);
    // A cache written before: version 1, nic lines without ids.
    const std::string v1 =
        "gangway-topology 1\npackage 0 0-1\nnuma 0 0 0-1\ncore 0\ncore 1\n"
        "nic hsn0 0000:01:00.0 hsn0 0 - 0 0 0-1 host:0000:00\nend\n";
    const Topology old = parse_topology(v1, "old.cache");
    REQUIRE(old.nics.size() == 1);
    CHECK(old.nics[0].vendor == 0);
    CHECK(old.nics[0].netdev == "hsn0");
    // Each version with its own nic lines only.
    CHECK_THROWS_WITH(parse_topology("gangway-topology 1\ncore 0\nnic a 0000:01:00.0 - 1 - 0 0 - - 15b3 1021\nend\n", "c"),
                      Catch::Matchers::ContainsSubstring("corrupt at line 3"));
    CHECK_THROWS_WITH(parse_topology("gangway-topology 2\ncore 0\nnic a 0000:01:00.0 - 1 - 0 0 - -\nend\n", "c"),
                      Catch::Matchers::ContainsSubstring("corrupt at line 3"));
    CHECK_THROWS_WITH(parse_topology("gangway-topology 3\ncore 0\nend\n", "c"),
                      Catch::Matchers::ContainsSubstring("is not a gangway topology cache (first line is not \"gangway-topology 2\")"));
    CHECK(is_fabric_nic_pci(0x17db, 0x0501));
    CHECK_FALSE(is_fabric_nic_pci(0x15b3, 0x1021));
    CHECK_FALSE(is_fabric_nic_pci(0, 0));
}
