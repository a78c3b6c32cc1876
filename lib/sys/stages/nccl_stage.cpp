// The nccl stage: the job's libnccl (found as the job's framework would find
// it, loaded with dlopen), this node's GPUs in one all-reduce at a large size
// (nccl_allreduce.cpp), judged with nccl-tests' arithmetic.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "../run/subprocess.hpp"
#include "cuda_api.hpp"
#include "nccl_api.hpp"
#include "nccl_stage.hpp"

namespace gangway::sys {
using preflight::StageStatus;
namespace {

// `ldconfig -p`'s list of the libraries the loader knows ("" when neither
// ldconfig runs): through sys::run_command, with a deadline and a cap, like
// every other command gangway runs. /sbin first: a user's PATH may lack it.
std::string ldconfig_list() {
    constexpr double kTimeoutS = 10;
    constexpr std::size_t kMaxBytes = std::size_t(8) << 20;  // a large image lists some 10^4 lines
    for (const char* prog : {"/sbin/ldconfig", "ldconfig"})
        if (const auto r = run_command({prog, "-p"}, kTimeoutS, kMaxBytes); r && r->status == 0) return r->output;
    return {};
}

std::string getenv_or(const EnvMap& env, const char* k) {
    auto it = env.find(k);
    return it == env.end() ? "" : it->second;
}

}  // namespace

NcclLib find_nccl(const std::string& explicit_path, const EnvMap& env) {
    NcclLib lib;
    std::vector<std::string> pys;
    for (int minor = 14; minor >= 8; --minor) pys.push_back("python3." + std::to_string(minor));
    const std::string chosen = explicit_path.empty() ? getenv_or(env, "GANGWAY_NCCL_LIB") : explicit_path;
    const auto ldconfig = chosen.empty() ? ldconfig_list() : "";
    const auto cands = gpu::nccl_candidates(chosen, gpu::site_packages_dirs(env, pys), getenv_or(env, "LD_LIBRARY_PATH"), ldconfig);
    for (const auto& c : cands) {
        std::error_code ec;
        if (!std::filesystem::exists(c, ec)) continue;
        lib.tried.push_back(c);
        std::string err;
        if (const nccl::Api* n = nccl::load(c, err)) {
            lib.path = c;
            n->get_version(&lib.version);
            return lib;
        }
        lib.error = err;
    }
    if (!chosen.empty() && lib.tried.empty()) lib.error = chosen + " does not exist (--nccl-lib or GANGWAY_NCCL_LIB)";
    else if (lib.error.empty())
        lib.error = "no libnccl.so.2 (looked in PyTorch's site-packages/nvidia/nccl/lib, LD_LIBRARY_PATH and ldconfig); "
                    "give the job's with --nccl-lib=PATH";
    return lib;
}

std::optional<std::string> nccl_unique_id(const std::string& lib_path, std::string& err) {
    const nccl::Api* n = nccl::load(lib_path, err);
    if (!n) return std::nullopt;
    nccl::UniqueId id{};
    if (auto r = n->get_unique_id(&id); r != nccl::kSuccess) {
        err = "ncclGetUniqueId failed: " + n->err(r) + " (no usable bootstrap interface? see NCCL_SOCKET_IFNAME)";
        return std::nullopt;
    }
    return std::string(id.internal, sizeof id.internal);
}

StageOutcome run_nccl_stage_local(const NcclStageOptions& o) {
    const auto t0 = Clock::now();
    auto secs = [&] { return seconds_since(t0); };
    std::string why;
    const cu::Api* a = cu::api(why);
    int count = 0;
    if (a && a->init(0) == cu::kSuccess) a->device_count(&count);
    else if (why.empty()) why = "the driver sees no GPU";
    if (!a || count == 0) return to_outcome("nccl", gpu::skipped("no GPUs" + (why.empty() ? "" : " (" + why + ")"), o.t.require_nccl, "nccl"), secs());
    const NcclLib lib = find_nccl(o.nccl_lib.empty() ? o.t.nccl_lib : o.nccl_lib, o.env);
    if (lib.path.empty())
        return to_outcome("nccl", {o.t.require_nccl ? StageStatus::failed : StageStatus::skipped, "no NCCL: " + lib.error, {}}, secs());
    std::string err;
    auto id = nccl_unique_id(lib.path, err);
    if (!id) return to_outcome("nccl", {StageStatus::failed, err, {}}, secs());

    // The model of GPU 0 names the expected figure.
    std::string model;
    cu::Device dev{};
    char name[256] = {};
    if (a->device_get(&dev, 0) == cu::kSuccess) a->device_name(name, sizeof name - 1, dev);
    const auto m = gpu::gpu_model(name);
    std::vector<double> sizes{o.t.nccl_bytes};
    if (o.full) {  // a small sweep up to the judged size; the deadline is shared out among them
        for (double b : {64.0 * (1 << 20), 256.0 * (1 << 20)})
            if (b < o.t.nccl_bytes) sizes.insert(sizes.end() - 1, b);
    }
    std::vector<gpu::NcclResult> runs;
    for (double bytes : sizes) {
        NcclJob job;
        job.lib_path = lib.path;
        job.unique_id = *id;
        job.nranks = job.devices = static_cast<unsigned>(count);
        job.bytes = bytes;
        job.iterations = o.full ? 20 : 5;
        job.deadline_s = o.deadline_s / static_cast<double>(sizes.size());
        auto r = nccl_allreduce(job);
        r.model = m.key;
        // Only the large size is judged against the figure; the sweep is for the eye.
        if (bytes == o.t.nccl_bytes) r.expected_busbw = gpu::expected_busbw(m, static_cast<unsigned>(count), 1, {}, o.t);
        runs.push_back(r);
        if (!r.error.empty()) break;
        if (bytes != sizes.back()) {
            // A fresh id for the next communicator.
            id = nccl_unique_id(lib.path, err);
            if (!id) break;
        }
    }
    auto v = gpu::judge_nccl(runs, o.t);
    char ver[48];
    std::snprintf(ver, sizeof ver, "NCCL %d.%d.%d", lib.version / 10000, lib.version / 100 % 100, lib.version % 100);
    v.detail = std::string(ver) + " " + lib.path + "; " + v.detail;
    auto out = to_outcome("nccl", v, secs());
    out.nccl_lib = lib.path;
    out.nccl_runs = runs;
    return out;
}

}  // namespace gangway::sys
