// The signal handler: claims the crash, unwinds, writes the report, then lets the process die
// exactly as it would have without Faultline.
//
// Design (what runs where):
//   start.c (normal context)      maps the scratch block and alternate stacks, pre-warms libunwind,
//                                 generates the event id, installs SA_SIGINFO|SA_ONSTACK handlers
//                                 and keeps the previous actions.
//   fl_handle_signal (this file)  runs on the crashing thread, on its alternate stack:
//     1. claim the crash with one atomic compare-and-swap on the thread id; a second thread that
//        crashes meanwhile waits (bounded) for the first to finish and kill the process; the
//        same thread faulting again inside the handler gives up at once;
//     2. arm a watchdog timer aimed at this thread (a raw timer_create(SIGEV_THREAD_ID)): if
//        libunwind blocks on the loader lock, the watchdog writes what we have and ends the process;
//     3. unwind (unwind.c), list modules (module_scan.c), write the report (report_writer.c);
//     4. chain: restore the previous action and call it in the signal mask it expects (Swift's
//        backtracer is installed before main and must keep working), or re-raise with the default
//        action so exit status and core dump are unchanged. As PID 1 in a container, raise does not
//        kill, so we _exit(128 + signal).
//
// Rules for every function in this file and in the crash-path files it calls (signal-safety(7)):
// no malloc, no stdio, no locks, no dladdr; only syscalls and preallocated memory; errno saved
// and restored. CrashCaptureTests.testCrashPathObjectsImportOnlyAsyncSignalSafeFunctions checks what these
// objects import.
#include "crash_internal.h"
#include "safe_io.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FL_OTHER_THREAD_WAIT_MS 10000
#define FL_CHAINED_WAIT_MS 120000
#define FL_WATCHDOG_SECONDS 5

const int fl_crash_signals[FL_SIGNAL_COUNT] = {SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP};

// The crash being handled, for the watchdog (which runs nested on the same thread).
static int fl_crash_signo;
static siginfo_t fl_crash_info;
static const ucontext_t *fl_crash_context;
static volatile sig_atomic_t fl_report_done;
static volatile sig_atomic_t fl_chaining;       // the report is written; the previous handler runs
static int fl_watchdog_timer = -1;
static struct sigaction fl_alarm_previous;

// Runs on the crashing thread; compromised context.
static pid_t fl_gettid(void) { return (pid_t)syscall(SYS_gettid); }

// Runs on the crashing thread; compromised context. Bypasses our own sigprocmask wrapper
// (thread_hooks.c), which would otherwise keep crash signals unblocked.
static void fl_set_mask(int how, const sigset_t *set) { syscall(SYS_rt_sigprocmask, how, set, NULL, _NSIG / 8); }

// Runs on the crashing thread; compromised context.
static int fl_signal_index(int signo) {
    for (int i = 0; i < FL_SIGNAL_COUNT; i++)
        if (fl_crash_signals[i] == signo) return i;
    return -1;
}

// Runs on the crashing thread; compromised context. Ends the process with `signo`'s default
// action right now (used when we cannot or must not continue normally).
static void fl_die_with_default(int signo) {
    if (getpid() == 1) _exit(128 + signo);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(signo, &dfl, NULL);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, signo);
    syscall(SYS_tgkill, getpid(), fl_gettid(), signo);
    fl_set_mask(SIG_UNBLOCK, &unblock);
    _exit(128 + signo);  // only reached if the signal could not kill us
}

// Runs on the crashing thread; compromised context. Fires if the handler has not finished after
// FL_WATCHDOG_SECONDS: typically libunwind waiting for a loader lock another thread holds.
static void fl_watchdog_fired(int unused_signo, siginfo_t *info, void *unused_context) {
    (void)unused_signo;
    (void)unused_context;
    // Only our own timer counts: an alarm() of the app's landing on this thread is not a hang.
    if (info->si_code != SI_TIMER || info->si_timerid != fl_watchdog_timer) return;
    if (!fl_report_done) {
        FL_LOG("crash handler timed out; writing the frames unwound so far");
        // libunwind is stuck somewhere inside its own locks: never call it again; walk frame pointers.
        fl_unwind_frame_pointers(fl_crash_context, &fl_state.scratch->frames);
        fl_state.scratch->frames.stopped_by = "watchdog";
        fl_scan_modules(fl_state.scratch);
        fl_write_report(fl_crash_signo, &fl_crash_info, fl_crash_context, fl_gettid());
    }
    fl_die_with_default(fl_crash_signo);
}

// Runs on the crashing thread; compromised context. Returns the timer id or -1.
static long fl_arm_watchdog(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fl_watchdog_fired;
    sa.sa_flags = SA_ONSTACK | SA_SIGINFO;
    sigaction(SIGALRM, &sa, &fl_alarm_previous);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGALRM;
    ev._sigev_un._tid = fl_gettid();
    int timer = -1;
    if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &timer) != 0) {
        sigaction(SIGALRM, &fl_alarm_previous, NULL);
        return -1;
    }
    fl_watchdog_timer = timer;
    struct itimerspec when;
    memset(&when, 0, sizeof when);
    when.it_value.tv_sec = FL_WATCHDOG_SECONDS;
    syscall(SYS_timer_settime, timer, 0, &when, NULL);
    sigset_t alarm_set;
    sigemptyset(&alarm_set);
    sigaddset(&alarm_set, SIGALRM);
    fl_set_mask(SIG_UNBLOCK, &alarm_set);
    return timer;
}

