// The one median (and median absolute deviation) of the project: the job
// check's ring rates and expected rate, the GPU stage's outliers, the fleet's
// trends, tables and plots, the post-mortem's paces and sample gaps.
// Two readings of "the middle", each named for what it gives:
//  - median: a figure's (a rate, a time as a double): the mean of the two
//    middle values for an even count;
//  - lower_median: one of the values themselves (a count, a gap in ns, a
//    rate that must be a measured link's): the smaller middle value for an
//    even count, so that half the values or more are at or above it.
#pragma once
#include <algorithm>
#include <cmath>
#include <iterator>
#include <vector>

namespace gangway {

// The median of [b, e), which it reorders (no copy, for callers that take
// many). 0 for an empty range.
template <class It>
double median_in_place(It b, It e) {
    if (b == e) return 0;
    const auto n = std::distance(b, e);
    const It m = b + n / 2;
    std::nth_element(b, m, e);
    if (n % 2) return static_cast<double>(*m);
    return (static_cast<double>(*std::max_element(b, m)) + static_cast<double>(*m)) / 2;
}

inline double median(std::vector<double> v) { return median_in_place(v.begin(), v.end()); }

// The lower median of [b, e), which it reorders: the value at (n - 1) / 2 of
// the sorted range. `b` must not equal `e`.
template <class It>
auto lower_median_in_place(It b, It e) {
    const It m = b + (std::distance(b, e) - 1) / 2;
    std::nth_element(b, m, e);
    return *m;
}

template <class T>
T lower_median(std::vector<T> v) {
    return lower_median_in_place(v.begin(), v.end());
}

// The median absolute deviation from the median.
inline double mad(const std::vector<double>& v) {
    const double m = median(v);
    std::vector<double> d;
    d.reserve(v.size());
    for (double x : v) d.push_back(std::fabs(x - m));
    return median(std::move(d));
}

}  // namespace gangway
