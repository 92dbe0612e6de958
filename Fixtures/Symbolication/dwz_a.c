/* Program A of the supplementary-file (dwz) and split-DWARF fixtures. */
#include <stdio.h>
#include "shared_inline.h"

volatile int fl_sink;

static inline __attribute__((always_inline)) int only_in_a(int x) { return fl_shared_mul(x, 3) + 1; }

__attribute__((noinline)) int entry_a(int x) { return only_in_a(x) * 2; }

int main(int argc, char **argv) {
  (void)argv;
  printf("%d\n", entry_a(argc));
  return 0;
}
