// `gangway gpu-check --local`: the preflight's GPU and RDMA stages (cuda,
// nccl, verbs) on this node alone, printed as `gangway check` prints stages,
// or as its JSON report. Runs on any node: without GPUs, NCCL or RDMA devices
// the stages say "skipped" (or "failed" when required).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../lib/base/error.hpp"
#include "../lib/fleet/report_schema.hpp"
#include "../lib/preflight/gpu_checks.hpp"
#include "../lib/preflight/local_report.hpp"
#include "../lib/preflight/report.hpp"
#include "../lib/sys/node/process_env.hpp"
#include "../lib/sys/stages/local_stages.hpp"
#include "../lib/sys/stages/stage.hpp"
#include "commands.hpp"


namespace gangway::cli {
using preflight::StageStatus;

namespace {

const char* kUsage =
    "usage: gangway gpu-check --local [--json] [--full] [--stages=LIST] [--require=LIST]\n"
    "                         [--nccl-lib=PATH] [--sysfs-root=DIR] [--timeout=SEC]\n"
    "Runs the preflight's GPU and RDMA stages on this node and prints their results:\n"
    "  cuda   GPU count against the allocation; per GPU: context, allocation, a memory\n"
    "         check, pinned host-to-device and device-to-host bandwidth (256 MiB copies)\n"
    "         against the model's PCIe figure, and outliers among the GPUs (median/MAD)\n"
    "  nccl   one all-reduce of this node's GPUs at 1 GiB with NCCL_ALGO=Ring: algbw and\n"
    "         busbw as nccl-tests computes them, against the model's figure\n"
    "  verbs  each compute HCA port: state, physical state, rate and width, MTU, RoCE v2 GID\n"
    "  --local          this node only (the multi-node stages run in gangway check)\n"
    "  --json           the JSON report instead of the table\n"
    "  --full           more copies and an all-reduce sweep (64 MiB, 256 MiB, 1 GiB)\n"
    "  --stages=LIST    which of cuda,nccl,verbs to run (default: all)\n"
    "  --require=LIST   a stage that cannot run here fails instead of being skipped  [GANGWAY_REQUIRE]\n"
    "  --nccl-lib=PATH  the libnccl.so.2 the job uses (default: PyTorch's bundled one,\n"
    "                   then LD_LIBRARY_PATH, then ldconfig's)                      [GANGWAY_NCCL_LIB]\n"
    "  --sysfs-root=DIR read /sys under DIR (a copy from a node, tests): GPU links, HCA ports\n"
    "  --timeout=SEC    deadline per stage (default 60)\n"
    "Thresholds: GANGWAY_H2D_GBPS, GANGWAY_GPU_BW_RATIO, GANGWAY_NCCL_BUSBW_GBPS, GANGWAY_NCCL_RATIO,\n"
    "GANGWAY_NCCL_BYTES, GANGWAY_IB_RATE_GBPS, GANGWAY_IB_GID_INDEX, GANGWAY_OUTLIER_Z (gangway(1)).\n"
    "exit codes: 0 ok or skipped, 3 a stage failed, 2 usage";

bool has_stage(const std::string& list, const char* s) {
    if (list.empty()) return true;
    std::string l = "," + list + ",";
    return l.find(std::string(",") + s + ",") != std::string::npos;
}

}  // namespace

int cmd_gpu_check(int argc, char** argv) {
    bool local = false, json = false, full = false;
    std::string stages, require, nccl_lib, root = "/";
    double timeout = 60;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto val = [&](const char* name) { return option_value(argc, argv, i, name); };
        if (a == "--help" || a == "-h") {
            std::puts(kUsage);
            return 0;
        } else if (a == "--local") local = true;
        else if (a == "--json") json = true;
        else if (a == "--full") full = true;
        else if (auto v = val("--stages")) stages = *v;
        else if (auto v = val("--require")) require = *v;
        else if (auto v = val("--nccl-lib")) nccl_lib = *v;
        else if (auto v = val("--sysfs-root")) root = *v;
        else if (auto v = val("--timeout")) {
            try {
                timeout = std::stod(*v);
            } catch (...) {
                timeout = -1;
            }
            if (!(timeout > 0)) {
                std::fprintf(stderr, "gangway gpu-check: --timeout wants seconds > 0, not \"%s\"\n", v->c_str());
                return 2;
            }
        } else {
            std::fprintf(stderr, "gangway gpu-check: unknown option \"%s\"\n%s\n", a.c_str(), kUsage);
            return 2;
        }
    }
    if (!local) {
        std::fprintf(stderr,
                     "gangway gpu-check: only --local is supported; the stages across nodes run in `srun gangway check`\n");
        return 2;
    }
    EnvMap env = sys::process_env();
    if (!require.empty()) env["GANGWAY_REQUIRE"] = require + (env.count("GANGWAY_REQUIRE") ? "," + env["GANGWAY_REQUIRE"] : "");
    sys::LocalStagesOptions lo;
    for (const char* st : {"cuda", "nccl", "verbs"})
        if (has_stage(stages, st)) lo.stages.push_back(st);
    lo.full = full;
    lo.timeout_s = timeout;
    lo.nccl_lib = nccl_lib;
    lo.root = root;
    lo.env = env;
    std::vector<sys::StageOutcome> outs;
    try {
        outs = sys::run_local_stages(lo);
    } catch (const Error& e) {
        std::fprintf(stderr, "gangway gpu-check: %s\n", e.what());
        return 2;
    }

    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::vector<preflight::LocalStage> results;
    for (const auto& o : outs) results.push_back({o.result, o.findings});
    preflight::Report rep = preflight::local_report(host, full, results);
    for (const auto& o : outs) sys::add_device_records(o, 0, rep);
    const bool failed = rep.nodes.front().status == preflight::NodeStatus::faulty;
    if (json) {
        std::fputs(fleet::render_job_check(rep).c_str(), stdout);
    } else {
        std::printf("gangway gpu-check on %s: %s\n", host, failed ? "failed" : "ok");
        for (const auto& s : rep.stages)
            std::printf("  %-6s %-8s %6.2f s  %s\n", s.name.c_str(), to_string(s.status), s.seconds, s.detail.c_str());
        for (const auto& o : outs)
            for (const auto& f : o.findings) std::printf("  finding: %s: %s: %s\n", o.result.name.c_str(), f.what.c_str(), f.problem.c_str());
    }
    std::fflush(stdout);
    // A stage left behind by its deadline may still hold a CUDA or verbs call: do not wait for it.
    if (failed) std::_Exit(preflight::kExitDegraded);
    std::_Exit(0);
}

}  // namespace gangway::cli
