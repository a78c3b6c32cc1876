#include "catch_compat.hpp"

#include "../../lib/base/error.hpp"
#include "../../lib/preflight/gpu_checks.hpp"
#include "../../lib/sys/stages/cuda_stage.hpp"
#include "../../lib/sys/stages/nccl_stage.hpp"
#include "../../lib/sys/stages/stage.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

using namespace gangway;
using namespace gangway::gpu;
using gangway::preflight::StageStatus;

TEST_CASE("GPU models from CUDA device names") {
    CHECK(gpu_model("NVIDIA H100 80GB HBM3").key == "H100-SXM");
    CHECK(gpu_model("NVIDIA H100 80GB HBM3").ring_busbw_8 == Approx(370));
    CHECK(gpu_model("NVIDIA H100 PCIe").key == "H100-PCIe");
    CHECK_FALSE(gpu_model("NVIDIA H100 PCIe").ring_busbw_8);
    CHECK(gpu_model("NVIDIA H100 NVL").key == "H100-NVL");
    CHECK(gpu_model("NVIDIA H200").key == "H200");
    CHECK(gpu_model("NVIDIA H200").ring_busbw_8 == Approx(365.6));
    CHECK(gpu_model("NVIDIA H200 NVL").key == "H200-NVL");
    CHECK(gpu_model("NVIDIA A100-SXM4-80GB").key == "A100-SXM");
    CHECK(gpu_model("NVIDIA A100-SXM4-80GB").pcie_gen_max == 4);
    CHECK(gpu_model("NVIDIA A100-PCIE-40GB").key == "A100-PCIe");
    CHECK(gpu_model("NVIDIA A100 80GB PCIe").key == "A100-PCIe");
    CHECK(gpu_model("NVIDIA B200").ring_busbw_8 == Approx(682.2));
    CHECK(gpu_model("NVIDIA L40S").key == "L40S");
    CHECK(gpu_model("NVIDIA L40S").pcie_gen_max == 4);
    CHECK(gpu_model("NVIDIA GH200 480GB").host_over_pcie == false);
    CHECK(gpu_model("Tesla T4").key.empty());
}

TEST_CASE("PCIe generation from sysfs link speed, and copy figures") {
    CHECK(pcie_gen_from_speed("32.0 GT/s PCIe") == 5);
    CHECK(pcie_gen_from_speed("16.0 GT/s PCIe") == 4);
    CHECK(pcie_gen_from_speed("8.0 GT/s PCIe") == 3);
    CHECK(pcie_gen_from_speed("2.5 GT/s PCIe") == 1);
    CHECK(pcie_gen_from_speed("64.0 GT/s PCIe") == 6);
    CHECK(pcie_gen_from_speed("Unknown") == 0);
    CHECK(pcie_gen_from_speed("") == 0);
    CHECK(*expected_copy_gbps(5, 16) == Approx(55));
    CHECK(*expected_copy_gbps(5, 8) == Approx(27.5));
    CHECK(*expected_copy_gbps(4, 16) == Approx(27.5));
    CHECK(*expected_copy_gbps(4, 0) == Approx(27.5));  // width unknown: x16
    CHECK_FALSE(expected_copy_gbps(0, 16));
    CHECK(nic_busbw_gbps(400) == Approx(47));  // 46-48 per NDR NIC
    CHECK(nic_busbw_gbps(200) == Approx(23.5).margin(0.6));  // ~24 per HDR NIC
}

TEST_CASE("bus bandwidth as nccl-tests defines it") {
    // 16 GiB all-reduce on 8 GPUs in 63 ms: algbw 272.7, busbw 477.2 GB/s.
    const double alg = algbw_gbps(16.0 * (1ull << 30), 0.063);
    CHECK(alg == Approx(272.7).epsilon(0.001));
    CHECK(allreduce_busbw_gbps(alg, 8) == Approx(alg * 14 / 8));
    CHECK(allreduce_busbw_gbps(100, 2) == Approx(100));
    CHECK(allreduce_busbw_gbps(100, 1) == Approx(0));  // a single rank moves nothing
    CHECK(allreduce_busbw_gbps(100, 0) == 0);
    CHECK(algbw_gbps(1e9, 0) == 0);
    CHECK(algbw_gbps(1e9, 1) == Approx(1));  // GB/s is 10^9 B/s, not GiB
}

