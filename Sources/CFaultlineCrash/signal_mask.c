// Crash signals that stay deliverable: interposed sigprocmask and pthread_sigmask.
//
// A synchronous crash signal (SEGV, BUS, ILL, FPE, TRAP) that the thread has blocked kills the
// process without running any handler, so the wrappers take those five out of every set that
// would block them. SIGABRT is left alone; abort() unblocks it itself.
//
// These run in normal context and also on the crashing thread: libunwind blocks every signal
// around its own locks, calling sigprocmask from inside our handler. So this is crash-path code:
// the next definitions (libc's, or another interposer's) are looked up with dlsym at start, in
// normal context (thread_hooks.c), and the set is edited with plain bit operations rather than
// library calls.
#include "crash_internal.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

_Atomic(fl_sigmask_fn) fl_next_pthread_sigmask;
_Atomic(fl_sigmask_fn) fl_next_sigprocmask;

// While a thread walks its own stack inside a crash (fl_unwind, thread_dump.c), libunwind masks
// every signal around each frame lookup: two sigprocmask syscalls per frame, over 500 for a deep
// stack, to protect locks that a signal handler re-entering libunwind could otherwise deadlock
// on. Inside the crash handler there is no such handler left to protect against (crash signals
// stay deliverable anyway), so for that walk the calls are answered without a syscall: the mask
// reported is the one the walk began with. Initial-exec TLS: no __tls_get_addr in a handler.
static __thread __attribute__((tls_model("initial-exec"))) int fl_walking;
static __thread __attribute__((tls_model("initial-exec"))) sigset_t fl_walk_mask;

// Runs on the crashing thread; compromised context.
void fl_begin_stack_walk(void) {
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &fl_walk_mask, _NSIG / 8);
    fl_walking = 1;
}

// Runs on the crashing thread; compromised context.
void fl_end_stack_walk(void) { fl_walking = 0; }

// Runs on the crashing thread too. glibc's sigset_t is an array of unsigned longs, bit n-1 for
// signal n; sigdelset would be one more libc symbol to bind.
static void fl_remove_signal(sigset_t *set, int signo) {
    unsigned long *words = (unsigned long *)(void *)set;
    const int bits = 8 * (int)sizeof(unsigned long);
    words[(signo - 1) / bits] &= ~(1UL << ((signo - 1) % bits));
}

// Runs on the crashing thread too: the set minus the synchronous crash signals. While a crash is
// being handled it also keeps SIGALRM deliverable: libunwind blocks every signal around its own
// locks, and exactly then it may wait forever for the loader lock (the watchdog test reproduces
// this). The watchdog's timer is aimed at the handling thread alone, so leaving SIGALRM open on
// the others for that moment changes nothing — and spares a gettid per call (libunwind makes two
// per frame).
static const sigset_t *fl_without_crash_signals(int how, const sigset_t *set, sigset_t *copy) {
    if (!set || !atomic_load(&fl_state.started) || how == SIG_UNBLOCK) return set;
    *copy = *set;
    fl_remove_signal(copy, SIGSEGV);
    fl_remove_signal(copy, SIGBUS);
    fl_remove_signal(copy, SIGILL);
    fl_remove_signal(copy, SIGFPE);
    fl_remove_signal(copy, SIGTRAP);
    pid_t handling = atomic_load(&fl_state.handling_thread);
    if (handling != 0) fl_remove_signal(copy, SIGALRM);
    return copy;
}

// Before start (a library constructor that runs before Faultline's) nothing is resolved yet: do
// what glibc does, the raw syscall with glibc's two internal signals (SIGCANCEL and SIGSETXID,
// the first two real-time signals) never blocked. Returns 0 or -1 with errno.
static int fl_raw_sigmask(int how, const sigset_t *set, sigset_t *old) {
    sigset_t copy;
    if (set && how != SIG_UNBLOCK) {
        copy = *set;
        fl_remove_signal(&copy, 32);
        fl_remove_signal(&copy, 33);
        set = &copy;
    }
    return (int)syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
    if (fl_walking) {
        if (old) *old = fl_walk_mask;
        return 0;
    }
    sigset_t copy;
    set = fl_without_crash_signals(how, set, &copy);
    fl_sigmask_fn next = atomic_load(&fl_next_pthread_sigmask);
    if (next) return next(how, set, old);
    return fl_raw_sigmask(how, set, old) == 0 ? 0 : errno;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
    if (fl_walking) {
        if (old) *old = fl_walk_mask;
        return 0;
    }
    sigset_t copy;
    set = fl_without_crash_signals(how, set, &copy);
    fl_sigmask_fn next = atomic_load(&fl_next_sigprocmask);
    if (next) return next(how, set, old);
    return fl_raw_sigmask(how, set, old);
}
