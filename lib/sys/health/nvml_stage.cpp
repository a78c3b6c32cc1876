#include "nvml_stage.hpp"

#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "../../base/pci_bus_id.hpp"
#include "../node/process_env.hpp"
#include "../stages/dl_handle.hpp"

namespace gangway::sys {
namespace {

// NVML's ABI, the few parts used: declared here, so that no NVML header is
// needed to build. Layouts as nvml.h has them since NVML 11 (the _v2/_v3 names).
using Ret = int;
using Device = void*;
constexpr Ret kSuccess = 0, kNotSupported = 3, kInsufficientSize = 7;
struct PciInfo {  // nvmlPciInfo_t, filled by nvmlDeviceGetPciInfo_v3
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];  // "00000000:17:00.0": an 8-digit domain, upper case
};
constexpr int kUncorrected = 1, kVolatile = 0;             // nvmlMemoryErrorType_t, nvmlEccCounterType_t
constexpr int kCauseMultipleSbe = 0, kCauseDbe = 1;        // nvmlPageRetirementCause_t

struct Nvml {
    Ret (*init)();
    Ret (*shutdown)();
    const char* (*error_string)(Ret);
    Ret (*count)(unsigned*);
    Ret (*handle)(unsigned, Device*);
    Ret (*name)(Device, char*, unsigned);
    Ret (*pci)(Device, PciInfo*);
    // Optional: a driver that lacks one just leaves that figure out.
    Ret (*pages_pending)(Device, int*) = nullptr;
    Ret (*pages)(Device, int, unsigned*, unsigned long long*) = nullptr;
    Ret (*rows)(Device, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
    Ret (*ecc)(Device, int, int, unsigned long long*) = nullptr;
    Ret (*processes)(Device, unsigned*, void*) = nullptr;  // asked with a count of 0: no buffer is written
    Ret (*nvlink_state)(Device, unsigned, int*) = nullptr;  // nvmlEnableState_t: 1 up
};
// NVML_NVLINK_MAX_LINKS since NVML 12 (H100, B200: 18 links a GPU); a link
// number past the GPU's own gets NVML_ERROR_INVALID_ARGUMENT.
constexpr unsigned kMaxNvLinks = 18;

const Nvml* nvml(std::string& why) {
    static std::once_flag once;
    static Nvml v{};
    static bool ok = false;
    static std::string failure;
    std::call_once(once, [] {
        const std::string path = env_or("GANGWAY_NVML_LIB", "libnvidia-ml.so.1");
        DlHandle lib = dl_open(path.c_str());
        void* h = lib.get();
        if (!h) {
            const char* e = ::dlerror();
            failure = "NVML not found (" + path + "): " + (e ? e : "no such library");
            return;
        }
        auto get = [&](auto& f, const char* name) { return dl_sym(h, f, name); };
        ok = get(v.init, "nvmlInit_v2") && get(v.shutdown, "nvmlShutdown") && get(v.error_string, "nvmlErrorString") &&
             get(v.count, "nvmlDeviceGetCount_v2") && get(v.handle, "nvmlDeviceGetHandleByIndex_v2") &&
             get(v.name, "nvmlDeviceGetName") && get(v.pci, "nvmlDeviceGetPciInfo_v3");
        get(v.pages_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
        get(v.pages, "nvmlDeviceGetRetiredPages");
        get(v.rows, "nvmlDeviceGetRemappedRows");
        get(v.ecc, "nvmlDeviceGetTotalEccErrors");
        get(v.processes, "nvmlDeviceGetComputeRunningProcesses");
        get(v.nvlink_state, "nvmlDeviceGetNvLinkState");
        if (ok) lib.release();  // for the life of the process: a call left behind by a deadline may still use it
        else failure = path + " lacks nvmlInit_v2 or another call gangway needs (a driver older than NVML 11)";
    });
    if (!ok) why = failure;
    return ok ? &v : nullptr;
}

void read_gpu(const Nvml& n, unsigned i, health::NvmlGpu& g) {
    Device d{};
    auto fail = [&](const char* what, Ret r) {
        g.error = r;
        g.error_text = std::string(what) + ": " + n.error_string(r);
    };
    if (Ret r = n.handle(i, &d); r != kSuccess) return fail("NVML cannot open it", r);
    PciInfo pci{};
    if (Ret r = n.pci(d, &pci); r != kSuccess) return fail("NVML cannot read its bus id", r);
    g.bus_id = sysfs_bus_id(pci.busId);  // "00000000:17:00.0" -> "0000:17:00.0"
    char name[96] = {};
    if (n.name(d, name, sizeof name - 1) == kSuccess) g.name = name;
    if (n.pages_pending) {
        int pending = 0;
        if (n.pages_pending(d, &pending) == kSuccess) g.pages_pending = pending != 0;
    }
    if (n.pages) {
        unsigned total = 0;
        bool any = false;
        for (int cause : {kCauseMultipleSbe, kCauseDbe}) {
            unsigned count = 0;  // 0 with no buffer: NVML says how many there are
            const Ret r = n.pages(d, cause, &count, nullptr);
            if (r == kSuccess || r == kInsufficientSize) {
                total += count;
                any = true;
            }
        }
        if (any) g.pages_retired = total;
    }
    if (n.rows) {
        unsigned corr = 0, unc = 0, pending = 0, failed = 0;
        if (n.rows(d, &corr, &unc, &pending, &failed) == kSuccess) {
            g.rows_pending = pending != 0;
            g.rows_failed = failed != 0;
        }
    }
    if (n.processes) {
        // With room for none, NVML says "insufficient size" when there is at least one.
        unsigned count = 0;
        const Ret r = n.processes(d, &count, nullptr);
        g.busy = r == kInsufficientSize || (r == kSuccess && count > 0);
    }
    if (n.nvlink_state) {
        // A GPU without NVLink answers NOT_SUPPORTED for every link: no figure.
        unsigned known = 0, up = 0;
        for (unsigned link = 0; link < kMaxNvLinks; ++link) {
            int active = 0;
            if (n.nvlink_state(d, link, &active) != kSuccess) continue;
            ++known;
            up += active == 1;
        }
        if (known) {
            g.nvlinks = known;
            g.nvlinks_up = up;
        }
    }
    if (n.ecc) {
        unsigned long long count = 0;
        const Ret r = n.ecc(d, kUncorrected, kVolatile, &count);
        if (r == kSuccess) g.ecc_uncorrected = count;
        (void)kNotSupported;  // a GPU without ECC: no figure
    }
}

}  // namespace

health::NvmlFacts read_nvml() {
    health::NvmlFacts f;
    const Nvml* n = nvml(f.why);
    if (!n) return f;
    f.loaded = true;
    if (Ret r = n->init(); r != kSuccess) {
        f.init_error = r;
        f.why = std::string("nvmlInit failed: ") + n->error_string(r);
        return f;
    }
    unsigned count = 0;
    if (Ret r = n->count(&count); r != kSuccess) {
        f.init_error = r;
        f.why = std::string("nvmlDeviceGetCount failed: ") + n->error_string(r);
        n->shutdown();
        return f;
    }
    f.gpus.resize(count);
    for (unsigned i = 0; i < count; ++i) read_gpu(*n, i, f.gpus[i]);
    n->shutdown();
    return f;
}

}  // namespace gangway::sys
