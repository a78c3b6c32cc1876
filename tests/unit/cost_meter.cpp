// The unit tests' global operator new and delete, counting what is held: each
// block carries its size in a 16-byte header (16 keeps malloc's alignment for
// any type without an extended one; aligned new is left as the library has it,
// and uncounted). Replacing them is the standard's own hook, and it works under
// AddressSanitizer too, which then sees the mallocs underneath.
#include "cost_meter.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

std::atomic<std::size_t> g_in_use{0}, g_peak{0};
constexpr std::size_t kHeader = 16;

void* counted_alloc(std::size_t n) noexcept {
    if (n > SIZE_MAX - kHeader) return nullptr;  // n + kHeader would wrap
    void* raw = std::malloc(n + kHeader);
    if (!raw) return nullptr;
    *static_cast<std::size_t*>(raw) = n;
    const std::size_t now = g_in_use.fetch_add(n, std::memory_order_relaxed) + n;
    std::size_t peak = g_peak.load(std::memory_order_relaxed);
    while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    return static_cast<char*>(raw) + kHeader;
}

void counted_free(void* p) noexcept {
    if (!p) return;
    void* raw = static_cast<char*>(p) - kHeader;
    g_in_use.fetch_sub(*static_cast<std::size_t*>(raw), std::memory_order_relaxed);
    std::free(raw);
}

void* counted_new(std::size_t n) {
    void* p = counted_alloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    return p;
}

}  // namespace

namespace gangway::test {

std::size_t heap_in_use() { return g_in_use.load(std::memory_order_relaxed); }
void reset_peak() { g_peak.store(g_in_use.load(std::memory_order_relaxed), std::memory_order_relaxed); }
std::size_t heap_peak() { return g_peak.load(std::memory_order_relaxed); }

}  // namespace gangway::test

void* operator new(std::size_t n) { return counted_new(n); }
void* operator new[](std::size_t n) { return counted_new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n ? n : 1); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n ? n : 1); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }
