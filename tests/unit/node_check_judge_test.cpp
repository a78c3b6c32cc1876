// The node check's judgement (lib/health/judge*.cpp, xid): figures in,
// records out, each failure with the one line a drain reason names.
#include "catch_compat.hpp"

#include <cstdio>

#include "../../lib/health/judge.hpp"
#include "../../lib/health/kmsg_record.hpp"
#include "../../lib/health/render.hpp"
#include "../../lib/health/xid.hpp"

using namespace gangway;
using namespace gangway::health;

namespace {

const Record* find(const std::vector<Record>& rs, Check c, const std::string& dev) {
    for (const auto& r : rs)
        if (r.check == c && r.device == dev) return &r;
    return nullptr;
}

GpuFacts gpu_at(const std::string& bus, int width = 16, int gen = 5, const std::string& model = "") {
    GpuFacts g;
    g.pci.bus_id = bus;
    g.pci.link = {gen, 5, width, 16};
    g.vendor = 0x10de;
    g.model = model;
    return g;
}

PortFacts port(const std::string& hca, int state, int phys, double rate, unsigned width = 4) {
    PortFacts f;
    f.port.hca = hca;
    f.port.port = 1;
    f.port.state = state;
    f.port.state_name = state == 4 ? "ACTIVE" : state == 2 ? "INIT" : "DOWN";
    f.port.phys_state = phys;
    f.port.phys_name = phys == 5 ? "LinkUp" : phys == 2 ? "Polling" : "Disabled";
    f.port.rate_gbps = rate;
    f.port.width = width;
    f.port.link_layer = "InfiniBand";
    return f;
}

}  // namespace

TEST_CASE("inventory: a GPU missing against gres.conf, a wrong model, NICs and ports against the site") {
    GresGpus none, gres{8u, "h100", "gres.conf"};
    const auto e = expected_from(SiteConf{}, none, gres);
    CHECK(e.gpus == 8u);
    CHECK(e.gpus_source == "gres.conf");
    CHECK(e.model == "h100");
    std::vector<GpuFacts> gpus;
    for (int i = 0; i < 7; ++i) gpus.push_back(gpu_at("0000:1" + std::to_string(i) + ":00.0", 16, 5, "NVIDIA H100 80GB HBM3"));
    gpus[3].model = "NVIDIA A100-SXM4-80GB";
    auto rs = judge_inventory(gpus, {}, {}, e);
    const auto* c = find(rs, Check::gpu_count, "node");
    REQUIRE(c);
    CHECK(c->status == Status::failed);
    CHECK(c->reason == "gpus 7 of 8 (gres.conf)");
    CHECK(c->figure == "7");
    CHECK(c->expected == "8");
    const auto* m = find(rs, Check::gpu_model, "gpu 0000:13:00.0");
    REQUIRE(m);
    CHECK(m->status == Status::failed);
    CHECK(m->reason == "gpu 0000:13:00.0 is a NVIDIA A100-SXM4-80GB, not h100 (gres.conf Type=)");
    CHECK(find(rs, Check::gpu_model, "gpu 0000:12:00.0")->status == Status::ok);

    // The site file wins over SLURM's files; more GPUs than expected is not a failure.
    SiteConf site;
    site.gpus = 4;
    site.nics = 2;
    site.ports = 2;
    GresGpus slurm{8u, "", "slurm.conf Gres="};
    const auto e2 = expected_from(site, slurm, gres);
    CHECK(e2.gpus == 4u);
    CHECK(e2.gpus_source == "node-check.conf");
    rs = judge_inventory(gpus, {{"mlx5_0", {}}}, {port("mlx5_0", 4, 5, 200)}, e2);
    CHECK(find(rs, Check::gpu_count, "node")->status == Status::ok);
    CHECK(find(rs, Check::nic_count, "node")->reason == "nics 1 of 2 (node-check.conf)");
    CHECK(find(rs, Check::port_count, "node")->reason == "ports 1 of 2 (node-check.conf)");
    // slurm.conf before gres.conf; no expectation at all: the count is only recorded.
    CHECK(expected_from(SiteConf{}, slurm, gres).gpus_source == "slurm.conf Gres=");
    rs = judge_inventory(gpus, {}, {}, expected_from(SiteConf{}, none, none));
    CHECK(find(rs, Check::gpu_count, "node")->status == Status::ok);
    CHECK(find(rs, Check::gpu_count, "node")->expected.empty());
    CHECK_FALSE(find(rs, Check::nic_count, "node"));
    // A model is expected but unknown (no NVML, no CUDA): said, not failed.
    site.gpu_model = "H100";
    gpus = {gpu_at("0000:10:00.0")};
    rs = judge_inventory(gpus, {}, {}, expected_from(site, none, none));
    CHECK(find(rs, Check::gpu_model, "node")->status == Status::skipped);
}

