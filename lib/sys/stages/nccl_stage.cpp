// The nccl stage: the job's libnccl loaded with dlopen, one Ring all-reduce
// at a large size, nccl-tests' arithmetic, and a hung communicator aborted
// within the deadline (non-blocking communicators, ncclCommGetAsyncError
// polling, ncclCommAbort).
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "../../base/error.hpp"
#include "cuda_api.hpp"
#include "nccl_stage.hpp"

#ifdef HAVE_CUDA
#include <nccl.h>
#endif

namespace gangway::sys {
using preflight::StageStatus;
namespace {

using Clock = std::chrono::steady_clock;

// Our own declarations of the NCCL ABI we use (stable since 2.14).
using nccl_result = int;
using nccl_comm = struct ncclComm_gw*;
struct UniqueId {
    char internal[128];
};
constexpr int kNcclSuccess = 0, kNcclInProgress = 7, kFloat32 = 7, kSum = 0;
constexpr int kUndefInt = INT_MIN;
// The leading fields of ncclConfig_t as of NCCL 2.18; NCCL reads `size`
// bytes and defaults the rest, so an older or newer library accepts it.
struct Config {
    std::size_t size;
    unsigned magic;
    unsigned version;
    int blocking, cga_cluster_size, min_ctas, max_ctas;
    const char* net_name;
    int split_share;
};
#ifdef HAVE_CUDA
static_assert(sizeof(ncclUniqueId) == sizeof(UniqueId));
static_assert(ncclSuccess == kNcclSuccess && ncclInProgress == kNcclInProgress && ncclFloat32 == kFloat32 && ncclSum == kSum);
static_assert(offsetof(ncclConfig_t, blocking) == offsetof(Config, blocking));
static_assert(offsetof(ncclConfig_t, netName) == offsetof(Config, net_name));
static_assert(offsetof(ncclConfig_t, splitShare) == offsetof(Config, split_share));
#endif

struct Nccl {
    void* h = nullptr;
    nccl_result (*get_version)(int*) = nullptr;
    nccl_result (*get_unique_id)(UniqueId*) = nullptr;
    nccl_result (*init_rank)(nccl_comm*, int, UniqueId, int) = nullptr;
    nccl_result (*init_rank_config)(nccl_comm*, int, UniqueId, int, Config*) = nullptr;  // 2.14+
    nccl_result (*group_start)() = nullptr;
    nccl_result (*group_end)() = nullptr;
    nccl_result (*all_reduce)(const void*, void*, std::size_t, int, int, nccl_comm, cu::Stream) = nullptr;
    nccl_result (*async_error)(nccl_comm, nccl_result*) = nullptr;
    nccl_result (*abort)(nccl_comm) = nullptr;
    nccl_result (*destroy)(nccl_comm) = nullptr;
    const char* (*error_string)(nccl_result) = nullptr;

