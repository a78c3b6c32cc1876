// A library opened with dlopen, closed again unless release()d: the stages
// load CUDA, NCCL and libibverbs at run time and keep a library that proved
// usable for the life of the process (its threads may outlive a stage), but
// not one that lacks a symbol they need. Internal to lib/sys/stages.
#pragma once
#include <dlfcn.h>

#include <memory>

namespace gangway::sys {

struct DlClose {
    void operator()(void* h) const { ::dlclose(h); }
};
using DlHandle = std::unique_ptr<void, DlClose>;

inline DlHandle dl_open(const char* path) { return DlHandle(::dlopen(path, RTLD_NOW | RTLD_LOCAL)); }

// Sets the function pointer `f` to the library's symbol `name`; false when it lacks it.
template <class F>
bool dl_sym(void* lib, F& f, const char* name) {
    f = reinterpret_cast<F>(::dlsym(lib, name));
    return f != nullptr;
}

}  // namespace gangway::sys
