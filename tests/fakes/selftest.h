/* The self-tests' one assertion: on failure, says where and what, counts it
 * in `failures` and carries on, so one run lists every broken behaviour. */
#ifndef GANGWAY_FAKE_SELFTEST_H
#define GANGWAY_FAKE_SELFTEST_H

#include <stdio.h>

static int failures;
#define CHECK(cond, ...)                                          \
    do {                                                          \
        if (!(cond)) {                                            \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);       \
            fprintf(stderr, __VA_ARGS__);                         \
            fputc('\n', stderr);                                  \
            ++failures;                                           \
        }                                                         \
    } while (0)

#endif
