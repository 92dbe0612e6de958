/* Program B of the supplementary-file (dwz) fixture: shares shared_inline.h with dwz_a.c. */
#include <stdio.h>
#include "shared_inline.h"

volatile int fl_sink;

__attribute__((noinline)) int entry_b(int x) { return fl_shared_mul(x, 5) - 1; }

int main(int argc, char **argv) {
  (void)argv;
  printf("%d\n", entry_b(argc));
  return 0;
}
