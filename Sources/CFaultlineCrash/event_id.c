// The event id of the next crash report (a version-4 UUID in 32 hex digits), made at start, in a
// forked child, and by a vfork child that crashes (handler.c): so on the crash path too.
#include "crash_internal.h"

#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// Normal context and the crash path: the raw syscall rather than glibc's getrandom wrapper.
void fl_generate_event_id(char out[33]) {
    uint8_t bytes[16];
    ssize_t got = syscall(SYS_getrandom, bytes, sizeof bytes, GRND_NONBLOCK);
    if (got != (ssize_t)sizeof bytes) {
        // No entropy yet (early boot): mix time and pid; uniqueness matters, secrecy does not.
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        uint64_t a = (uint64_t)t.tv_nsec * 6364136223846793005ULL + (uint64_t)getpid();
        uint64_t b = (uint64_t)t.tv_sec ^ (a << 17) ^ (uint64_t)(uintptr_t)&t;
        memcpy(bytes, &a, 8);
        memcpy(bytes + 8, &b, 8);
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;  // a version-4 UUID, as Sentry expects
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hex[bytes[i] >> 4];
        out[2 * i + 1] = hex[bytes[i] & 15];
    }
    out[32] = 0;
}