TEST_CASE("a node's NCCL run as a report record: nccl-tests' algbw and busbw, none when it failed") {
    NcclResult r;
    r.nranks = 8;
    r.bytes = 1e9;
    r.seconds = 0.01;
    const auto n = sys::nccl_record(3, r);
    CHECK(n.node == 3);
    CHECK(n.nranks == 8);
    CHECK(*n.algbw_gbps == Approx(100));
    CHECK(*n.busbw_gbps == Approx(175));  // x 2(n-1)/n
    r.error = "aborted";
    const auto f = sys::nccl_record(3, r);
    CHECK_FALSE(f.algbw_gbps);
    CHECK_FALSE(f.busbw_gbps);
    CHECK(f.error == "aborted");
}

TEST_CASE("GB/s figures: one decimal from 1 GB/s, two significant digits below") {
    CHECK(fmt_gbps(370.04) == "370.0 GB/s");
    CHECK(fmt_gbps(1) == "1.0 GB/s");
    CHECK(fmt_gbps(0.25) == "0.25 GB/s");
    CHECK(fmt_gbps(0.01925) == "0.019 GB/s");  // not "0.0 GB/s"
    CHECK(fmt_gbps(0) == "0 GB/s");
}

TEST_CASE("median, MAD and low outliers") {
    CHECK(median({}) == 0);
    CHECK(median({3, 1, 2}) == 2);
    CHECK(median({4, 1, 2, 3}) == 2.5);
    CHECK(mad({1, 2, 3, 4, 100}) == 1);
    // Eight GPUs near 55 GB/s and one at 30: the slow one is flagged.
    std::vector<double> v{55.1, 54.8, 55.3, 55.0, 54.9, 30.0, 55.2, 55.0};
    CHECK(low_outliers(v, 3.5) == std::vector<std::size_t>{5});
    // A tight group is not split over noise: 1% below the median is fine.
    CHECK(low_outliers({55, 55, 55, 54.4, 55, 55}, 3.5).empty());
    // MAD 0: only the 0.9 x median rule applies.
    CHECK(low_outliers({50, 50, 50, 50, 44}, 3.5) == std::vector<std::size_t>{4});
    CHECK(low_outliers({50, 50, 50, 50, 46}, 3.5).empty());
    // High values are never outliers here, and too few values say nothing.
    CHECK(low_outliers({50, 50, 50, 90}, 3.5).empty());
    CHECK(low_outliers({50, 10, 50}, 3.5).empty());
}

TEST_CASE("copy outliers across the job: a node whose GPUs are all slow stands out") {
    // Four nodes of two GPUs each; node 2's GPUs are both at half speed, so
    // neither is an outlier on its own node.
    std::vector<JobGpu> job;
    for (unsigned node = 0; node < 4; ++node)
        for (int i = 0; i < 2; ++i) {
            JobGpu g;
            g.node = node;
            g.gpu.index = i;
            g.gpu.bus_id = "0000:1" + std::to_string(i) + ":00.0";
            g.gpu.h2d_gbps = node == 2 ? 26.0 + i : 53.0 + 0.3 * i + 0.1 * node;
            g.gpu.d2h_gbps = 52.0 + 0.2 * i;
            job.push_back(g);
        }
    auto f = job_copy_outliers(job, 3.5);
    REQUIRE(f.size() == 2);
    for (const auto& x : f) {
        CHECK(x.node == 2);
        CHECK(x.finding.problem.rfind("H2D ", 0) == 0);
        CHECK(x.finding.problem.find("job's 8 GPUs") != std::string::npos);
    }
    CHECK(f[0].finding.what == "gpu 0 (0000:10:00.0)");
    // A GPU that failed its checks carries no figure and is left out; an even job has no outliers.
    job[4].gpu.error = "allocation failed";
    job[4].gpu.h2d_gbps.reset();
    for (auto& g : job)
        if (g.node == 2 && g.gpu.h2d_gbps) g.gpu.h2d_gbps = 53.1;
    CHECK(job_copy_outliers(job, 3.5).empty());
    CHECK(job_copy_outliers({}, 3.5).empty());
}

