// The one deadline of the tree: a point on the steady clock, what is left of
// it, and a call waited for until it passes. Every bounded wait (a socket's
// poll, a command run, the PMIx exit barrier, a stage or a node check's part
// in a thread of its own, a name looked up) counts from here, so that "within
// N s" means the same thing everywhere.
#pragma once
#include <time.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "../../preflight/check_records.hpp"  // StageResult: a bounded part's "aborted" line

namespace gangway::sys {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// A clock's time in whole nanoseconds (CLOCK_REALTIME: the nodes' records').
inline std::int64_t clock_ns(clockid_t c) {
    struct timespec t{};
    ::clock_gettime(c, &t);
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

inline Deadline after_ms(long ms) { return Clock::now() + std::chrono::milliseconds(ms); }
inline Deadline after_s(double s) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}
int ms_left(Deadline d);          // >= 0, at most 2^30: a poll(2) timeout
double seconds_left(Deadline d);  // >= 0
double seconds_since(Clock::time_point t);

// Runs fn in a thread and waits up to `seconds` for its result: nullopt when
// it has not returned by then (a hung CUDA, NCCL or verbs call, or a resolver
// that never answers, cannot be interrupted: its thread is left behind,
// detached, owning what it uses). An exception from fn comes out of this
// call. A part of a check uses run_bounded() below, which applies the one rule
// to both.
template <class T>
std::optional<T> within(double seconds, std::function<T()> fn) {
    auto task = std::make_shared<std::packaged_task<T()>>(std::move(fn));
    auto fut = task->get_future();
    std::thread([task] { (*task)(); }).detach();
    if (fut.wait_for(std::chrono::duration<double>(seconds)) != std::future_status::ready) return std::nullopt;
    return fut.get();
}

// What a part run under a deadline gave: its value, or, without one, the
// "aborted" result that says why (the report's stage line).
template <class T>
struct Bounded {
    std::optional<T> value;
    preflight::StageResult aborted;  // when !value
    double took_s = 0;
};

// The one deadline wrapper of the stages (lib/sys/stages), of the node
// check's parts (lib/sys/health/parts.hpp) and of the post-mortem's NVML read,
// with one rule: past `seconds`, or when fn throws, the part is "aborted" (the
// node check's inconclusive), never "failed": neither a hang we cannot
// interrupt nor our own internal error is evidence that the node is bad, so
// no number of them drains a node. What the hardware reports, the parts turn
// into a verdict themselves. `hung`: what a deadline probably means, after
// "did not finish within N s".
preflight::StageResult deadline_passed(const std::string& name, double seconds, double took_s, const std::string& hung);
preflight::StageResult internal_error(const std::string& name, const std::string& what, double took_s);
preflight::StageResult not_started(const std::string& name);  // too little of the deadline left to start

template <class T>
Bounded<T> run_bounded(const std::string& name, double seconds, std::function<T()> fn, const std::string& hung = "") {
    const auto t0 = Clock::now();
    Bounded<T> b;
    try {
        b.value = within<T>(seconds, std::move(fn));
        if (!b.value) b.aborted = deadline_passed(name, seconds, seconds_since(t0), hung);
    } catch (const std::exception& e) {
        b.aborted = internal_error(name, e.what(), seconds_since(t0));
    } catch (...) {
        b.aborted = internal_error(name, "an exception of unknown type", seconds_since(t0));
    }
    b.took_s = seconds_since(t0);
    return b;
}

}  // namespace gangway::sys
