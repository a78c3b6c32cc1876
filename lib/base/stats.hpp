// The one median (and median absolute deviation) of the project: the job
// check's ring rates, the GPU stage's outliers and the launcher's summaries
// all use these.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

namespace gangway {

// 0 for an empty list; the mean of the two middle values for an even count.
inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    const auto m = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), m, v.end());
    if (v.size() % 2) return *m;
    return (*std::max_element(v.begin(), m) + *m) / 2;
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