TEST_CASE("PCIe links against the link's maximum") {
    PciDevice d;
    d.bus_id = "0000:17:00.0";
    d.link = {5, 5, 8, 16};
    auto rs = judge_link("gpu 0000:17:00.0", d, "");
    CHECK(find(rs, Check::pcie_width, "gpu 0000:17:00.0")->reason == "gpu 0000:17:00.0 PCIe x8 of x16");
    CHECK(find(rs, Check::pcie_width, "gpu 0000:17:00.0")->figure == "8");
    CHECK(find(rs, Check::pcie_width, "gpu 0000:17:00.0")->unit == "lanes");
    CHECK(find(rs, Check::pcie_speed, "gpu 0000:17:00.0")->status == Status::ok);
    // The slot is x8: the link's maximum is x8, so x8 is healthy.
    d.upstream = LinkEnd{5, 5, 8, 8};
    CHECK(find(judge_link("gpu x", d, ""), Check::pcie_width, "gpu x")->status == Status::ok);
    // A Gen5 card in a Gen4 slot runs at its maximum; a Gen5 card at Gen3 in a Gen5 slot does not.
    d.upstream = LinkEnd{4, 4, 16, 16};
    d.link = {4, 5, 16, 16};
    CHECK(find(judge_link("nic mlx5_0", d, ""), Check::pcie_speed, "nic mlx5_0")->status == Status::ok);
    d.upstream = LinkEnd{5, 5, 16, 16};
    d.link = {3, 5, 16, 16};
    rs = judge_link("nic mlx5_0", d, "");
    CHECK(find(rs, Check::pcie_speed, "nic mlx5_0")->reason == "nic mlx5_0 PCIe Gen3 of Gen5");
    // Not judged: said why.
    rs = judge_link("gpu y", d, "an idle GPU slows its link down");
    CHECK(find(rs, Check::pcie_speed, "gpu y")->status == Status::skipped);
    CHECK(find(rs, Check::pcie_speed, "gpu y")->reason == "an idle GPU slows its link down");
    // A link that is down; a device sysfs says nothing of.
    d.upstream.reset();
    d.link = {0, 5, 0, 16};
    CHECK(find(judge_link("gpu z", d, ""), Check::pcie_width, "gpu z")->reason == "gpu z PCIe link down (x0 of x16)");
    d.link = {};
    rs = judge_link("gpu w", d, "");
    CHECK(find(rs, Check::pcie_width, "gpu w")->status == Status::skipped);
    CHECK(find(rs, Check::pcie_speed, "gpu w")->status == Status::skipped);
}

TEST_CASE("RDMA ports: down, polling, half rate") {
    std::vector<PortFacts> ports{port("mlx5_0", 4, 5, 200), port("mlx5_1", 1, 3, 200), port("mlx5_2", 1, 2, 200),
                                 port("mlx5_3", 4, 5, 100, 2), port("mlx5_4", 2, 5, 200)};
    auto rs = judge_ports(ports, std::nullopt);
    CHECK(find(rs, Check::port_state, "mlx5_0/1")->status == Status::ok);
    CHECK(find(rs, Check::port_rate, "mlx5_0/1")->status == Status::ok);
    CHECK(find(rs, Check::port_state, "mlx5_1/1")->reason == "mlx5_1/1 port DOWN, not ACTIVE");
    CHECK(find(rs, Check::port_phys, "mlx5_1/1")->reason == "mlx5_1/1 physical link Disabled, not LinkUp (cable, transceiver or switch port)");
    CHECK(find(rs, Check::port_rate, "mlx5_1/1")->status == Status::skipped);
    CHECK(find(rs, Check::port_phys, "mlx5_2/1")->figure == "Polling");
    CHECK(find(rs, Check::port_phys, "mlx5_2/1")->status == Status::failed);
    CHECK(find(rs, Check::port_rate, "mlx5_3/1")->reason == "mlx5_3/1 rate 100 of 200 Gb/s (2X of 4X: a lane is down)");
    CHECK(find(rs, Check::port_state, "mlx5_4/1")->reason == "mlx5_4/1 port INIT, not ACTIVE (no subnet manager has configured it)");
    // The site's rate: every port at 200 is below 400.
    rs = judge_ports({port("mlx5_0", 4, 5, 200)}, 400.0);
    CHECK(find(rs, Check::port_rate, "mlx5_0/1")->reason == "mlx5_0/1 rate 200 of 400 Gb/s");
}

TEST_CASE("link error counters: growth since the last run, a first run, a reset") {
    auto p = port("mlx5_0", 4, 5, 200);
    p.counters = {{"symbol_error", 120}, {"link_downed", 3}, {"link_error_recovery", 7}};
    SiteConf c;
    auto rs = judge_counters({p}, nullptr, c);
    REQUIRE(rs.size() == 3);
    for (const auto& r : rs) CHECK(r.status == Status::skipped);
    const std::map<std::string, std::uint64_t> before{
        {"mlx5_0/1 symbol_error", 115}, {"mlx5_0/1 link_downed", 1}, {"mlx5_0/1 link_error_recovery", 9}};
    rs = judge_counters({p}, &before, c);
    CHECK(find(rs, Check::port_errors, "mlx5_0/1 symbol_error")->status == Status::ok);  // +5, at most 10
    CHECK(find(rs, Check::port_errors, "mlx5_0/1 symbol_error")->figure == "5");
    CHECK(find(rs, Check::port_errors, "mlx5_0/1 link_downed")->reason == "mlx5_0/1 link_downed +2 since the last run (at most 0)");
    CHECK(find(rs, Check::port_errors, "mlx5_0/1 link_error_recovery")->status == Status::skipped);  // went back: a reset
    CHECK(counter_values({p}).at("mlx5_0/1 link_downed") == 3);
    c.link_downed_max = 2;
    CHECK(find(judge_counters({p}, &before, c), Check::port_errors, "mlx5_0/1 link_downed")->status == Status::ok);
}

TEST_CASE("NVLink: each GPU against the site's nvlinks= or the node's best GPU of its model") {
    SiteConf c;
    NvmlFacts n;
    n.loaded = true;
    n.gpus.resize(4);
    for (int i = 0; i < 4; ++i) {
        n.gpus[i].bus_id = "0000:1" + std::to_string(i) + ":00.0";
        n.gpus[i].name = "NVIDIA H100 80GB HBM3";
        n.gpus[i].nvlinks = 18;
        n.gpus[i].nvlinks_up = 18;
    }
    const std::vector<std::string> bus = {"0000:10:00.0", "0000:11:00.0", "0000:12:00.0", "0000:13:00.0"};
    auto rs = judge_nvml(n, bus, c);
    CHECK(find(rs, Check::gpu_nvlink, "gpu 0000:12:00.0")->status == Status::ok);
    CHECK(find(rs, Check::gpu_nvlink, "gpu 0000:12:00.0")->expected == ">= 18");
    n.gpus[2].nvlinks_up = 16;
    rs = judge_nvml(n, bus, c);
    CHECK(find(rs, Check::gpu_nvlink, "gpu 0000:12:00.0")->reason ==
          "gpu 0000:12:00.0 NVLink 16 of 18 up (the node's best NVIDIA H100 80GB HBM3 has 18)");
    CHECK(find(rs, Check::gpu_nvlink, "gpu 0000:11:00.0")->status == Status::ok);
    // One link down on every GPU (an NVSwitch tray): only the site's count sees it.
    for (auto& g : n.gpus) g.nvlinks_up = 17;
    CHECK_FALSE(any_failed(judge_nvml(n, bus, c)));
    c.nvlinks = 18;
    rs = judge_nvml(n, bus, c);
    CHECK(find(rs, Check::gpu_nvlink, "gpu 0000:10:00.0")->reason == "gpu 0000:10:00.0 NVLink 17 of 18 up (node-check.conf nvlinks=)");
    // PCIe cards: links NVML knows, none up anywhere: not judged without the site's count.
    c.nvlinks.reset();
    for (auto& g : n.gpus) g.nvlinks_up = 0;
    CHECK(judge_nvml(n, bus, c).empty());
    // Another model on the node is compared with its own kind only.
    for (auto& g : n.gpus) g.nvlinks_up = 18;
    n.gpus[3].name = "NVIDIA L40S";
    n.gpus[3].nvlinks_up = 0;
    rs = judge_nvml(n, bus, c);
    CHECK_FALSE(any_failed(rs));
    CHECK(find(rs, Check::gpu_nvlink, "gpu 0000:13:00.0") == nullptr);
}