// Runs on the crashing thread; compromised context.
static void fl_disarm_watchdog(long timer) {
    if (timer < 0) return;
    syscall(SYS_timer_delete, (int)timer);
    sigaction(SIGALRM, &fl_alarm_previous, NULL);  // the app's SIGALRM handling is its own again
}

// Runs on the crashing thread; compromised context. The previous handler dealt with the signal
// and the process goes on (a JIT's guard page, a GC write barrier, libsigsegv): it was no crash.
// The report is withdrawn and our handler put back for the crashes still to come.
static void fl_withdraw_report(int signo) {
    fl_unlink_last_report();
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = fl_handle_signal;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&ours.sa_mask);
    sigaction(signo, &ours, NULL);
    fl_report_done = 0;
    fl_chaining = 0;
    atomic_store(&fl_state.handling_thread, 0);
}

// Runs on the crashing thread; compromised context.
static int fl_same_handler(const struct sigaction *a, const struct sigaction *b) {
    if (a->sa_flags & SA_SIGINFO) return (b->sa_flags & SA_SIGINFO) && a->sa_sigaction == b->sa_sigaction;
    return !(b->sa_flags & SA_SIGINFO) && a->sa_handler == b->sa_handler;
}

// Runs on the crashing thread; compromised context. Hands the signal to whoever had it before us.
static void fl_chain(int signo, siginfo_t *info, void *uc) {
    int index = fl_signal_index(signo);
    struct sigaction previous = fl_state.previous[index];
    struct sigaction installed = previous;
    if (previous.sa_flags & SA_RESETHAND) {
        // The kernel would have reset the action on delivery; we call the handler ourselves.
        memset(&installed, 0, sizeof installed);
        installed.sa_handler = SIG_DFL;
    }
    sigaction(signo, &installed, NULL);

    if (previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) {
        if (getpid() == 1) _exit(128 + signo);
        // A fault re-executes its instruction on return and dies by the default action with a
        // correct core dump. A signal sent by kill/raise/abort does not recur: send it again; it
        // stays pending until we return and the kernel restores the interrupted mask.
        if (info->si_code <= 0 || signo == SIGABRT || signo == SIGTRAP)
            syscall(SYS_tgkill, getpid(), fl_gettid(), signo);
        return;
    }

    // The previous handler expects its own sa_mask, and its signal blocked unless SA_NODEFER;
    // calling it with the signal still blocked breaks Swift's backtracer (FIELD-NOTES.md).
    sigset_t mask = previous.sa_mask;
    if (!(previous.sa_flags & SA_NODEFER)) sigaddset(&mask, signo);
    fl_set_mask(SIG_SETMASK, &mask);
    if (previous.sa_flags & SA_SIGINFO) previous.sa_sigaction(signo, info, uc);
    else previous.sa_handler(signo);
    if (getpid() == 1) _exit(128 + signo);
    // Still its own handler installed after it returned (not reset to default, nor re-raised):
    // it handled the signal, and the interrupted code resumes.
    struct sigaction now;
    if (!(previous.sa_flags & SA_RESETHAND) && sigaction(signo, NULL, &now) == 0 && fl_same_handler(&previous, &now))
        fl_withdraw_report(signo);
}

// Runs on the crashing thread; compromised context.
void fl_handle_signal(int signo, siginfo_t *info, void *context) {
    int saved_errno = errno;
    pid_t tid = fl_gettid();
    pid_t expected = 0;
    if (!atomic_compare_exchange_strong(&fl_state.handling_thread, &expected, tid)) {
        if (expected == tid) {
            FL_LOG("crashed inside the crash handler; giving up on the report");
            fl_die_with_default(signo);
        }
        // Another thread owns the crash and will end the process; wait for it, but not forever.
        // Once its report is written and it chains (Swift's backtracer may take tens of seconds
        // to symbolicate), the limit grows so we do not cut that short with our own signal.
        struct timespec pause = {0, 10 * 1000 * 1000};
        for (int waited = 0; waited < (fl_chaining ? FL_CHAINED_WAIT_MS : FL_OTHER_THREAD_WAIT_MS); waited += 10)
            nanosleep(&pause, NULL);
        fl_die_with_default(signo);
    }

    fl_crash_signo = signo;
    fl_crash_info = *info;
    fl_crash_context = (const ucontext_t *)context;
    long watchdog = fl_arm_watchdog();
    fl_unwind((const ucontext_t *)context, &fl_state.scratch->frames);
    fl_scan_modules(fl_state.scratch);
    fl_write_report(signo, info, (const ucontext_t *)context, tid);
    fl_report_done = 1;
    fl_disarm_watchdog(watchdog);

    fl_chaining = 1;
    fl_chain(signo, info, context);
    errno = saved_errno;
}
