// The node check's judgement outside its I/O (lib/health/run_plan,
// check_mode): which parts and judges run on what was gathered, what is
// measured again at once, SLURM's time budget, what the check trusts in its
// environment, and its exit codes; and the one deadline rule of its parts
// (lib/sys/health/parts.hpp): an exception or a deadline is inconclusive.
#include "catch_compat.hpp"

#include "../../lib/base/error.hpp"
#include "../../lib/health/check_mode.hpp"
#include "../../lib/health/confirm.hpp"
#include "../../lib/health/run_plan.hpp"
#include "../../lib/health/slurm_action.hpp"
#include "../../lib/sys/health/parts.hpp"

#include <algorithm>

using namespace gangway;
using namespace gangway::health;
using Catch::Matchers::ContainsSubstring;

namespace {

const Record* find(const std::vector<Record>& rs, Check c, const std::string& dev) {
    for (const auto& r : rs)
        if (r.check == c && r.device == dev) return &r;
    return nullptr;
}
bool has(const std::vector<Record>& rs, Check c) {
    return std::any_of(rs.begin(), rs.end(), [c](const Record& r) { return r.check == c; });
}

GpuFacts gpu_at(const std::string& bus, std::uint16_t vendor = 0x10de, int width = 16) {
    GpuFacts g;
    g.pci.bus_id = bus;
    g.pci.link = {5, 5, width, 16};
    g.vendor = vendor;
    return g;
}

PortFacts active_port(const std::string& hca, std::uint64_t link_downed) {
    PortFacts f;
    f.port.hca = hca;
    f.port.port = 1;
    f.port.state = 4;
    f.port.state_name = "ACTIVE";
    f.port.phys_state = 5;
    f.port.phys_name = "LinkUp";
    f.port.rate_gbps = 400;
    f.counters = {{"symbol_error", 0}, {"link_downed", link_downed}, {"link_error_recovery", 0}};
    return f;
}

}  // namespace

TEST_CASE("node check plan: NVML and the kernel log are read where an NVIDIA GPU may be") {
    CHECK(reads_nvml(std::nullopt));  // sysfs unread: NVML is the only inventory left
    CHECK_FALSE(reads_kmsg(std::nullopt));
    SysfsFacts s;
    CHECK_FALSE(reads_nvml(s));
    CHECK_FALSE(reads_kmsg(s));
    s.gpus = {gpu_at("0000:17:00.0", 0x1002)};  // another vendor's GPU
    CHECK_FALSE(reads_nvml(s));
    CHECK_FALSE(any_nvidia(s));
    s.gpus.push_back(gpu_at("0000:18:00.0"));
    CHECK(reads_nvml(s));
    CHECK(reads_kmsg(s));
}

TEST_CASE("node check plan: SLURM's files that say what the node should have") {
    SiteConf c;
    auto f = slurm_files(c, {});
    CHECK(f.slurm_conf == "/etc/slurm/slurm.conf");
    CHECK(f.gres_conf == "/etc/slurm/gres.conf");
    f = slurm_files(c, {{"SLURM_CONF", "/opt/slurm/etc/slurm.conf"}});
    CHECK(f.slurm_conf == "/opt/slurm/etc/slurm.conf");
    CHECK(f.gres_conf == "/opt/slurm/etc/gres.conf");  // beside slurm.conf, as slurmd looks
    f = slurm_files(c, {{"SLURM_CONF", ""}});
    CHECK(f.slurm_conf == "/etc/slurm/slurm.conf");
    c.slurm_conf = "/site/slurm.conf";  // the site file wins over the environment
    c.gres_conf = "/elsewhere/gres.conf";
    f = slurm_files(c, {{"SLURM_CONF", "/opt/slurm/etc/slurm.conf"}});
    CHECK(f.slurm_conf == "/site/slurm.conf");
    CHECK(f.gres_conf == "/elsewhere/gres.conf");
}

TEST_CASE("node check plan: the stages that run by level, sysfs and busy GPUs") {
    auto p = plan_stages(false, true, {});
    CHECK(p.cuda);
    CHECK(p.cuda_skip.empty());
    CHECK_FALSE(p.nccl);
    CHECK_FALSE(p.rdma);
    p = plan_stages(true, true, {});
    CHECK((p.cuda && p.nccl && p.rdma));
    p = plan_stages(true, false, {});  // no ports known without sysfs: no loopback
    CHECK((p.cuda && p.nccl && !p.rdma));
    // A job computes on a GPU: nothing of ours disturbs it, at either level.
    NvmlFacts n;
    n.gpus = {NvmlGpu{}, NvmlGpu{}};
    n.gpus[0].bus_id = "0000:17:00.0";
    n.gpus[1].bus_id = "0000:18:00.0";
    n.gpus[1].busy = true;
    CHECK(busy_gpus(std::nullopt).empty());
    const auto busy = busy_gpus(n);
    CHECK(busy == std::vector<std::string>{"0000:18:00.0"});
    p = plan_stages(true, true, busy);
    CHECK_FALSE((p.cuda || p.nccl || p.rdma));
    CHECK(p.cuda_skip == "GPU(s) in use by a job (0000:18:00.0): tested when they are free");
}

