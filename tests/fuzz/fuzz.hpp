// What every fuzz target shares. A parser of outside input may refuse it only
// with gangway::Error (the one error type of pure code): any other exception,
// a crash, a sanitizer report, a hang or an input past its heap budget is a
// finding. libFuzzer, ASan and UBSan watch for the first ones; an exception
// other than Error escapes LLVMFuzzerTestOneInput and aborts the run with its
// type in the log; HeapBudget below watches the heap.
#pragma once

#include <sanitizer/allocator_interface.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/base/error.hpp"

namespace gangway::fuzz {

// The heap the process holds, counted by the sanitizer's malloc and free
// hooks: what the program asked for, exactly, whatever the allocator keeps
// around it (ASan keeps freed memory cached and quarantined, so the process's
// resident size drifts up with the inputs' size and says little of one
// input's cost: -rss_limit_mb stays a backstop).
namespace heap {
inline std::atomic<long long> held{0}, peak{0};
inline void on_malloc(const volatile void*, std::size_t n) {
    const long long now = held.fetch_add(static_cast<long long>(n), std::memory_order_relaxed) + static_cast<long long>(n);
    long long p = peak.load(std::memory_order_relaxed);
    while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
    }
}
inline void on_free(const volatile void* ptr) {
    held.fetch_sub(static_cast<long long>(__sanitizer_get_allocated_size(ptr)), std::memory_order_relaxed);
}
inline const int hooks = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}  // namespace heap

// The most heap one input may hold at once, beyond what was held before it:
// `per_byte` bytes for each byte of input and `fixed`, the target's parsers'
// bounds (SECURITY.md, "What a parser may spend") with the target's own
// copies. Past it, the run stops with the figures, and libFuzzer keeps the
// input as it does a crash's. A target makes one first thing.
class HeapBudget {
public:
    HeapBudget(std::size_t input, std::size_t per_byte, std::size_t fixed)
        : input_(input), limit_(per_byte * input + fixed), start_(heap::held.load(std::memory_order_relaxed)) {
        heap::peak.store(start_, std::memory_order_relaxed);
    }
    HeapBudget(const HeapBudget&) = delete;
    HeapBudget& operator=(const HeapBudget&) = delete;
    ~HeapBudget() {
        const long long used = heap::peak.load(std::memory_order_relaxed) - start_;
        if (heap::hooks && used > static_cast<long long>(limit_)) {
            std::fprintf(stderr, "==gangway-fuzz== ERROR: heap budget: %lld bytes held at once for an input of %zu bytes, "
                                 "more than its bound of %zu\n", used, input_, limit_);
            std::abort();
        }
        // What a large input freed goes back to the system, so that the
        // process's size follows what is held (see heap above).
        if (used > (4 << 20)) __sanitizer_purge_allocator();
    }

private:
    std::size_t input_, limit_;
    long long start_;
};

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// Runs f; gangway::Error is a refusal, the expected answer to bad input.
template <class F>
void refusable(F&& f) {
    try {
        std::forward<F>(f)();
    } catch (const Error&) {
    }
}

// The input cut at its first '\n' into two fields (the second empty when there is none).
inline std::pair<std::string_view, std::string_view> two_fields(std::string_view in) {
    const auto nl = in.find('\n');
    if (nl == std::string_view::npos) return {in, {}};
    return {in.substr(0, nl), in.substr(nl + 1)};
}

}  // namespace gangway::fuzz
