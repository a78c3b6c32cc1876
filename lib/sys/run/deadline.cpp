#include "deadline.hpp"

#include <algorithm>
#include <cstdio>

namespace gangway::sys {
using preflight::StageStatus;

int ms_left(Deadline d) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(d - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

double seconds_left(Deadline d) { return std::max(0.0, std::chrono::duration<double>(d - Clock::now()).count()); }

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

preflight::StageResult deadline_passed(const std::string& name, double seconds, double took_s, const std::string& hung) {
    char b[64];
    std::snprintf(b, sizeof b, "did not finish within %.1f s", seconds);
    return {name, StageStatus::aborted, b + hung, took_s};
}

preflight::StageResult internal_error(const std::string& name, const std::string& what, double took_s) {
    // An exception that escaped a part is gangway's own fault: aborted, as a deadline is.
    return {name, StageStatus::aborted, "internal error: " + what, took_s};
}

preflight::StageResult not_started(const std::string& name) {
    return {name, StageStatus::aborted, "not started: the run's deadline had passed", 0};
}

}  // namespace gangway::sys