TEST_CASE("NVML: absent, failing, hidden, lost GPUs and their memory") {
    SiteConf c;
    NvmlFacts n;
    n.why = "NVML not found";
    auto rs = judge_nvml(n, {"0000:10:00.0"}, c);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == Status::skipped);
    CHECK(judge_nvml(n, {}, c).empty());  // no NVIDIA GPU: nothing to say
    n.loaded = true;
    n.init_error = kNvmlDriverNotLoaded;
    n.why = "nvmlInit failed: Driver Not Loaded";
    rs = judge_nvml(n, {"0000:10:00.0"}, c);
    CHECK(rs[0].status == Status::failed);
    CHECK(rs[0].reason == "NVML cannot reach the GPUs: nvmlInit failed: Driver Not Loaded");
    n.init_error = kNvmlNoPermission;  // the tool's problem, not the node's
    CHECK(judge_nvml(n, {"0000:10:00.0"}, c)[0].status == Status::skipped);

    n.init_error = 0;
    n.gpus.resize(4);
    for (int i = 0; i < 4; ++i) {
        n.gpus[i].bus_id = "0000:1" + std::to_string(i) + ":00.0";
        n.gpus[i].pages_pending = false;
        n.gpus[i].pages_retired = 0;
        n.gpus[i].rows_pending = n.gpus[i].rows_failed = false;
        n.gpus[i].ecc_uncorrected = 0;
    }
    n.gpus[0].pages_pending = true;
    n.gpus[1].pages_retired = 61;
    n.gpus[2].rows_failed = true;
    n.gpus[3].ecc_uncorrected = 2;
    rs = judge_nvml(n, {"0000:10:00.0", "0000:11:00.0", "0000:12:00.0", "0000:13:00.0", "0000:14:00.0"}, c);
    CHECK(find(rs, Check::gpu_driver, "gpu 0000:14:00.0")->reason == "gpu 0000:14:00.0 on the PCI bus, not seen by the driver");
    CHECK(find(rs, Check::gpu_pages, "gpu 0000:10:00.0")->reason == "gpu 0000:10:00.0 page retirement pending (reset the GPU)");
    CHECK(find(rs, Check::gpu_pages, "gpu 0000:11:00.0")->reason == "gpu 0000:11:00.0 61 retired pages (at most 60)");
    CHECK(find(rs, Check::gpu_rows, "gpu 0000:12:00.0")->reason == "gpu 0000:12:00.0 row remapping failed (replace the GPU)");
    CHECK(find(rs, Check::gpu_ecc, "gpu 0000:13:00.0")->reason == "gpu 0000:13:00.0 2 uncorrectable ECC errors since the driver loaded");
    CHECK(find(rs, Check::gpu_ecc, "gpu 0000:10:00.0")->status == Status::ok);
    // A lost GPU: failed, and nothing more asked of it.
    n.gpus = {NvmlGpu{}};
    n.gpus[0].error = kNvmlGpuIsLost;
    n.gpus[0].error_text = "NVML cannot open it: GPU is lost";
    rs = judge_nvml(n, {}, c);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].reason == "gpu (NVML index 0) NVML cannot open it: GPU is lost");
}

