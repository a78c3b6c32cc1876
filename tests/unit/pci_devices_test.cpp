// One set of sysfs readers for PCI GPUs, RDMA ports and bus ids (issue 32):
// the plugin's pci_has_gpu, the node card's count_gpus and the node check's
// read_pci_gpus see the same GPUs on one tree; the card and the verbs stage
// read their ports through read_ib_ports; a GPU library's bus id is spelt as
// sysfs spells it by one function.
#include "catch_compat.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include "../../lib/base/pci_bus_id.hpp"
#include "../../lib/sys/health/node_facts.hpp"
#include "../../lib/sys/devices/ib_ports.hpp"
#include "../../lib/sys/devices/node_card.hpp"
#include "../../lib/sys/node/pci_devices.hpp"
#include "temp_dir.hpp"

using namespace gangway;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
}

void pci(const fs::path& root, const std::string& bus, const char* cls, const char* vendor, const char* device) {
    const fs::path d = root / "sys/bus/pci/devices" / bus;
    put(d / "class", cls);
    put(d / "vendor", vendor);
    put(d / "device", device);
}

}  // namespace

TEST_CASE("one PCI GPU reader: the plugin, the node card and the node check count the same GPUs", "[sysfs][pci]") {
    test::TempDir t;
    const fs::path& r = t.path;
    pci(r, "0000:c1:00.0", "0x030200", "0x10de", "0x2330");  // H100: a 3D controller
    pci(r, "0000:1a:00.0", "0x038000", "0x10de", "0x20b5");  // an NVIDIA GPU as "display controller, other"
    pci(r, "0000:03:00.0", "0x030000", "0x1002", "0x515e");  // the BMC's ES1000: no GPU
    pci(r, "0000:9a:00.0", "0x038000", "0x1002", "0x74a1");  // MI300X
    pci(r, "0000:07:00.0", "0x068000", "0x10de", "0x22a3");  // an NVSwitch: a bridge, no GPU
    pci(r, "0000:20:00.0", "0x020700", "0x15b3", "0x1021");  // a ConnectX-7
    const auto gpus = sys::pci_gpus(r.string());
    REQUIRE(gpus.size() == 3);
    CHECK(gpus[0].bus_id == "0000:1a:00.0");  // bus-id order
    CHECK(gpus[1].bus_id == "0000:9a:00.0");
    CHECK(gpus[1].vendor == 0x1002);
    CHECK(gpus[1].device == 0x74a1);
    CHECK(gpus[2].bus_id == "0000:c1:00.0");
    CHECK(gpus[2].pci_class == 0x030200);
    int visited = 0;
    sys::each_pci_gpu(r.string(), [&](const sys::PciFunction&) { return ++visited < 2; });
    CHECK(visited == 2);  // the walk stops when told
    CHECK(sys::pci_has_gpu(r.string()));
    // The node check's GPUs are these; the card counts NVIDIA's of them, the
    // 0x0380 one too (it counted 3D and VGA controllers only, so a node whose
    // GPU reports class 0x0380 showed one GPU fewer in the job check).
    const auto facts = sys::read_pci_gpus(r.string());
    REQUIRE(facts.size() == 3);
    CHECK(facts[0].pci.bus_id == "0000:1a:00.0");
    CHECK(sys::count_gpus(r.string()) == 2);
}

TEST_CASE("no PCI bus, or no GPU on it: none", "[sysfs][pci]") {
    test::TempDir t;
    CHECK(sys::pci_gpus(t.path.string()).empty());
    CHECK_FALSE(sys::pci_has_gpu(t.path.string()));
    pci(t.path, "0000:03:00.0", "0x030000", "0x1002", "0x515e");
    pci(t.path, "0000:04:00.0", "", "0x10de", "0x2330");  // no class: not a GPU
    CHECK_FALSE(sys::pci_has_gpu(t.path.string()));
    CHECK(sys::count_gpus(t.path.string()) == 0);
}

TEST_CASE("one RDMA port reader: brief for the card, full for the judges", "[sysfs][ib]") {
    test::TempDir t;
    const fs::path port = t.path / "sys/class/infiniband/mlx5_10/ports/1";
    put(port / "state", "4: ACTIVE");
    put(port / "phys_state", "5: LinkUp");
    put(port / "rate", "400 Gb/sec (4X NDR)");
    put(port / "link_layer", "InfiniBand");
    put(port / "gids/0", "fe80:0000:0000:0000:0000:0000:0000:0001");
    put(t.path / "sys/class/infiniband/mlx5_2/ports/1/state", "1: DOWN");
    put(t.path / "sys/class/infiniband/mlx5_2/ports/notaport/state", "4: ACTIVE");
    CHECK(sys::ib_devices(t.path.string()) == std::vector<std::string>{"mlx5_2", "mlx5_10"});
    const auto full = sys::read_ib_ports(t.path.string());
    REQUIRE(full.size() == 2);
    CHECK(full[1].hca == "mlx5_10");
    CHECK(full[1].state_name == "ACTIVE");
    CHECK(full[1].phys_name == "LinkUp");
    CHECK(full[1].rate_gbps == 400);
    CHECK(full[1].gids.size() == 1);
    const auto brief = sys::read_ib_ports(t.path.string(), {"mlx5_10"}, sys::PortDetail::brief);
    REQUIRE(brief.size() == 1);
    CHECK(brief[0].state == 4);
    CHECK(brief[0].rate_gbps == 400);
    CHECK(brief[0].phys_name.empty());
    CHECK(brief[0].gids.empty());
    // The card's NICs are these ports.
    const auto nics = sys::read_nics(t.path.string());
    REQUIRE(nics.size() == 2);
    CHECK(nics[0].name == "mlx5_2/1");
    CHECK(nics[0].state == "DOWN");
    CHECK(nics[1].name == "mlx5_10/1");
    CHECK(nics[1].rate_mbps == 400000);
    CHECK(sys::ib_port_dir(t.path.string(), "mlx5_10", 1) == (t.path / "sys/class/infiniband/mlx5_10/ports/1").string());
}

TEST_CASE("a GPU library's bus id in sysfs's spelling, by one function", "[sysfs][pci]") {
    CHECK(sysfs_bus_id("00000000:17:00.0") == "0000:17:00.0");  // NVML
    CHECK(sysfs_bus_id("0000:1A:00.0") == "0000:1a:00.0");      // cuDeviceGetPCIBusId, upper case
    CHECK(sysfs_bus_id("00000001:17:00.0") == "0001:17:00.0");
    CHECK(sysfs_bus_id("GPU-XYZ") == "gpu-xyz");                // kept, lower case
}