TEST_CASE("the allocation's GPU count") {
    CHECK(*allocated_gpus({{"CUDA_VISIBLE_DEVICES", "0,1,2,3"}}) == 4);
    CHECK(*allocated_gpus({{"CUDA_VISIBLE_DEVICES", "GPU-1a2b,GPU-3c4d"}}) == 2);
    CHECK(*allocated_gpus({{"CUDA_VISIBLE_DEVICES", "NoDevFiles"}}) == 0);
    CHECK(*allocated_gpus({{"CUDA_VISIBLE_DEVICES", ""}}) == 0);
    CHECK(*allocated_gpus({{"CUDA_VISIBLE_DEVICES", "0,1,-1,2"}}) == 2);
    CHECK(*allocated_gpus({{"SLURM_STEP_GPUS", "0,1,2,3,4,5,6,7"}, {"SLURM_GPUS_ON_NODE", "4"}}) == 8);
    CHECK(*allocated_gpus({{"SLURM_GPUS_ON_NODE", "4"}}) == 4);
    CHECK_FALSE(allocated_gpus({{"HOME", "/root"}}));
}

TEST_CASE("thresholds from the environment") {
    auto t = thresholds_from_env({});
    CHECK_FALSE(t.require_cuda);
    CHECK(t.copy_ratio == Approx(0.85));
    CHECK(t.busbw_ratio == Approx(0.8));
    CHECK(t.nccl_bytes == double(1u << 30));
    CHECK(t.copy_bytes == double(256u << 20));
    CHECK(thresholds_from_env({{"GANGWAY_COPY_BYTES", "33554432"}}).copy_bytes == 33554432.0);
    CHECK_THROWS_WITH(thresholds_from_env({{"GANGWAY_COPY_BYTES", "4096"}}), Catch::Matchers::ContainsSubstring("GANGWAY_COPY_BYTES"));
    CHECK_FALSE(t.gid_index);
    t = thresholds_from_env({{"GANGWAY_REQUIRE", "cuda,verbs"}, {"GANGWAY_H2D_GBPS", "48"}, {"GANGWAY_NCCL_RATIO", "0.9"},
                             {"GANGWAY_IB_RATE_GBPS", "400"}, {"NCCL_IB_GID_INDEX", "3"}});
    CHECK(t.require_cuda);
    CHECK_FALSE(t.require_nccl);
    CHECK(t.require_verbs);
    CHECK(*t.copy_gbps == 48);
    CHECK(t.busbw_ratio == Approx(0.9));
    CHECK(*t.ib_rate_gbps == 400);
    CHECK(*t.gid_index == 3);
    CHECK(*thresholds_from_env({{"GANGWAY_IB_GID_INDEX", "1"}, {"NCCL_IB_GID_INDEX", "3"}}).gid_index == 1);
    CHECK_FALSE(thresholds_from_env({{"NCCL_IB_GID_INDEX", "-1"}}).gid_index);  // NCCL's "auto"
    CHECK(thresholds_from_env({{"GANGWAY_REQUIRE", "all"}}).require_nccl);
    CHECK_THROWS_WITH(thresholds_from_env({{"GANGWAY_REQUIRE", "gpu"}}), Catch::Matchers::ContainsSubstring("cuda, nccl and verbs"));
    CHECK_THROWS_WITH(thresholds_from_env({{"GANGWAY_GPU_BW_RATIO", "1.5"}}), Catch::Matchers::ContainsSubstring("GANGWAY_GPU_BW_RATIO"));
    CHECK_THROWS_WITH(thresholds_from_env({{"GANGWAY_H2D_GBPS", "fast"}}), Catch::Matchers::ContainsSubstring("not a number"));
}