TEST_CASE("Xids from the kernel log") {
    const std::string log =
        "6,1001,5000000,-;Linux version 6.1.0\n"
        "4,1003,12000000,-;NVRM: Xid (PCI:0000:10:00): 13, pid=4242, name=python, Graphics Exception\n"
        " SUBSYSTEM=pci\n"
        "3,1004,13000000,-;NVRM: Xid (PCI:0000:1B:00): 79, pid=0, name=, GPU has fallen off the bus.\n"
        "garbage line\n"
        "3,x,1,-;NVRM: Xid (PCI:0000:1B:00): 48, bad sequence number\n"
        "6,1005,14000000,-;eth0: link up\n";
    const auto xs = parse_kmsg_xids(log);
    REQUIRE(xs.size() == 2);
    CHECK(xs[0].seq == 1003);
    CHECK(xs[0].xid == 13);
    CHECK(xs[0].bus_id == "0000:10:00.0");
    CHECK(xs[1].bus_id == "0000:1b:00.0");
    CHECK(xs[1].xid == 79);
    CHECK(xs[1].text == "pid=0, name=, GPU has fallen off the bus.");
    CHECK(last_kmsg_seq(log) == 1005u);
    CHECK_FALSE(last_kmsg_seq("nothing\n"));
    CHECK(xids_after(xs, 1003u).size() == 1);
    CHECK(xids_after(xs, std::nullopt).size() == 2);
    // 13 is an application's fault, 79 the GPU's.
    const std::vector<std::string> gpus = {"0000:10:00.0", "0000:1b:00.0"};
    const auto rs = judge_xids(xs, kDefaultXids, gpus, {});
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].reason == "gpu 0000:1b:00.0 Xid 79 in the kernel log");
    CHECK(rs[0].check == Check::gpu_xid);
    CHECK(judge_xids(xs, {}, gpus, {}).empty());
}

// Records any user can put in the kernel log with the Xid tag's text, as the
// kernel writes them (6.1): none is the driver's, none may drain a node.
namespace {
const std::string kFell = "79, pid=0, name=, GPU has fallen off the bus.";
// A process renamed (PR_SET_NAME) to the tag's 15 characters segfaults in an
// executable named "x): 79": the kernel's line starts with the process name.
const std::string kSegfault = "6,2041,987654321,-,caller=T26996;NVRM: Xid (PCI:[26996]: segfault at 0 ip 000055d0c0a01139 "
                              "sp 00007ffd8b1e0a10 error 6 in x): 79[55d0c0a01000+1000] likely on CPU 3 (core 3, socket 0)\n";
// mount -t tmpfs -o '<text>' in a user namespace: the kernel quotes the option.
const std::string kTmpfs = "3,2042,987700000,-;tmpfs: Unknown parameter 'NVRM: Xid (PCI:0000:10:00): " + kFell + "'\n";
// Written into /dev/kmsg: facility user (1), with or without a <N> prefix, or daemon (3).
const std::string kUser = "12,2043,987800000,-;NVRM: Xid (PCI:0000:10:00): " + kFell + "\n" +
                          "11,2044,987800001,-;NVRM: Xid (PCI:0000:10:00): " + kFell + "\n" +
                          "27,2045,987800002,-;NVRM: Xid (PCI:0000:10:00): " + kFell + "\n";
}  // namespace

TEST_CASE("kernel log: only the kernel's records that start with the driver's tag") {
    // The rule every reader of kernel-log evidence asks.
    const auto r = parse_kmsg_record("3,1004,13000000,-,caller=C2;NVRM: Xid (PCI:0000:10:00): 79");
    REQUIRE(r);
    CHECK(r->facility == 0);
    CHECK(r->level == 3);
    CHECK(r->seq == 1004);
    CHECK(kernel_text(*r, kXidTag) == std::optional<std::string_view>("0000:10:00): 79"));
    CHECK_FALSE(parse_kmsg_record(" SUBSYSTEM=pci"));
    CHECK_FALSE(parse_kmsg_record("3,x,1,-;NVRM: Xid"));
    CHECK_FALSE(parse_kmsg_record("3;NVRM: Xid"));
    const auto user = parse_kmsg_record("12,5,1,-;NVRM: Xid (PCI:0000:10:00): 79");
    REQUIRE(user);
    CHECK(user->facility == 1);
    CHECK_FALSE(kernel_text(*user, kXidTag));
    const auto quoted = parse_kmsg_record("3,6,1,-;tmpfs: Unknown parameter 'NVRM: Xid (PCI:0000:10:00): 79'");
    REQUIRE(quoted);
    CHECK_FALSE(kernel_text(*quoted, kXidTag));

    for (const auto& [what, line] : std::vector<std::pair<std::string, std::string>>{
             {"a renamed process's segfault", kSegfault}, {"a tmpfs mount option", kTmpfs}, {"records of facility user", kUser}}) {
        INFO(what);
        CHECK(parse_kmsg_xids(line).empty());
    }
}

