// Fixture: a deep chain of always-inlined static functions under one out-of-line function.
// Each `LINE:` comment names a line the tests expect; the asm labels mark exact addresses
// (recorded by tools/build-symbolication-fixtures, then stripped from the binary).
#include <stdlib.h>

volatile int sink;

static inline __attribute__((always_inline)) void level4(int x) {
    __asm__ volatile("fl_marker_c_level4: nop"); // LINE:c_level4
    sink = x * 4;
}

static inline __attribute__((always_inline)) void level3(int x) {
    sink = x + 3;
    level4(x + 1); // LINE:c_call_level4
}

static inline __attribute__((always_inline)) void level2(int x) {
    sink = x + 2;
    level3(x * 2); // LINE:c_call_level3
}

static inline __attribute__((always_inline)) void level1(int x) {
    level2(x - 1); // LINE:c_call_level2
    sink = x;
}

__attribute__((noinline)) int entry_c(int x) {
    sink = 7;
    level1(x); // LINE:c_call_level1
    __asm__ volatile("fl_marker_c_outer: nop"); // LINE:c_outer
    return sink;
}

int main(int argc, char **argv) {
    (void)argv;
    return entry_c(argc) == 12345 ? 1 : 0;
}
