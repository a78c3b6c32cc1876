#include "catch_compat.hpp"

#include <filesystem>
#include <fstream>
#include <unistd.h>  // getpid

#include "../../lib/base/error.hpp"
#include "../../lib/preflight/card.hpp"
#include "../../lib/preflight/cards_check.hpp"
#include "../../lib/preflight/version_text.hpp"
#include "../../lib/sys/devices/node_card.hpp"
#include "test_cards.hpp"

using namespace gangway;
using namespace gangway::preflight;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
}

struct TempTree {
    fs::path root;
    TempTree() {
        root = fs::temp_directory_path() / ("gangway-card-test-" + std::to_string(::getpid()));
        fs::remove_all(root);
    }
    ~TempTree() { fs::remove_all(root); }
};

}  // namespace

TEST_CASE("a card survives the wire") {
    Card c = test_card(3, 8, 400000, "2.21.5");
    c.hostname = "gpu-03";
    c.data_port = 61002;
    c.nics.push_back({"mlx5_0/1", "ib", "ACTIVE", 400000, {}});
    c.nics[0].addrs.push_back("fe80::1");
    Kv kv;
    card_to_kv(c, kv);
    const Card back = card_from_kv(decode_kv(encode_kv(kv)));
    CHECK(back.node_rank == 3);
    CHECK(back.node == "node3");
    CHECK(back.hostname == "gpu-03");
    CHECK(back.data_port == 61002);
    CHECK(back.gpus == 8);
    REQUIRE(back.nics.size() == 2);
    CHECK(back.nics[0].addrs == std::vector<std::string>{"10.0.0.4", "fe80::1"});
    CHECK(back.nics[1].kind == "ib");
    CHECK(back.versions == c.versions);
    kv.erase("card.data_port");
    CHECK_THROWS_WITH(card_from_kv(kv), Catch::Matchers::ContainsSubstring("card.data_port"));
}

TEST_CASE("cards that disagree with the majority are named") {
    std::vector<Card> cards{test_card(0, 8, 400000, "2.21.5"), test_card(1, 8, 400000, "2.21.5"), test_card(2, 7, 200000, "2.21.5"),
                            test_card(3, 8, 400000, "2.19.3")};
    const auto mm = compare_cards(cards);
    REQUIRE(mm.size() == 3);
    CHECK(mm[0].node_rank == 2);
    CHECK(mm[0].what == "gpus");
    CHECK(mm[0].value == "7");
    CHECK(mm[0].expected == "8");
    CHECK(mm[1].node_rank == 2);
    CHECK(mm[1].what == "nic rate eth1");
    CHECK(mm[2].node_rank == 3);
    CHECK(mm[2].what == "version nccl");
    CHECK(mm[2].expected == "2.21.5");
    // Kernel versions differ on every card but are not findings; equal cards give none.
    CHECK(compare_cards({test_card(0, 8, 1000, "x"), test_card(1, 8, 1000, "x")}).empty());
}

TEST_CASE("a card carries the data interface and the IB ports, not the host's other interfaces") {
    std::vector<Nic> all{{"lo", "net", "unknown", -1, {"127.0.0.1"}},
                         {"eth1", "net", "up", 100000, {"10.0.0.1"}},
                         {"docker0", "net", "down", -1, {"172.17.0.1"}},
                         {"veth12ab", "net", "up", 10000, {}},
                         {"mlx5_0/1", "ib", "ACTIVE", 400000, {}}};
    auto kept = card_nics(all, "eth1");
    REQUIRE(kept.size() == 2);
    CHECK(kept[0].name == "eth1");
    CHECK(kept[1].name == "mlx5_0/1");
    // What the checks read of a card is the same with the full list and the kept one.
    Card full = test_card(0, 8, 100000, "2.21.5"), slim = full;
    full.nics = all;
    slim.nics = kept;
    CHECK(data_iface_problem(full) == data_iface_problem(slim));
    CHECK(compare_cards({full, slim}).empty());
    // No data interface (none named, none found): nothing but the IB ports, and the check says so as before.
    full.data_iface = slim.data_iface = "";
    slim.nics = card_nics(all, "");
    CHECK(slim.nics.size() == 1);
    CHECK(data_iface_problem(slim) == data_iface_problem(full));
}

