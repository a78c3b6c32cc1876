/* TEST DOUBLE support, shared by the doubles and their self-tests: the
 * monotonic clock in seconds, and a sleep that survives signals. Static
 * inline functions in a header, since each double is its own .so. */
#ifndef GANGWAY_FAKE_TIME_H
#define GANGWAY_FAKE_TIME_H

#include <time.h>

static inline double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Sleeps `s` seconds (nothing when s <= 0), resuming after interruptions. */
static inline void sleep_s(double s) {
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

#endif
