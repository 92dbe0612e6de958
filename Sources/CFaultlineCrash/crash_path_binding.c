// Start path (normal context): makes sure the dynamic linker never runs inside the handler.
//
// With lazy binding (the default for executables), the first call of a library function goes
// through the loader to resolve it, which takes the loader's lock and may allocate: exactly what
// a crash handler must not do (Breakpad: "you may not enter the dynamic linker"). So at start we
// call, once and harmlessly, every function the crash-path objects import, and walk a few frames
// with libunwind so its own lazy initialisation and imports are done too. The preload library is
// linked with -z now besides (tools/build-preload).
//
// The list below must cover what `nm -u` reports for the crash-path objects;
// CrashCaptureTests.testCrashPathObjectsImportOnlyAsyncSignalSafeFunctions keeps the two lists
// honest, and testNoSymbolIsBoundAfterTheFault proves it under LD_DEBUG=bindings.
#include "crash_internal.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdint.h>
#include <fcntl.h>
#include <libunwind.h>
#include <signal.h>
#include <stdio.h>  // rename
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

// Volatile, so the compiler cannot turn a call into inline code or fold it away: each call must
// really go through the procedure linkage table, as the crash path's calls do.
static volatile size_t fl_one = 1;
static volatile long fl_sink;  // results are kept, or pure calls (memcmp, strlen) would be dropped
static char fl_scratch_a[8] = "a", fl_scratch_b[8] = "b";

static volatile uintptr_t fl_frame_sink;

// Normal context (start): short unwinds so libunwind's lazy initialisation (which takes a mutex
// and may allocate) and its own first calls never happen inside a signal handler. It uses the
// entry points the handler uses (unw_init_local2, not unw_init_local), starts the way the handler
// does (from a signal frame, and from a plain frame after a call through a null pointer), and
// starts in a function with a frame pointer: a frame whose CFA is computed from rbp takes
// libunwind through code paths (and lazily bound calls) that rsp-based frames do not.
__attribute__((noinline)) static void fl_prewarm_from_frame_with_frame_pointer(void) {
    fl_frame_sink = (uintptr_t)__builtin_frame_address(0);  // forces this function to keep rbp
    ucontext_t context;
    // (The same getcontext the handler calls when another handler called it without a context:
    // bound here, as every import of the crash path is.)
    if (getcontext(&context) != 0) return;
    static const int flags[] = {UNW_INIT_SIGNAL_FRAME, 0};
    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
        unw_cursor_t cursor;
        if (unw_init_local2(&cursor, (unw_context_t *)&context, flags[f]) < 0) continue;
        // A few steps initialise every lazy part (tdep_init, the memory pool, the FDE lookup
        // path); walking the whole start-up stack would only cost time.
        for (int i = 0; i < 4; i++) {
            unw_word_t ip;
            unw_get_reg(&cursor, UNW_REG_IP, &ip);
            unw_proc_info_t info;  // async_unwind.c asks each frame's function start
            unw_get_proc_info(&cursor, &info);
            fl_sink = unw_is_signal_frame(&cursor);
            if (unw_step(&cursor) <= 0) break;
        }
    }
}

void fl_prewarm_unwinder(void) {
    // Per-thread caches: libunwind's global cache takes a lock around every step, and each lock
    // is two sigprocmask calls with every signal blocked — over 500 syscalls for a 256-frame
    // walk. A thread's own cache needs no lock (and the crashing thread is the only one walking).
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    fl_prewarm_from_frame_with_frame_pointer();
}

// Normal context (start).
void fl_bind_crash_path_symbols(void) {
    int saved_errno = errno;  // __errno_location
    // An invalid duration (EINVAL at once): even a zero sleep yields the CPU, which on a busy
    // machine cost start a whole time slice (about a millisecond).
    struct timespec now, invalid = {0, -1};
    clock_gettime(CLOCK_MONOTONIC, &now);
    nanosleep(&invalid, NULL);
    (void)getpid();
    (void)syscall(SYS_gettid);

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGSEGV);
    struct sigaction current;
    sigaction(SIGSEGV, NULL, &current);

    // File calls that fail at once on purpose: an empty path, a closed descriptor.
    (void)close(-1);
    (void)open("", O_RDONLY | O_CLOEXEC);
    (void)read(-1, fl_scratch_a, fl_one);
    (void)write(-1, fl_scratch_a, fl_one);
    (void)rename("", "");
    (void)unlink("");
    (void)mkdir("", 0700);
    struct stat status;
    (void)fstat(-1, &status);

    memcpy(fl_scratch_a, fl_scratch_b, fl_one);
    memmove(fl_scratch_a, fl_scratch_b, fl_one);
    memset(fl_scratch_a, 'a', fl_one);
    fl_sink = memcmp(fl_scratch_a, fl_scratch_b, fl_one);
    fl_sink = strncmp(fl_scratch_a, fl_scratch_b, fl_one);
    fl_sink = (long)strlen(fl_scratch_a);
    errno = saved_errno;
}