TEST_CASE("NICs, GPUs and versions from a sysfs fixture tree") {
    TempTree t;
    const auto& r = t.root;
    put(r / "sys/class/net/lo/operstate", "unknown");
    put(r / "sys/class/net/eth0/operstate", "up");
    put(r / "sys/class/net/eth0/speed", "25000");
    put(r / "sys/class/net/eth1/operstate", "lowerlayerdown");
    put(r / "sys/class/net/eth1/speed", "-1");
    put(r / "sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE");
    put(r / "sys/class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)");
    put(r / "sys/class/infiniband/mlx5_1/ports/1/state", "1: DOWN");
    put(r / "sys/class/infiniband/mlx5_1/ports/1/rate", "10 Gb/sec (4X SDR)");
    for (int i = 0; i < 4; ++i) {
        const auto dev = r / ("sys/bus/pci/devices/0000:1" + std::to_string(i) + ":00.0");
        put(dev / "vendor", "0x10de");
        put(dev / "class", i == 3 ? "0x068000" : "0x030200");  // the 4th is an NVSwitch bridge, not a GPU
    }
    put(r / "sys/bus/pci/devices/0000:20:00.0/vendor", "0x15b3");
    put(r / "sys/bus/pci/devices/0000:20:00.0/class", "0x020700");
    put(r / "proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar 5 2024");
    put(r / "usr/local/cuda/version.json", R"({"cuda" : {"name" : "CUDA SDK", "version" : "12.4.1"}})");
    put(r / "usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5", "");
    put(r / "usr/lib/x86_64-linux-gnu/libnccl.so.2", "");
    put(r / "proc/sys/kernel/osrelease", "6.1.0-test");

    const auto nics = sys::read_nics(r.string());
    REQUIRE(nics.size() == 4);
    CHECK(nics[0].name == "eth0");
    CHECK(nics[0].state == "up");
    CHECK(nics[0].rate_mbps == 25000);
    CHECK(nics[1].name == "eth1");
    CHECK(nics[1].state == "lowerlayerdown");
    CHECK(nics[1].rate_mbps == -1);
    CHECK(nics[2].name == "mlx5_0/1");
    CHECK(nics[2].state == "ACTIVE");
    CHECK(nics[2].rate_mbps == 400000);
    CHECK(nics[3].state == "DOWN");
    CHECK(sys::count_gpus(r.string()) == 3);
    const auto v = sys::read_versions(r.string());
    CHECK(v.at("driver") == "550.54.15");
    CHECK(v.at("cuda") == "12.4.1");
    CHECK(v.at("nccl") == "2.21.5");
    CHECK(v.at("kernel") == "6.1.0-test");
}

TEST_CASE("an IB rate no port has is unknown, not undefined behaviour (issue 15, item 10)") {
    TempTree t;
    const auto& r = t.root;
    put(r / "sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE");
    put(r / "sys/class/infiniband/mlx5_0/ports/1/rate", "1e300 Gb/sec (4X NDR)");
    put(r / "sys/class/infiniband/mlx5_1/ports/1/state", "4: ACTIVE");
    put(r / "sys/class/infiniband/mlx5_1/ports/1/rate", "nan Gb/sec");
    const auto nics = sys::read_nics(r.string());
    REQUIRE(nics.size() == 2);
    CHECK(nics[0].rate_mbps == -1);
    CHECK(nics[1].rate_mbps == -1);
}