TEST_CASE("kernel log: only a bus id in the driver's form") {
    CHECK(pci_bus_id("0000:17:00") == std::optional<std::string>("0000:17:00.0"));
    CHECK(pci_bus_id("0000:1B:1f.7") == std::optional<std::string>("0000:1b:1f.7"));
    CHECK(pci_bus_id("00000000:17:00") == std::optional<std::string>("0000:17:00.0"));  // NVML's 8-digit domain
    CHECK(pci_bus_id("10000:01:00") == std::optional<std::string>("10000:01:00.0"));   // a VMD domain
    for (const char* bad : {"", "17:00", "000:17:00", "000000000:17:00", "0000:017:00", "0000:17:0", "0000:1g:00", "0000:17:20",
                            "0000:17:00.8", "0000:17:00.", "0000:17:00.00", "0000:17:00 ", " 0000:17:00", "0000:0000:17:00",
                            "+000:17:00", "[26996]: segfault at 0 ip 000055d0c0a01139 sp 00007ffd8b1e0a10 error 6 in x"}) {
        INFO(bad);
        CHECK_FALSE(pci_bus_id(bad));
    }
    for (const char* line : {"3,1,1,-;NVRM: Xid (PCI:0000:10:00 ): 79, x\n", "3,1,1,-;NVRM: Xid (PCI:0000:10:00.0.0): 79, x\n",
                             "3,1,1,-;NVRM: Xid (PCI:0000:10:00): 79x, x\n", "3,1,1,-;NVRM: Xid (PCI:0000:10:00): , 79\n",
                             "3,1,1,-;NVRM: Xid (PCI:0000:10:00):79, x\n"}) {
        INFO(line);
        CHECK(parse_kmsg_xids(line).empty());
    }
}

TEST_CASE("kernel log: forged Xids drain nothing; the driver's own Xid still fails its GPU") {
    const std::vector<std::string> gpus = {"0000:10:00.0", "0000:11:00.0"};
    const std::string foreign = "3,2046,987900000,-;NVRM: Xid (PCI:0000:99:00): " + kFell + "\n";
    const std::string malformed = "3,2047,987900001,-;NVRM: Xid (PCI:0000:10:00 ): " + kFell + "\n";
    const std::string genuine = "3,2048,988000000,-;NVRM: Xid (PCI:0000:11:00): " + kFell + "\n";
    const std::string forged = kSegfault + kTmpfs + kUser + foreign + malformed;

    auto rs = judge_xids(parse_kmsg_xids(forged), kDefaultXids, gpus, kmsg_lost(forged, 2040u));
    CHECK(failed(rs, false).empty());
    // The Xid naming no GPU here: one line, not a failure.
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == Status::skipped);
    CHECK(rs[0].reason == "1 Xid record(s) in the kernel log name no NVIDIA GPU of this node (the first: 0000:99:00.0, Xid 79): not judged");

    rs = judge_xids(parse_kmsg_xids(forged + genuine), kDefaultXids, gpus, kmsg_lost(forged + genuine, 2040u));
    const auto f = failed(rs, false);
    REQUIRE(f.size() == 1);
    CHECK(f[0]->device == "gpu 0000:11:00.0");
    CHECK(f[0]->reason == "gpu 0000:11:00.0 Xid 79 in the kernel log");

    // A thousand Xids naming a thousand bus ids that are no GPU here: still one line.
    std::string many;
    for (int i = 0; i < 1000; ++i) {
        char b[96];
        std::snprintf(b, sizeof b, "3,%d,1,-;NVRM: Xid (PCI:%04x:99:00): 79, x\n", 3000 + i, i);
        many += b;
    }
    rs = judge_xids(parse_kmsg_xids(many), kDefaultXids, gpus, {});
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == Status::skipped);
    CHECK(rs[0].figure == "1000");
}