TEST_CASE("node check plan: what the cuda stage does at each level") {
    gpu::Thresholds t;
    t.copy_bytes = double(1u << 30);
    const auto q = cuda_level(false, t);
    CHECK_FALSE(q.full);
    CHECK_FALSE(q.measure_copy);
    CHECK(q.iterations == 1);
    CHECK(q.copy_bytes == std::size_t(32) << 20);  // traffic for the link, not a bandwidth figure
    const auto f = cuda_level(true, t);
    CHECK((f.full && f.measure_copy));
    CHECK(f.iterations == 20);
    CHECK(f.copy_bytes == std::size_t(1) << 30);  // the thresholds' size
}

TEST_CASE("node check plan: the first pass judges all that was gathered, the re-test only what can be re-read") {
    SiteConf conf;
    conf.xids = kDefaultXids;
    const Expected e = expected_from(conf, {}, {});
    State previous;
    previous.time = 1700000000;
    previous.counters = {{"mlx5_0/1 link_downed", 0}, {"mlx5_0/1 symbol_error", 0}, {"mlx5_0/1 link_error_recovery", 0}};
    Gathered g;
    g.sysfs = SysfsFacts{{gpu_at("0000:17:00.0", 0x10de, 8)}, {}, {active_port("mlx5_0", 5)}};
    g.kmsg = KmsgFacts{{{7, "0000:17:00.0", 79, "GPU has fallen off the bus"}}, {}, 7, ""};
    g.cuda = StageFacts{{"cuda", preflight::StageStatus::ok, "1 GPU", 1}, {}, {}};
    gpu::GpuResult cg;
    cg.name = "NVIDIA H100 80GB HBM3";
    cg.bus_id = "0000:17:00.0";
    cg.pcie_gen = 5;
    cg.pcie_width = 8;
    g.cuda->gpus = {cg};
    const JudgeContext c{conf, e, std::nullopt, previous};

    const auto first = judge_run(g, c, false);
    REQUIRE(find(first, Check::pcie_width, "gpu 0000:17:00.0"));
    CHECK(find(first, Check::pcie_width, "gpu 0000:17:00.0")->status == Status::failed);
    CHECK(find(first, Check::pcie_speed, "gpu 0000:17:00.0")->status == Status::ok);  // judged after the copies
    CHECK(has(first, Check::port_errors));
    CHECK(has(first, Check::gpu_xid));
    CHECK(has(first, Check::cuda));

    const auto again = judge_run(g, c, true);
    CHECK(find(again, Check::pcie_width, "gpu 0000:17:00.0")->status == Status::failed);
    CHECK_THAT(find(again, Check::pcie_speed, "gpu 0000:17:00.0")->reason, ContainsSubstring("not measured again"));
    CHECK_FALSE(has(again, Check::port_errors));  // the counters' baseline is the previous run's
    CHECK_FALSE(has(again, Check::gpu_xid));
    CHECK_FALSE(has(again, Check::cuda));

    // No copies on the GPU: its idle link is not judged; pcie_speed=no: nor is any.
    Gathered idle = g;
    idle.cuda.reset();
    CHECK_THAT(find(judge_run(idle, c, false), Check::pcie_speed, "gpu 0000:17:00.0")->reason, ContainsSubstring("idle GPU"));
    SiteConf widths = conf;
    widths.pcie_speed = false;
    const JudgeContext cw{widths, e, std::nullopt, previous};
    CHECK(find(judge_run(g, cw, false), Check::pcie_speed, "gpu 0000:17:00.0")->reason == "not judged (pcie_speed=no)");
    // The kernel log unreadable: one skipped record that says why.
    Gathered nolog = g;
    nolog.kmsg = KmsgFacts{};
    nolog.kmsg->why = "not root";
    const auto nolog_records = judge_run(nolog, c, false);  // kept: find points into it
    const auto* x = find(nolog_records, Check::gpu_xid, "node");
    REQUIRE(x);
    CHECK(x->status == Status::skipped);
    CHECK(x->reason == "not root");
}