namespace {
GpuResult mkgpu(int i, double h2d, double d2h, int gen = 5, int width = 16, const char* name = "NVIDIA H100 80GB HBM3") {
    GpuResult g;
    g.index = i;
    g.name = name;
    g.bus_id = "0000:" + std::to_string(10 + i) + ":00.0";
    g.pcie_gen = gen;
    g.pcie_width = width;
    g.h2d_gbps = h2d;
    g.d2h_gbps = d2h;
    return g;
}
}  // namespace

TEST_CASE("CUDA stage verdicts") {
    const auto t = thresholds_from_env({});
    std::vector<GpuResult> ok;
    for (int i = 0; i < 8; ++i) ok.push_back(mkgpu(i, 55 - 0.1 * i, 54 + 0.1 * i));
    auto v = judge_cuda(ok, 8u, 8, t);
    CHECK(v.status == StageStatus::ok);
    CHECK(v.findings.empty());
    CHECK_THAT(v.detail, Catch::Matchers::ContainsSubstring("8 GPU(s)") && Catch::Matchers::ContainsSubstring("H2D median"));

    SECTION("count against the allocation") {
        v = judge_cuda(ok, 8u, 7, t);
        CHECK(v.status == StageStatus::failed);
        CHECK_THAT(v.findings.at(0).problem, Catch::Matchers::ContainsSubstring("CUDA sees 7 GPU(s), the allocation has 8"));
        CHECK(judge_cuda(ok, std::nullopt, 8, t).status == StageStatus::ok);
    }
    SECTION("below the model's figure: one finding, not also an outlier") {
        auto g = ok;
        g[3].h2d_gbps = 20;
        v = judge_cuda(g, 8u, 8, t);
        REQUIRE(v.findings.size() == 1);
        CHECK(v.findings[0].what == "gpu 3 (0000:13:00.0)");
        CHECK_THAT(v.findings[0].problem, Catch::Matchers::ContainsSubstring("H2D 20.0 GB/s, expected >= 46.8 GB/s") &&
                                              Catch::Matchers::ContainsSubstring("H100-SXM PCIe Gen5 x16"));
    }
    SECTION("a link trained below the part's generation") {
        auto g = ok;
        g[2] = mkgpu(2, 26, 26, 4, 16);
        v = judge_cuda(g, 8u, 8, t);
        CHECK(v.status == StageStatus::failed);
        bool gen = false, outlier = false;
        for (auto& f : v.findings) {
            gen |= f.problem.find("Gen4 only, the H100-SXM supports Gen5") != std::string::npos;
            outlier |= f.problem.find("outlier") != std::string::npos;
        }
        CHECK(gen);
        CHECK(outlier);  // the Gen4 figure is met, but the others run at twice the speed
    }
    SECTION("a link trained on fewer lanes: named even where its copies meet the x8 figure") {
        auto g = ok;
        g[5] = mkgpu(5, 27, 27, 5, 8);
        v = judge_cuda(g, 8u, 8, t);
        CHECK(v.status == StageStatus::failed);
        bool width = false;
        for (auto& f : v.findings)
            width |= f.what == "gpu 5 (0000:15:00.0)" && f.problem == "PCIe link trained at x8, the H100-SXM has x16 (riser, slot or a lane fault)";
        CHECK(width);
        // An unknown model's lanes are not judged.
        std::vector<GpuResult> t4;
        for (int i = 0; i < 4; ++i) t4.push_back(mkgpu(i, 12, 12, 3, 8, "Tesla T4"));
        CHECK(judge_cuda(t4, 4u, 4, t).status == StageStatus::ok);
    }
    SECTION("an unknown model is judged against the others only") {
        std::vector<GpuResult> g;
        for (int i = 0; i < 6; ++i) g.push_back(mkgpu(i, 12, 12, 0, 0, "Tesla T4"));
        CHECK(judge_cuda(g, 6u, 6, t).status == StageStatus::ok);
        g[5].d2h_gbps = 6;
        v = judge_cuda(g, 6u, 6, t);
        REQUIRE(v.findings.size() == 1);
        CHECK_THAT(v.findings[0].problem, Catch::Matchers::StartsWith("D2H 6.0 GB/s is an outlier"));
    }
    SECTION("the site's figure replaces the table") {
        CHECK(judge_cuda(ok, 8u, 8, thresholds_from_env({{"GANGWAY_H2D_GBPS", "60"}})).status == StageStatus::ok);  // >= 51
        CHECK(judge_cuda(ok, 8u, 8, thresholds_from_env({{"GANGWAY_H2D_GBPS", "70"}})).status == StageStatus::failed);  // < 59.5
    }
    SECTION("a GPU whose check failed") {
        auto g = ok;
        g[1].error = "memory check failed";
        g[1].h2d_gbps.reset();
        g[1].d2h_gbps.reset();
        v = judge_cuda(g, 8u, 8, t);
        REQUIRE(v.findings.size() == 1);
        CHECK(v.findings[0].problem == "memory check failed");
    }
}