TEST_CASE("kernel log: records a flood overwrote are one line, never a drain") {
    // Consecutive since the last run's 1003: nothing lost.
    const std::string log = "6,1001,1,-;a\n 6,1002\n6,1002,1,-;b\n6,1003,1,-;c\n6,1004,1,-;d\n";
    CHECK(kmsg_lost(log, 1003u).records == 0);
    CHECK(kmsg_lost(log, std::nullopt).records == 0);
    CHECK(kmsg_lost(log, 1004u).records == 0);
    CHECK(kmsg_lost("", 1004u).records == 0);
    // A reboot's new log starts again from 0: nothing lost.
    CHECK(kmsg_lost("6,0,1,-;Linux version\n6,1,1,-;b\n", 1004u).records == 0);
    // The buffer wrapped since the last run: its oldest record is past 1004.
    std::string flood;
    for (int i = 0; i < 100; ++i)
        flood += "3," + std::to_string(5000 + i) + ",1,-;tmpfs: Unknown parameter 'NVRM: Xid (PCI:0000:11:00): " + kFell + "'\n";
    auto lost = kmsg_lost(flood, 1003u);
    CHECK(lost.records == 3996);
    CHECK(lost.first == 1004);
    CHECK(lost.last == 4999);
    // Overtaken while reading (EPIPE, the reader skips to the oldest record left): a gap inside the text.
    lost = kmsg_lost("6,10,1,-;a\n6,11,1,-;b\n6,20,1,-;c\n6,21,1,-;d\n6,30,1,-;e\n", std::nullopt);
    CHECK(lost.records == 16);  // 12-19 and 22-29
    CHECK(lost.first == 12);
    CHECK(lost.last == 29);
    // Only what came after the last run counts.
    CHECK(kmsg_lost("6,10,1,-;a\n6,20,1,-;c\n6,21,1,-;d\n", 20u).records == 0);

    const std::vector<std::string> gpus = {"0000:11:00.0"};
    const auto rs = judge_xids(xids_after(parse_kmsg_xids(flood), 1003u), kDefaultXids, gpus, kmsg_lost(flood, 1003u));
    CHECK(failed(rs, false).empty());
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == Status::skipped);
    CHECK(rs[0].reason ==
          "the kernel log lost 3996 record(s) before this run read them (numbers 1004 to 4999): a flood of kernel messages, which "
          "any user can cause, wrapped its buffer; an Xid among them is not judged (journalctl -k may still hold it)");
    CHECK(unjudged_line(rs) == rs[0].reason);
}

TEST_CASE("the preflight's stages as records") {
    using preflight::StageStatus;
    gpu::GpuResult a, b;
    a.bus_id = "0000:10:00.0";
    a.h2d_gbps = 50;
    a.d2h_gbps = 48.5;
    b.bus_id = "0000:11:00.0";
    auto rs = stage_records(Check::cuda, {"cuda", StageStatus::failed, "1 problem(s)", 1},
                            {{"gpu 1 (0000:11:00.0)", "memory check failed"}, {"gpus", "CUDA sees 1 GPU(s)"}}, {a, b});
    CHECK(find(rs, Check::cuda, "gpu 0000:10:00.0")->figure == "48.5");
    CHECK(find(rs, Check::cuda, "gpu 0000:10:00.0")->status == Status::ok);
    CHECK(find(rs, Check::cuda, "gpu 0000:11:00.0")->reason == "gpu 0000:11:00.0 memory check failed");
    CHECK(find(rs, Check::cuda, "gpus")->reason == "gpus: CUDA sees 1 GPU(s)");
    rs = stage_records(Check::nccl, {"nccl", StageStatus::failed, "init failed: unhandled system error", 1}, {});
    CHECK(find(rs, Check::nccl, "node")->reason == "nccl: init failed: unhandled system error");
    rs = stage_records(Check::nccl, {"nccl", StageStatus::skipped, "no NCCL", 0}, {});
    CHECK(find(rs, Check::nccl, "node")->status == Status::skipped);
    CHECK(stage_records(Check::rdma, {"rdma", StageStatus::aborted, "did not finish", 9}, {}).empty());
    CHECK(find(stage_records(Check::rdma, {"rdma", StageStatus::ok, "2 port(s)", 1}, {}), Check::rdma, "node")->status == Status::ok);
}