    std::string err(nccl_result r) const {
        return "NCCL error " + std::to_string(r) + (error_string ? std::string(" (") + error_string(r) + ")" : "");
    }
};

// Libraries stay loaded for the life of the process (NCCL's threads may outlive a stage).
const Nccl* load_nccl(const std::string& path, std::string& err) {
    static std::mutex mu;
    static std::map<std::string, std::unique_ptr<Nccl>> loaded;
    std::lock_guard<std::mutex> l(mu);
    if (auto it = loaded.find(path); it != loaded.end()) return it->second.get();
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = ::dlerror();
        err = "cannot load " + path + ": " + (e ? e : "dlopen failed");
        return nullptr;
    }
    auto n = std::make_unique<Nccl>();
    n->h = h;
    auto get = [&](auto& f, const char* name) {
        f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(::dlsym(h, name));
        return f != nullptr;
    };
    if (!get(n->get_version, "ncclGetVersion") || !get(n->get_unique_id, "ncclGetUniqueId") ||
        !get(n->init_rank, "ncclCommInitRank") || !get(n->group_start, "ncclGroupStart") || !get(n->group_end, "ncclGroupEnd") ||
        !get(n->all_reduce, "ncclAllReduce") || !get(n->async_error, "ncclCommGetAsyncError") ||
        !get(n->abort, "ncclCommAbort") || !get(n->destroy, "ncclCommDestroy")) {
        err = path + " is not a usable NCCL (a symbol is missing)";
        return nullptr;
    }
    get(n->init_rank_config, "ncclCommInitRankConfig");
    get(n->error_string, "ncclGetErrorString");
    int v = 0;
    n->get_version(&v);
    if (v < 21400) n->init_rank_config = nullptr;  // no non-blocking communicators before 2.14
    return (loaded[path] = std::move(n)).get();
}

std::string run_out(const char* cmd) {
    std::string out;
    if (FILE* p = ::popen(cmd, "r")) {
        char buf[4096];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
        ::pclose(p);
    }
    return out;
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
    const auto ldconfig = chosen.empty() ? run_out("/sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null") : "";
    const auto cands = gpu::nccl_candidates(chosen, gpu::site_packages_dirs(env, pys), getenv_or(env, "LD_LIBRARY_PATH"), ldconfig);
    for (const auto& c : cands) {
        std::error_code ec;
        if (!std::filesystem::exists(c, ec)) continue;
        lib.tried.push_back(c);
        std::string err;
        if (const Nccl* n = load_nccl(c, err)) {
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
    const Nccl* n = load_nccl(lib_path, err);
    if (!n) return std::nullopt;
    UniqueId id{};
    if (auto r = n->get_unique_id(&id); r != kNcclSuccess) {
        err = "ncclGetUniqueId failed: " + n->err(r) + " (no usable bootstrap interface? see NCCL_SOCKET_IFNAME)";
        return std::nullopt;
    }
    return std::string(id.internal, sizeof id.internal);
}

gpu::NcclResult nccl_allreduce(const NcclJob& job) {
    gpu::NcclResult res;
    res.scope = job.scope;
    res.nranks = job.nranks;
    res.bytes = job.bytes;
    std::string err;
    const cu::Api* a = cu::api(err);
    const Nccl* n = a ? load_nccl(job.lib_path, err) : nullptr;
    if (!a || !n) {
        res.error = err;
        return res;
    }
    if (job.unique_id.size() != sizeof(UniqueId) || job.devices == 0 || job.first_rank + job.devices > job.nranks) {
        res.error = "bad NCCL job (unique id of " + std::to_string(job.unique_id.size()) + " bytes, ranks " +
                    std::to_string(job.first_rank) + "+" + std::to_string(job.devices) + " of " + std::to_string(job.nranks) + ")";
        return res;
    }
    // Ring: Tree and NVLS would inflate busbw past the links' speed (nccl-tests#196, #212).
    ::setenv("NCCL_ALGO", "Ring", 1);
    UniqueId id;
    std::memcpy(id.internal, job.unique_id.data(), sizeof id.internal);
    const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(job.deadline_s));
    const std::size_t count = static_cast<std::size_t>(job.bytes) / 4;
    const unsigned nd = job.devices;

    struct Dev {
        cu::Device dev{};
        cu::Context ctx{};
        cu::Ptr buf = 0;
        cu::Stream s{};
        cu::Event e0{}, e1{};
        nccl_comm comm = nullptr;
        bool retained = false;
    };
    std::vector<Dev> ds(nd);
    bool aborted = false;
    auto cleanup = [&] {
        for (auto& d : ds) {
            if (d.retained) a->ctx_set_current(d.ctx);
            if (d.comm) (aborted ? n->abort : n->destroy)(d.comm);
            if (d.e0) a->event_destroy(d.e0);
            if (d.e1) a->event_destroy(d.e1);
            if (d.s) a->stream_destroy(d.s);
            if (d.buf) a->mem_free(d.buf);
            if (d.retained) a->primary_release(d.dev);
        }
    };
    auto fail = [&](const std::string& why) {
        res.error = why;
        cleanup();
        return res;
    };
    cu::Result r = a->init(0);
    if (r != cu::kSuccess) return fail("cuInit failed: " + a->err(r));
    for (unsigned i = 0; i < nd; ++i) {
        auto& d = ds[i];
        if ((r = a->device_get(&d.dev, static_cast<int>(i))) != cu::kSuccess ||
            (r = a->primary_retain(&d.ctx, d.dev)) != cu::kSuccess)
            return fail("GPU " + std::to_string(i) + ": " + a->err(r));
        d.retained = true;
        a->ctx_set_current(d.ctx);
        if ((r = a->mem_alloc(&d.buf, count * 4)) != cu::kSuccess) return fail("GPU " + std::to_string(i) + ": allocation failed: " + a->err(r));
        if ((r = a->stream_create(&d.s, 1)) != cu::kSuccess || (r = a->event_create(&d.e0, 0)) != cu::kSuccess ||
            (r = a->event_create(&d.e1, 0)) != cu::kSuccess)
            return fail("GPU " + std::to_string(i) + ": " + a->err(r));
        a->memset_d32(d.buf, 0x3f800000u, count);  // 1.0f everywhere: the sum is nranks
    }
    // Wait for every communicator to leave ncclInProgress, or abort them all.
    auto settle = [&](const char* what) -> bool {
        for (;;) {
            bool pending = false;
            for (auto& d : ds) {
                if (!d.comm) continue;
                nccl_result st = kNcclSuccess;
                n->async_error(d.comm, &st);
                if (st == kNcclInProgress) pending = true;
                else if (st != kNcclSuccess) {
                    aborted = true;
                    res.error = std::string(what) + " failed: " + n->err(st);
                    return false;
                }
            }
            if (!pending) return true;
            if (Clock::now() > deadline) {
                aborted = true;
                res.error = std::string(what) + " hung: communicator aborted after " + std::to_string(static_cast<int>(job.deadline_s)) + " s";
                return false;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    };
    Config cfg{sizeof(Config), 0xcafebeefu, 21800u, 0, kUndefInt, kUndefInt, kUndefInt, nullptr, kUndefInt};
    n->group_start();
    for (unsigned i = 0; i < nd; ++i) {
        a->ctx_set_current(ds[i].ctx);
        const int rank = static_cast<int>(job.first_rank + i);
        nccl_result rr = n->init_rank_config ? n->init_rank_config(&ds[i].comm, static_cast<int>(job.nranks), id, rank, &cfg)
                                             : n->init_rank(&ds[i].comm, static_cast<int>(job.nranks), id, rank);
        if (rr != kNcclSuccess && rr != kNcclInProgress) {
            n->group_end();
            aborted = true;  // the other ranks' inits may be under way: destroy could block on them
            return fail("ncclCommInitRank failed: " + n->err(rr));
        }
    }
    if (auto rr = n->group_end(); rr != kNcclSuccess && rr != kNcclInProgress) {
        aborted = true;
        return fail("ncclCommInitRank failed: " + n->err(rr));
    }
    if (!settle("communicator init")) {
        cleanup();
        return res;
    }
    // Waits for the streams while watching the communicators.
    auto wait_streams = [&](const char* what) -> bool {
        for (;;) {
            bool busy = false;
            for (auto& d : ds) {
                a->ctx_set_current(d.ctx);
                const auto q = a->stream_query(d.s);
                if (q == cu::kNotReady) busy = true;
                else if (q != cu::kSuccess) {
                    aborted = true;
                    res.error = std::string(what) + ": " + a->err(q);
                    return false;
                }
            }
            if (!busy) return true;
            if (!settle(what)) return false;
            if (Clock::now() > deadline) {
                aborted = true;
                res.error = std::string(what) + " hung: communicator aborted after " + std::to_string(static_cast<int>(job.deadline_s)) + " s";
                return false;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    };
    auto launch = [&]() -> bool {
        n->group_start();
        for (auto& d : ds) {
            a->ctx_set_current(d.ctx);
            auto rr = n->all_reduce(reinterpret_cast<void*>(d.buf), reinterpret_cast<void*>(d.buf), count, kFloat32, kSum, d.comm, d.s);
            if (rr != kNcclSuccess && rr != kNcclInProgress) {
                n->group_end();
                res.error = "ncclAllReduce failed: " + n->err(rr);
                aborted = true;
                return false;
            }
        }
        auto rr = n->group_end();
        if (rr != kNcclSuccess && rr != kNcclInProgress) {
            res.error = "ncclAllReduce failed: " + n->err(rr);
            aborted = true;
            return false;
        }
        return settle("all-reduce");
    };
    // Warm-up, whose result is checked: every element is nranks.
    if (!launch() || !wait_streams("all-reduce")) {
        cleanup();
        return res;
    }
    // 17 windows of up to 64 Ki floats spread over the whole buffer (its start,
    // every sixteenth, its end): a corrupting link or GPU shows wherever it hits.
    std::vector<float> back(std::min<std::size_t>(count, 1 << 16));
    for (auto& d : ds) {
        a->ctx_set_current(d.ctx);
        for (std::size_t k = 0; k <= 16 && res.data_ok; ++k) {
            const std::size_t off = (count - back.size()) / 16 * k;
            if (a->copy_dtoh(back.data(), d.buf + off * 4, back.size() * 4) != cu::kSuccess) res.data_ok = false;
            for (float v : back)
                if (v != static_cast<float>(job.nranks)) res.data_ok = false;
        }
    }
    // Timed: `iterations` back to back between events on every stream.
    for (auto& d : ds) {
        a->ctx_set_current(d.ctx);
        a->memset_d32(d.buf, 0x3f800000u, count);
        a->event_record(d.e0, d.s);
    }
    for (int it = 0; it < job.iterations; ++it)
        if (!launch()) {
            cleanup();
            return res;
        }
    for (auto& d : ds) {
        a->ctx_set_current(d.ctx);
        a->event_record(d.e1, d.s);
    }
    if (!wait_streams("all-reduce")) {
        cleanup();
        return res;
    }
    double worst_ms = 0;
    for (auto& d : ds) {
        a->ctx_set_current(d.ctx);
        float ms = 0;
        if (a->event_elapsed(&ms, d.e0, d.e1) == cu::kSuccess) worst_ms = std::max(worst_ms, double(ms));
    }
    res.seconds = worst_ms / 1e3 / std::max(1, job.iterations);
    cleanup();
    return res;
}

StageOutcome run_nccl_stage_local(const NcclStageOptions& o) {
    const auto t0 = Clock::now();
    auto secs = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
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
