// A double as an integer without undefined behaviour. C++ leaves converting
// a double outside the integer type's range (or NaN) undefined, and the
// doubles here come from other nodes' messages, sysfs and measurements.
#pragma once
#include <cmath>
#include <limits>

namespace gangway {

// x truncated toward zero; beyond the type's range, its nearest end; NaN
// gives `if_nan`.
template <class I>
I saturate(double x, I if_nan = 0) {
    if (std::isnan(x)) return if_nan;
    // The largest integers are not exact doubles: compare with 2^digits, which is.
    const double top = std::ldexp(1.0, std::numeric_limits<I>::digits);
    if (x >= top) return std::numeric_limits<I>::max();
    if (x <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
    return static_cast<I>(x);
}

}  // namespace gangway