TEST_CASE("skipped stages, and required ones") {
    auto s = skipped("no GPUs", false, "cuda");
    CHECK(s.status == StageStatus::skipped);
    CHECK(s.detail == "no GPUs");
    s = skipped("no GPUs", true, "cuda");
    CHECK(s.status == StageStatus::failed);
    CHECK_THAT(s.detail, Catch::Matchers::ContainsSubstring("the cuda stage is required"));
}

TEST_CASE("NCCL expectations and verdicts") {
    const auto t = thresholds_from_env({});
    const auto h100 = gpu_model("NVIDIA H100 80GB HBM3");
    CHECK(*expected_busbw(h100, 8, 1, {}, t) == Approx(370));
    CHECK_FALSE(expected_busbw(h100, 4, 1, {}, t));
    CHECK_FALSE(expected_busbw(h100, 8, 2, {}, t));  // no NIC rates: unknown
    // 2 nodes with 8 x NDR: the network (8 x 47 = 376) is above the NVLink ring (370).
    CHECK(*expected_busbw(h100, 8, 2, std::vector<double>(8, 400), t) == Approx(370));
    // 4 x HDR: 94 GB/s.
    CHECK(*expected_busbw(h100, 8, 4, std::vector<double>(4, 200), t) == Approx(94));
    CHECK(*expected_busbw(h100, 8, 1, {}, thresholds_from_env({{"GANGWAY_NCCL_BUSBW_GBPS", "450"}})) == 450);

    NcclResult r;
    r.scope = "node";
    r.nranks = 8;
    r.bytes = double(1u << 30);
    r.model = "H100-SXM";
    r.expected_busbw = 370;
    // busbw 350 GB/s: algbw 200, t = 1 GiB / 200 GB/s.
    r.seconds = r.bytes / 200e9;
    auto v = judge_nccl({r}, t);
    CHECK(v.status == StageStatus::ok);
    CHECK_THAT(v.detail, Catch::Matchers::ContainsSubstring("algbw 200.0 GB/s, busbw 350.0 GB/s at 1024 MiB"));
    r.seconds = r.bytes / 100e9;  // busbw 175 < 0.8 x 370
    v = judge_nccl({r}, t);
    CHECK(v.status == StageStatus::failed);
    CHECK_THAT(v.findings.at(0).problem, Catch::Matchers::ContainsSubstring("busbw 175.0 GB/s, expected >= 296.0 GB/s"));
    r.seconds = r.bytes / 200e9;
    r.data_ok = false;
    CHECK(judge_nccl({r}, t).findings.at(0).problem == "the all-reduce returned wrong values");
    NcclResult hung;
    hung.scope = "job";
    hung.nranks = 16;
    hung.error = "communicator init hung: communicator aborted after 30 s";
    v = judge_nccl({hung}, t);
    CHECK(v.status == StageStatus::failed);
    CHECK(v.findings.at(0).what == "nccl job");
    NcclResult unknown = r;
    unknown.data_ok = true;
    unknown.expected_busbw.reset();
    CHECK_THAT(judge_nccl({unknown}, t).detail, Catch::Matchers::ContainsSubstring("no expected figure"));
}

