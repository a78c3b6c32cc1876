// What a call costs: the most heap it held at once (every operator new of the
// unit tests' binary is counted, tests/unit/cost_meter.cpp) and its CPU time.
// For the parsers' budgets (SECURITY.md, "What a parser may spend"): a bound
// on bytes is exact and never flakes; time is asserted only against bounds
// far above what the code takes (microseconds to milliseconds) and far below
// what the unbounded code took (seconds to hours).
#pragma once
#include <cstddef>
#include <ctime>
#include <string>
#include <utility>

#include "../../lib/base/error.hpp"

namespace gangway::test {

struct Cost {
    std::size_t peak_bytes = 0;  // the most bytes held at once beyond what was held before
    double cpu_seconds = 0;      // this process's CPU time (the tests run one thread at a time)
    bool refused = false;        // the call threw gangway::Error
    std::string error;           // its message
};

// Bytes the counting operator new has handed out and not had back, and the
// most of them at once since reset_peak().
std::size_t heap_in_use();
void reset_peak();
std::size_t heap_peak();

inline double cpu_now() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

// Runs f; gangway::Error is a refusal (recorded, not rethrown). What f
// returns is destroyed inside the measurement, so its size counts.
template <class F>
Cost cost_of(F&& f) {
    Cost c;
    const std::size_t before = heap_in_use();
    reset_peak();
    const double t0 = cpu_now();
    try {
        std::forward<F>(f)();
    } catch (const Error& e) {
        c.refused = true;
        c.error = e.what();
    }
    c.cpu_seconds = cpu_now() - t0;
    const std::size_t peak = heap_peak();
    c.peak_bytes = peak > before ? peak - before : 0;
    return c;
}

// Sanitizers make code several times slower: time bounds stretch with them.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr double kSlowdown = 5;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr double kSlowdown = 5;
#else
inline constexpr double kSlowdown = 1;
#endif
#else
inline constexpr double kSlowdown = 1;
#endif

}  // namespace gangway::test