TEST_CASE("node check plan: the re-test selects what failed and can be read again") {
    auto rec = [](Check ch, const std::string& dev, Status s) { return Record{ch, dev, "", "", "", s, "r", false}; };
    const std::vector<Record> rs{rec(Check::pcie_width, "gpu a", Status::failed), rec(Check::port_errors, "mlx5_0/1 link_downed", Status::failed),
                                 rec(Check::gpu_xid, "gpu a", Status::failed), rec(Check::cuda, "gpu a", Status::failed),
                                 rec(Check::port_state, "mlx5_1/1", Status::ok)};
    auto s = select_retest(rs);
    CHECK(s.keys == std::set<Key>{{Check::pcie_width, "gpu a"}});
    CHECK_FALSE(s.nvml);
    s = select_retest({rec(Check::gpu_ecc, "gpu b", Status::failed)});
    CHECK(s.nvml);  // its figures come from NVML: read again
    CHECK(select_retest({rec(Check::port_state, "mlx5_1/1", Status::ok)}).empty());

    s = select_retest(rs);
    // Only a selected key that fails again counts; a new failure in the re-test does not.
    CHECK(failed_again(s, {rec(Check::pcie_width, "gpu a", Status::failed), rec(Check::port_state, "mlx5_1/1", Status::failed)}) ==
          std::set<Key>{{Check::pcie_width, "gpu a"}});
    CHECK(failed_again(s, {rec(Check::pcie_width, "gpu a", Status::ok)}).empty());

    CHECK(retest_fits(2, 0.5));
    CHECK_FALSE(retest_fits(1, 0.5));
}

TEST_CASE("node check mode: the deadline and SLURM's budget for scontrol") {
    CHECK(run_timeout(Mode::plain, false, std::nullopt) == 10);
    CHECK(run_timeout(Mode::plain, true, std::nullopt) == 40);
    CHECK(run_timeout(Mode::plain, false, 120.0) == 120);
    CHECK(run_timeout(Mode::nhc, false, 120.0) == 120);
    CHECK(run_timeout(Mode::slurm, false, 120.0) == kSlurmCheckMax);  // SLURM kills it at 60 s
    CHECK(timeout_after_wait(Mode::slurm, 40, 3) == 37);
    CHECK(timeout_after_wait(Mode::slurm, 10, 3) == 10);
    CHECK(timeout_after_wait(Mode::nhc, 40, 3) == 40);
    CHECK(lock_wait_s(Mode::slurm, true) == 5);
    CHECK(lock_wait_s(Mode::plain, true) == 30);
    CHECK(lock_wait_s(Mode::nhc, false) == 5);
    CHECK(writes_state(Mode::slurm, false));
    CHECK(writes_state(Mode::nhc, false));
    CHECK_FALSE(writes_state(Mode::plain, false));
    CHECK(writes_state(Mode::plain, true));

    // Early in the run: the site's timeout and a second of jitter.
    auto b = scontrol_budget(5, 10);
    CHECK(b.timeout_s == 10);
    CHECK(b.jitter_s == 1);
    // Late: both calls share what is left of 55 s, less a second; no jitter left.
    b = scontrol_budget(48, 10);
    CHECK(b.timeout_s == 3);
    CHECK(b.jitter_s == 0);
    // Past it: a second each, never less.
    b = scontrol_budget(60, 10);
    CHECK(b.timeout_s == 1);
    CHECK(b.jitter_s == 0);
    // In between: the jitter only out of what the calls leave.
    b = scontrol_budget(34.5, 10);
    CHECK(b.timeout_s == 9.75);
    CHECK(b.jitter_s == 0);
    b = scontrol_budget(33.5, 10);
    CHECK(b.timeout_s == 10);
    CHECK(b.jitter_s == 0.5);
}

TEST_CASE("node check mode: a drain follows from the site's thresholds, not the environment's") {
    const EnvMap env{{"GANGWAY_H2D_GBPS", "1"}, {"GANGWAY_IB_RATE_GBPS", "100"}, {"SLURM_CONF", "/etc/slurm/slurm.conf"},
                     {"CUDA_VISIBLE_DEVICES", "0"}, {"SLURM_JOB_GPUS", "0"}};
    const auto by_hand = trusted_env(Mode::plain, env);
    CHECK(by_hand == env);  // as gpu-check: the user's thresholds apply
    for (Mode m : {Mode::slurm, Mode::nhc}) {
        const auto t = trusted_env(m, env);
        CHECK_FALSE(t.count("GANGWAY_H2D_GBPS"));
        CHECK_FALSE(t.count("GANGWAY_IB_RATE_GBPS"));
        CHECK(t.at("SLURM_CONF") == "/etc/slurm/slurm.conf");
    }
    // The stages see the whole node, with the site's thresholds over the environment's.
    SiteConf c;
    c.thresholds = {{"GANGWAY_H2D_GBPS", "40"}};
    const auto s = stage_env(env, c);
    CHECK_FALSE(s.count("CUDA_VISIBLE_DEVICES"));
    CHECK_FALSE(s.count("SLURM_JOB_GPUS"));
    CHECK(s.at("GANGWAY_H2D_GBPS") == "40");
    CHECK(s.at("SLURM_CONF") == "/etc/slurm/slurm.conf");
}

TEST_CASE("node check mode: the exit codes") {
    using V = Verdict;
    // By hand: 0 healthy, 3 a check failed (confirmed or not), 5 inconclusive.
    CHECK(exit_code(Mode::plain, V::healthy) == 0);
    CHECK(exit_code(Mode::plain, V::pending) == 3);
    CHECK(exit_code(Mode::plain, V::failed) == 3);
    CHECK(exit_code(Mode::plain, V::inconclusive) == 5);
    // SLURM and NHC: 3 only for a confirmed failure.
    for (Mode m : {Mode::slurm, Mode::nhc}) {
        CHECK(exit_code(m, V::healthy) == 0);
        CHECK(exit_code(m, V::pending) == 0);
        CHECK(exit_code(m, V::failed) == 3);
        CHECK(exit_code(m, V::inconclusive) == 0);
    }
    // Not checked: never a drain as SLURM's.
    CHECK(exit_code(Mode::slurm, NotChecked::bad_site_file) == 0);
    CHECK(exit_code(Mode::slurm, NotChecked::no_lock) == 0);
    CHECK(exit_code(Mode::slurm, NotChecked::internal_error) == 0);
    CHECK(exit_code(Mode::plain, NotChecked::bad_site_file) == 2);
    CHECK(exit_code(Mode::nhc, NotChecked::bad_site_file) == 2);
    CHECK(exit_code(Mode::plain, NotChecked::no_lock) == 5);
    CHECK(exit_code(Mode::nhc, NotChecked::internal_error) == 5);
}

TEST_CASE("each part's time out of the run's deadline is the plan's, by name", "[node-check][plan]") {
    // A read runs under its cap or what is left, whichever is less; with
    // under kMinReadS left it is not started (0).
    CHECK(read_budget(kReadCaps.nvml_s, 40) == 10);
    CHECK(read_budget(kReadCaps.sysfs_s, 40) == 5);
    CHECK(read_budget(kReadCaps.kmsg_s, 40) == 3);
    CHECK(read_budget(kReadCaps.nvml_s, 2) == 2);
    CHECK(read_budget(kReadCaps.sysfs_s, 0.04) == 0);
    // cuda and rdma: all that is left less 0.2 s; nccl: six tenths, its own
    // abort at half of what is left (at least a second), before the stage's
    // deadline, the backstop.
    CHECK(stage_budget(kCudaShare, 10) == Approx(9.8));
    CHECK(stage_budget(kRdmaShare, 10) == Approx(9.8));
    CHECK(stage_budget(kNcclShare, 10) == Approx(6));
    CHECK(nccl_abort_s(10) == 5);
    CHECK(nccl_abort_s(0.5) == 1);
    CHECK(nccl_abort_s(10) < stage_budget(kNcclShare, 10));
    // Under kMinStageS: not started (0.45 s left, 0.25 s after the 0.2 kept).
    CHECK(stage_budget(kRdmaShare, 0.45) == 0);
    CHECK(stage_budget(kCudaShare, 0.5) == Approx(0.3));
    // As SLURM's HealthCheckProgram, every read hung to its cap still leaves
    // the stages time within the run's deadline (kSlurmCheckMax).
    CHECK(kReadCaps.sysfs_s + kReadCaps.nvml_s + kReadCaps.kmsg_s < kSlurmCheckMax);
    // Parts reads the same plan: a part given a cap runs under it.
    sys::Parts parts(40);
    CHECK(parts.run<int>("sysfs", kReadCaps.sysfs_s, [] { return 1; }, [](const int&) { return std::string("one"); }));
    sys::Parts late(0.1);
    late.stage("cuda", kCudaShare, [] { return sys::StageOutcome{}; });
    CHECK(late.stages.at(0).status == preflight::StageStatus::aborted);
    CHECK_THAT(late.stages.at(0).detail, ContainsSubstring("not started"));
}

