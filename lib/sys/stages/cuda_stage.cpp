// The cuda stage: per GPU a context, an allocation, a memory check, a
// computation check and pinned copy bandwidth, judged by gpu::judge_cuda.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_api.hpp"
#include "cuda_handles.hpp"
#include "cuda_kernel.hpp"
#include "cuda_stage.hpp"
#include "../../base/pci_bus_id.hpp"
#include "../devices/pci_link.hpp"
#include "../node/sysfs.hpp"

namespace gangway::sys {
using preflight::StageStatus;
namespace {

// What the checks of one GPU use; freed when it goes, whichever check stopped.
struct GpuMemory {
    explicit GpuMemory(const cu::Api& a) : d(a), h(a), s(a), e0(a), e1(a) {}
    cu::UniqueDeviceMem d;
    cu::UniqueHostMem h;  // pinned, as large as d
    cu::UniqueStream s;
    cu::UniqueEvent e0, e1;
};

// g.error = "WHAT: CUDA error N (...)"; false, for `return fail(...)`.
bool fail(const cu::Api& a, gpu::GpuResult& g, const std::string& what, cu::Result r) {
    g.error = what + ": " + a.err(r);
    return false;
}

bool allocate(const cu::Api& a, std::size_t bytes, GpuMemory& m, gpu::GpuResult& g) {
    cu::Result r;
    if ((r = a.mem_alloc(m.d.out(), bytes)) != cu::kSuccess) return fail(a, g, "device memory allocation failed", r);
    if ((r = a.host_alloc(m.h.out(), bytes)) != cu::kSuccess) return fail(a, g, "pinned host memory allocation failed", r);
    if ((r = a.stream_create(m.s.out(), 1)) != cu::kSuccess) return fail(a, g, "stream creation failed", r);
    if ((r = a.event_create(m.e0.out(), 0)) != cu::kSuccess || (r = a.event_create(m.e1.out(), 0)) != cu::kSuccess)
        return fail(a, g, "event creation failed", r);
    return true;
}

// A computation with a known result: the GPU fills its memory with a
// pattern, we read 1 MiB back from each end.
bool memory_check(const cu::Api& a, const GpuMemory& m, std::size_t bytes, int index, gpu::GpuResult& g) {
    const unsigned pattern = 0xA5C30F00u | static_cast<unsigned>(index & 0xff);
    cu::Result r;
    if ((r = a.memset_d32(m.d.get(), pattern, bytes / 4)) != cu::kSuccess) return fail(a, g, "memset failed", r);
    std::vector<unsigned> back(1 << 18);
    for (std::size_t off : {std::size_t(0), bytes - back.size() * 4}) {
        if ((r = a.copy_dtoh(back.data(), m.d.get() + off, back.size() * 4)) != cu::kSuccess) return fail(a, g, "copy back failed", r);
        for (unsigned v : back)
            if (v != pattern) {
                char b[128];
                std::snprintf(b, sizeof b, "memory check failed: read 0x%08x where the GPU wrote 0x%08x", v, pattern);
                g.error = b;
                return false;
            }
    }
    return true;
}

// Runs the check's kernel on n floats of d; a driver that cannot compile the
// PTX leaves g.kernel_note and `ran` false. The module goes before the result
// is read back.
bool run_axpb(const cu::Api& a, cu::Ptr d, unsigned n, cu::Stream s, gpu::GpuResult& g, bool& ran) {
    cu::UniqueModule mod(a);
    cu::Result r = a.module_load_data(mod.out(), kAxpbPtx);
    if (r == 209 || r == 218 || r == 221 || r == 222) {  // no binary, invalid PTX, no JIT, PTX too new
        g.kernel_note = "the driver cannot compile the check's PTX: " + a.err(r);
        return true;
    }
    if (r != cu::kSuccess) return fail(a, g, "loading the computation failed", r);
    cu::Function fn{};
    float fa = 2, fb = 1;
    void* params[] = {&d, &n, &fa, &fb};
    if ((r = a.module_get_function(&fn, mod.get(), kAxpbKernel)) != cu::kSuccess ||
        (r = a.launch_kernel(fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s, params, nullptr)) != cu::kSuccess ||
        (r = a.stream_sync(s)) != cu::kSuccess)
        return fail(a, g, "the computation failed", r);
    ran = true;
    return true;
}

// The SMs compute x[i] = 2i + 1 over the first 4 MiB of `d` (cuda_kernel.hpp)
// and every element is checked. A driver that cannot compile the PTX is not
// the GPU's fault: the check is then left out and said so (g.kernel_note).
// False with g.error when the GPU computed wrong or failed to run it.
bool compute_check(const cu::Api& a, cu::Ptr d, std::size_t bytes, cu::Stream s, gpu::GpuResult& g) {
    if (!a.module_load_data) {
        g.kernel_note = "the driver lacks the module API";
        return true;
    }
    const unsigned n = static_cast<unsigned>(std::min<std::size_t>(bytes / 4, std::size_t(1) << 20));
    bool ran = false;
    if (!run_axpb(a, d, n, s, g, ran)) return false;
    if (!ran) return true;
    std::vector<float> x(n);
    if (cu::Result r = a.copy_dtoh(x.data(), d, std::size_t(n) * 4); r != cu::kSuccess)
        return fail(a, g, "reading the computation back failed", r);
    for (unsigned i = 0; i < n; ++i)
        if (x[i] != 2.0f * static_cast<float>(i) + 1.0f) {
            char b[160];
            std::snprintf(b, sizeof b, "computation returned a wrong value: element %u is %g, 2 x %u + 1 = %u", i,
                          static_cast<double>(x[i]), i, 2 * i + 1);
            g.error = b;
            return false;
        }
    g.kernel_ok = true;
    return true;
}

// A host pattern to the GPU and back.
bool round_trip(const cu::Api& a, const GpuMemory& m, std::size_t bytes, gpu::GpuResult& g) {
    auto* hw = static_cast<unsigned*>(m.h.get());
    for (std::size_t i = 0; i < bytes / 4; ++i) hw[i] = static_cast<unsigned>(i * 2654435761u);
    cu::Result r;
    if ((r = a.copy_htod_async(m.d.get(), m.h.get(), bytes, m.s.get())) != cu::kSuccess || (r = a.stream_sync(m.s.get())) != cu::kSuccess)
        return fail(a, g, "host-to-device copy failed", r);
    std::memset(m.h.get(), 0, bytes);
    if ((r = a.copy_dtoh_async(m.h.get(), m.d.get(), bytes, m.s.get())) != cu::kSuccess || (r = a.stream_sync(m.s.get())) != cu::kSuccess)
        return fail(a, g, "device-to-host copy failed", r);
    for (std::size_t i = 0; i < bytes / 4; i += 4099)
        if (hw[i] != static_cast<unsigned>(i * 2654435761u)) {
            g.error = "data changed on a round trip through the GPU (word " + std::to_string(i) + ")";
            return false;
        }
    return true;
}

// The GPU's PCIe link as sysfs reads it (the node check's reader,
// read_pci_link). Right after traffic: an idle GPU drops its link to a low speed.
void read_link(const CudaStageOptions& o, gpu::GpuResult& g) {
    const LinkEnd l = read_pci_link(o.root, g.bus_id).link;
    g.pcie_gen = l.cur_gen;
    g.pcie_width = std::max(0, l.cur_width);  // 0: unknown, as before
}

// H2D then D2H: one untimed copy, then `iterations` back to back between two
// events; after H2D, the PCIe link as sysfs reads it.
bool measure_bandwidth(const cu::Api& a, const GpuMemory& m, const CudaStageOptions& o, gpu::GpuResult& g) {
    const std::size_t bytes = o.copy_bytes;
    const cu::Ptr d = m.d.get();
    void* h = m.h.get();
    const cu::Stream s = m.s.get();
    for (int dir = 0; dir < 2; ++dir) {
        auto copy = [&] { return dir ? a.copy_dtoh_async(h, d, bytes, s) : a.copy_htod_async(d, h, bytes, s); };
        cu::Result r;
        if ((r = copy()) != cu::kSuccess || (r = a.stream_sync(s)) != cu::kSuccess) return fail(a, g, "copy failed", r);
        if ((r = a.event_record(m.e0.get(), s)) != cu::kSuccess) return fail(a, g, "event record failed", r);
        for (int i = 0; i < o.iterations; ++i)
            if ((r = copy()) != cu::kSuccess) return fail(a, g, "copy failed", r);
        if ((r = a.event_record(m.e1.get(), s)) != cu::kSuccess || (r = a.event_sync(m.e1.get())) != cu::kSuccess)
            return fail(a, g, "copy failed", r);
        float ms = 0;
        if ((r = a.event_elapsed(&ms, m.e0.get(), m.e1.get())) != cu::kSuccess) return fail(a, g, "event timing failed", r);
        const double gbps = ms > 0 ? double(bytes) * o.iterations / 1e9 / (ms / 1e3) : 0;
        (dir ? g.d2h_gbps : g.h2d_gbps) = gbps;
        if (dir == 0) read_link(o, g);
    }
    return true;
}

// One GPU's share of the stage. Fills g.error on the first failure.
void check_gpu(const cu::Api& a, int index, const CudaStageOptions& o, gpu::GpuResult& g) {
    cu::Device dev{};
    cu::Result r = a.device_get(&dev, index);
    if (r != cu::kSuccess) {
        g.error = "cannot open: " + a.err(r);
        return;
    }
    char name[256] = {}, bus[64] = {};
    a.device_name(name, sizeof name - 1, dev);
    a.device_bus_id(bus, sizeof bus - 1, dev);
    g.name = name;
    g.bus_id = sysfs_bus_id(bus);  // cuDeviceGetPCIBusId: some drivers write an 8-digit domain, upper case
    cu::PrimaryContext ctx(a);  // before m: released after m's objects are gone
    if ((r = ctx.retain(dev)) != cu::kSuccess || (r = ctx.make_current()) != cu::kSuccess) {
        g.error = "context creation failed: " + a.err(r);
        return;
    }
    GpuMemory m(a);
    if (allocate(a, o.copy_bytes, m, g) && memory_check(a, m, o.copy_bytes, index, g) &&
        compute_check(a, m.d.get(), o.copy_bytes, m.s.get(), g) && round_trip(a, m, o.copy_bytes, g)) {
        if (o.measure_copy) measure_bandwidth(a, m, o, g);
        else read_link(o, g);  // after the round trip's traffic
    }
}

}  // namespace

StageOutcome run_cuda_stage(const CudaStageOptions& o, std::vector<gpu::GpuResult>* per_gpu) {
    const auto t0 = Clock::now();
    auto secs = [&] { return seconds_since(t0); };
    const auto expected = gpu::allocated_gpus(o.env);
    std::string why;
    const cu::Api* a = cu::api(why);
    auto none = [&](const std::string& reason) {
        // No GPUs here. The allocation having some is a failure in itself.
        if (expected && *expected > 0)
            return to_outcome("cuda", {StageStatus::failed, "the allocation has " + std::to_string(*expected) + " GPU(s) but " + reason, {}},
                              secs());
        return to_outcome("cuda", gpu::skipped("no GPUs (" + reason + ")", o.t.require_cuda, "cuda"), secs());
    };
    if (!a) return none(why);
    cu::Result r = a->init(0);
    if (r == cu::kNoDevice) return none("the driver sees no GPU");
    if (r != cu::kSuccess) return to_outcome("cuda", {StageStatus::failed, "cuInit failed: " + a->err(r) + " (driver/kernel module mismatch, or a GPU fell off the bus)", {}}, secs());
    int count = 0;
    if ((r = a->device_count(&count)) != cu::kSuccess) return to_outcome("cuda", {StageStatus::failed, "cuDeviceGetCount failed: " + a->err(r), {}}, secs());
    if (count == 0) return none("CUDA sees no GPU");
    std::vector<gpu::GpuResult> gpus(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        gpus[i].index = i;
        check_gpu(*a, i, o, gpus[i]);
    }
    auto v = gpu::judge_cuda(gpus, expected, static_cast<unsigned>(count), o.t);
    if (per_gpu) *per_gpu = gpus;
    auto out = to_outcome("cuda", v, secs());
    out.gpus = std::move(gpus);
    return out;
}

}  // namespace gangway::sys
