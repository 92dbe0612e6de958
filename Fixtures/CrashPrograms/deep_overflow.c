// Links the crash core, shortens its watchdog to the milliseconds given, and overflows its stack
// in a recursion built without frame pointers: the walk of the whole stack takes longer than the
// watchdog allows, and frame pointers give no chain (deep_overflow CRASH_DIR WATCHDOG_MS).
#include "faultline_crash.h"

#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int recurse(volatile int depth) {
    volatile char pad[64];
    pad[0] = (char)depth;
    return recurse(depth + 1) + pad[0];
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    faultline_crash_set_watchdog_for_testing((unsigned)atoi(argv[2]));
    char error[256];
    if (faultline_crash_start(argv[1], error, sizeof error) != 0) {
        fprintf(stderr, "start: %s\n", error);
        return 2;
    }
    faultline_crash_wait_for_preparation(10000);
    return recurse(0);
}