TEST_CASE("node check parts: a part that throws, however often, is inconclusive and never drains") {
    const SlurmNode idle{"n1", "IDLE", ""};
    State previous;
    std::int64_t now = 1700000000;
    for (int run = 0; run < 5; ++run, now += 60) {
        sys::Parts parts(10);
        const auto s = parts.run<SysfsFacts>(
            "sysfs", 5, []() -> SysfsFacts { throw Error("read_pci_gpus: bad"); }, [](const SysfsFacts&) { return std::string(); });
        CHECK_FALSE(s);
        const auto o = parts.stage("cuda", kCudaShare, []() -> sys::StageOutcome { throw Error("cuInit: out of memory"); });
        REQUIRE(parts.stages.size() == 2);
        CHECK(parts.stages[0].status == preflight::StageStatus::aborted);
        CHECK(parts.stages[0].detail == "internal error: read_pci_gpus: bad");
        CHECK(parts.stages[1].status == preflight::StageStatus::aborted);
        CHECK(parts.stages[1].detail == "internal error: cuInit: out of memory");
        CHECK(parts.inconclusive);
        Gathered g;
        g.cuda = StageFacts{o->result, o->findings, o->gpus};
        SiteConf conf;
        const Expected e = expected_from(conf, {}, {});
        auto records = judge_run(g, {conf, e, std::nullopt, previous}, false);
        confirm(records, {}, previous, now, 3600);
        const Verdict v = verdict(records, parts.inconclusive);
        CHECK(v == Verdict::inconclusive);
        CHECK(exit_code(Mode::slurm, v) == 0);
        CHECK(exit_code(Mode::nhc, v) == 0);
        CHECK(decide(idle, v, records, previous.healthy_runs, 2, "").action == Action::none);
        previous = next_state(previous, records, v, now, std::nullopt);
    }
    // A part past its deadline: the same rule, and it says how long it had.
    sys::Parts parts(10);
    CHECK_FALSE(parts.run<int>("nvml", 0.1, [] {
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        return 1;
    }, [](const int&) { return std::string(); }));
    CHECK(parts.stages.at(0).detail == "did not finish within 0.1 s");
    CHECK(parts.inconclusive);
    // No time left: not started, inconclusive too.
    sys::Parts late(0);
    CHECK_FALSE(late.run<int>("kmsg", 3, [] { return 1; }, [](const int&) { return std::string(); }));
    CHECK(late.stages.at(0).detail == "not started: the run's deadline had passed");
    CHECK(late.inconclusive);
}

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "../../lib/sys/health/node_facts.hpp"
#include "../../lib/sys/devices/pci_link.hpp"

namespace {

void put(const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
}

// A device below its bridge port as sysfs lays them out: /sys/devices/pciD:B/<bridge>/<dev>,
// with /sys/bus/pci/devices/<dev> a link to it.
std::string pci_tree(const std::string& bridge, const std::string& dev) {
    const std::string root = std::filesystem::temp_directory_path() / ("gangway-pci-" + std::to_string(::getpid()) + "-" + dev);
    std::filesystem::remove_all(root);
    const auto br = std::filesystem::path(root) / "sys/devices/pci" / bridge;
    put(br / "max_link_width", "16");
    put(br / "current_link_width", "16");
    put(br / "max_link_speed", "32.0 GT/s PCIe");
    put(br / "current_link_speed", "32.0 GT/s PCIe");
    put(br / dev / "max_link_width", "16");
    put(br / dev / "current_link_width", "8");
    put(br / dev / "max_link_speed", "32.0 GT/s PCIe");
    put(br / dev / "current_link_speed", "16.0 GT/s PCIe");
    std::filesystem::create_directories(std::filesystem::path(root) / "sys/bus/pci/devices");
    std::filesystem::create_symlink(br / dev, std::filesystem::path(root) / "sys/bus/pci/devices" / dev);
    return root;
}

}  // namespace

TEST_CASE("node check sysfs: a PCI link and its bridge's, bus ids by the one parser (pci_bus_id)") {
    for (const auto& [bridge, dev] : {std::pair<std::string, std::string>{"0000:16:01.0", "0000:17:00.0"},
                                      // A VMD domain: sysfs writes domains above ffff with five digits.
                                      {"10000:00:02.0", "10000:01:00.0"}}) {
        const auto root = pci_tree(bridge, dev);
        const auto d = sys::read_pci_link(root, dev);
        CHECK(d.bus_id == dev);
        CHECK(d.link.cur_width == 8);
        CHECK(d.link.max_width == 16);
        CHECK(d.link.cur_gen == 4);
        REQUIRE(d.upstream);
        CHECK(d.upstream->max_width == 16);
        CHECK(d.upstream->max_gen == 5);
        std::filesystem::remove_all(root);
    }
}
