// The NCCL loader: one library per path, kept for the life of the process.
#include "nccl_api.hpp"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

#include "dl_handle.hpp"

namespace gangway::sys::nccl {

std::string Api::err(Result r) const {
    return "NCCL error " + std::to_string(r) + (error_string ? std::string(" (") + error_string(r) + ")" : "");
}

// Libraries stay loaded for the life of the process (NCCL's threads may outlive a stage).
const Api* load(const std::string& path, std::string& err) {
    static std::mutex mu;
    static std::map<std::string, std::unique_ptr<Api>> loaded;
    std::lock_guard<std::mutex> l(mu);
    if (auto it = loaded.find(path); it != loaded.end()) return it->second.get();
    DlHandle h = dl_open(path.c_str());
    if (!h) {
        const char* e = ::dlerror();
        err = "cannot load " + path + ": " + (e ? e : "dlopen failed");
        return nullptr;
    }
    auto n = std::make_unique<Api>();
    auto get = [&](auto& f, const char* name) { return dl_sym(h.get(), f, name); };
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
    n->h = h.release();
    return (loaded[path] = std::move(n)).get();
}

}  // namespace gangway::sys::nccl