TEST_CASE("where the job's NCCL is") {
    const std::string ldconfig =
        "1234 libs found in cache `/etc/ld.so.cache'\n"
        "\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2\n"
        "\tlibnccl.so (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so\n"
        "\tlibnccl-net.so (libc6,x86-64) => /opt/x/libnccl-net.so\n";
    auto c = nccl_candidates("", {"/venv/lib/python3.11/site-packages"}, "/opt/nccl/lib::/usr/local/cuda/lib64", ldconfig);
    CHECK(c == std::vector<std::string>{"/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2",
                                        "/opt/nccl/lib/libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2",
                                        "/usr/lib/x86_64-linux-gnu/libnccl.so.2"});
    CHECK(nccl_candidates("/my/libnccl.so.2", {"/x"}, "/y", ldconfig) == std::vector<std::string>{"/my/libnccl.so.2"});
    auto sp = site_packages_dirs({{"VIRTUAL_ENV", "/venv"}, {"HOME", "/home/u"}}, {"python3.11"});
    REQUIRE(sp.size() >= 4);
    CHECK(sp[0] == "/venv/lib/python3.11/site-packages");
    CHECK(sp[1] == "/home/u/.local/lib/python3.11/site-packages");
    CHECK(std::find(sp.begin(), sp.end(), "/usr/lib/python3.11/dist-packages") != sp.end());
}

TEST_CASE("the stages on a node without GPUs or NCCL are skipped, or fail when required") {
    // This test machine has no NVIDIA driver: libcuda.so.1 does not load.
    sys::CudaStageOptions o;
    o.env = {};
    auto r = sys::run_cuda_stage(o);
    if (r.result.status == StageStatus::skipped) {
        CHECK_THAT(r.result.detail, Catch::Matchers::StartsWith("no GPUs"));
        o.t.require_cuda = true;
        CHECK(sys::run_cuda_stage(o).result.status == StageStatus::failed);
        // The allocation promises GPUs but there are none: a failure.
        o.t.require_cuda = false;
        o.env = {{"CUDA_VISIBLE_DEVICES", "0,1"}};
        auto f = sys::run_cuda_stage(o);
        CHECK(f.result.status == StageStatus::failed);
        CHECK_THAT(f.result.detail, Catch::Matchers::ContainsSubstring("the allocation has 2 GPU(s)"));
        sys::NcclStageOptions n;
        CHECK(sys::run_nccl_stage_local(n).result.status == StageStatus::skipped);
        n.t.require_nccl = true;
        CHECK(sys::run_nccl_stage_local(n).result.status == StageStatus::failed);
    }
}

TEST_CASE("a stage past its deadline is aborted") {
    auto r = sys::with_deadline("cuda", 0.05, [] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return sys::StageOutcome{};
    });
    CHECK(r.result.status == StageStatus::aborted);
    CHECK_THAT(r.result.detail, Catch::Matchers::ContainsSubstring("did not finish"));
    r = sys::with_deadline("cuda", 5, []() -> sys::StageOutcome { throw Error("boom"); });
    CHECK(r.result.status == StageStatus::aborted);
    CHECK(r.result.detail == "internal error: boom");
}