TEST_CASE("an empty tree: no NICs, no GPUs, versions \"none\"") {
    TempTree t;
    fs::create_directories(t.root);
    CHECK(sys::read_nics(t.root.string()).empty());
    CHECK(sys::count_gpus(t.root.string()) == 0);
    const auto v = sys::read_versions(t.root.string());
    CHECK(v.at("driver") == "none");
    CHECK(v.at("cuda") == "none");
    CHECK(v.at("nccl") == "none");
}

TEST_CASE("version texts: the driver's /proc line, CUDA's version files, NCCL's file names") {
    using namespace gangway::preflight;
    CHECK(driver_version_from_proc("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar 5 2024") ==
          "550.54.15");
    CHECK(driver_version_from_proc("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  Release "
                                   "Build  (dvs-builder@U16-I3-B03-4-3)") == "535.104.05");
    CHECK(driver_version_from_proc("NVRM version: something else 1.2.3").empty());
    CHECK(driver_version_from_proc("").empty());

    CHECK(cuda_version_from_json(R"({"cuda" : {"name" : "CUDA SDK", "version" : "12.4.1"}, "cuda_cccl" : )"
                                 R"({"name" : "CUDA C++ Core Compute Libraries", "version" : "12.4.127"}})") == "12.4.1");
    // The "cuda" object is found by its key, not by being first.
    CHECK(cuda_version_from_json(R"({"cuda_nvcc":{"version":"13.0.48"},"cuda":{"name":"CUDA SDK","version":"13.0.0"}})") ==
          "13.0.0");
    CHECK(cuda_version_from_json(R"({"cuda" : {"name" : "CUDA SDK"}, "x": {"version": "1.0"}})").empty());
    CHECK(cuda_version_from_json("not json").empty());
    CHECK(cuda_version_from_txt("CUDA Version 11.0.228") == "11.0.228");
    CHECK(cuda_version_from_txt("CUDA 11").empty());

    CHECK(nccl_version_from_soname("libnccl.so.2.21.5") == "2.21.5");
    CHECK(nccl_version_from_soname("libnccl.so.2").empty());
    CHECK(nccl_version_from_soname("libnccl.so").empty());
    CHECK(nccl_version_from_soname("libnccl.so.2.21.5.bak").empty());
    CHECK(nccl_version_from_soname("libnccl.so.2..5").empty());
    CHECK(nccl_version_from_soname("libnccl-net.so.2.21.5").empty());

    CHECK(version_less("2.9.9", "2.18.5"));
    CHECK_FALSE(version_less("2.18.5", "2.9.9"));
    CHECK_FALSE(version_less("2.18.5", "2.18.5"));
    CHECK(version_less("12.4", "12.4.1"));
    CHECK_FALSE(version_less("12.4.0", "12.4"));
}

TEST_CASE("the newest NCCL file is taken by number, not by text") {
    TempTree t;
    put(t.root / "usr/lib/x86_64-linux-gnu/libnccl.so.2.9.9", "");
    put(t.root / "usr/lib/x86_64-linux-gnu/libnccl.so.2.18.5", "");
    put(t.root / "usr/lib/x86_64-linux-gnu/libnccl.so.2", "");
    CHECK(sys::read_versions(t.root.string()).at("nccl") == "2.18.5");
}

TEST_CASE("a card with very many NICs still fits a hello before authentication") {
    Card c;
    c.node = "n1";
    for (int i = 0; i < 2000; ++i)
        c.nics.push_back({"veth" + std::to_string(i), "net", "up", 10000, {"fe80::1234:5678:9abc:" + std::to_string(i)}});
    Kv kv{{"rank", "0"}, {"node_rank", "0"}, {"local", "0"}, {"speaker", "1"}};
    card_to_kv(c, kv);
    CHECK(encode_kv(kv).size() <= kMaxCardBytes + 256);
    CHECK(encode_kv(kv).size() < kMaxFirstFrame);
    const auto back = card_from_kv(kv);
    CHECK(back.nics.size() > 50);
    CHECK(back.nics.size() < 2000);
    CHECK(back.nics[0].name == "veth0");
}
