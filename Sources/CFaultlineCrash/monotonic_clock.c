// Crash path and start path: the one monotonic clock every bounded wait and every timing in the
// core reads (clock_gettime is async-signal-safe, and bound at start like every import).
#include "crash_internal.h"

#include <time.h>

// Runs anywhere, also in a signal handler.
uint64_t fl_monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

// Runs anywhere, also in a signal handler.
int64_t fl_monotonic_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}
