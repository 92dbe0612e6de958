/* Seed for the ELF fuzz target: tools/fuzz compiles it (-g, stripped, object, -gz=zlib, with second_unit.c, and an
   objcopy --only-keep-debug companion) into .build/fuzz/seeds/elf/. */
#include <stdio.h>
static inline int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int middle(int x) { return leaf(x) + leaf(x + 1); }
int main(int argc, char **argv) { (void)argv; printf("%d\n", middle(argc)); return 0; }
