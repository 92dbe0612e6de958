// A deliberately corrupted Swift async context (issue 17): the crash handler must end its walk
// of the chain with a reason and the process must still die by its own signal.
#include "async_probe.h"

#include <stdint.h>

__attribute__((noinline)) int probe_corrupt_async_context(int how) {
    // Our frame's saved rbp is the calling async function's frame pointer; its context is at -8.
    uintptr_t *frame = __builtin_frame_address(0);
    uintptr_t caller_fp = frame[0];
    uintptr_t *slot = (uintptr_t *)(caller_fp - 8);
    uintptr_t *context = (uintptr_t *)*slot;
    switch (how) {
    case 1: context[0] = (uintptr_t)0x10000; break;        // unmapped, aligned
    case 2: context[0] = (uintptr_t)context; break;        // a loop
    case 3: *slot = (uintptr_t)context + 3; break;         // misaligned
    }
    __asm__ volatile("" ::: "memory");
    *(volatile int *)(uintptr_t)16 = how;
    return how;
}
