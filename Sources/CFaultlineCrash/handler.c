// The signal handler: claims the crash, unwinds, writes the report, then lets the process die
// exactly as it would have without Faultline.
//
// Design (what runs where):
//   start.c (normal context)      maps the scratch block and alternate stacks, pre-warms libunwind,
//                                 binds every symbol the crash path calls (crash_path_binding.c),
//                                 generates the event id, installs SA_SIGINFO|SA_ONSTACK handlers
//                                 and keeps the previous actions.
//   fl_handle_signal (this file)  runs on the crashing thread, on its alternate stack (or, when
//                                 that is not one of ours or too small, on a fresh stack it maps
//                                 first: handler_stack.c):
//     1. claim the crash with one atomic compare-and-swap on the thread id. Another thread that
//        faults meanwhile waits for the claim to end: either the process dies (the usual case), or
//        the holder's fault turns out to be recovered and the claim is released, and the waiter
//        takes its own turn. A claim whose thread went back to normal execution without telling
//        us (it longjmp'd out of the previous handler, or survived after we expected it to die)
//        is taken over rather than waited on forever;
//     2. arm a watchdog timer aimed at this thread (a raw timer_create(SIGEV_THREAD_ID)): if
//        libunwind blocks on the loader lock, the watchdog writes what we have and ends the process;
//     3. unwind (unwind.c), list modules (module_scan.c), write the report (report_writer.c);
//     4. chain: call the previous handler in the signal mask it expects (Swift's backtracer, when
//        SWIFT_BACKTRACE asks for it: start.c) while our own handler stays installed, so a
//        fault on another thread still reaches us; or re-raise with the default action so exit
//        status and core dump are unchanged — as PID 1 in a container too, where a re-executed
//        fault kills init and a raised signal is ignored exactly as it would be without us;
//     5. if the previous handler returned and left the disposition alone, it recovered the fault
//        (a JIT guard page, a GC write barrier): the report is withdrawn and the claim released.
//
// Rules for every function in this file and in the crash-path files it calls (signal-safety(7)):
// no malloc, no stdio, no locks, no dladdr, no symbol the dynamic linker still has to bind
// (crash_path_binding.c binds them at start); only syscalls and preallocated memory; errno saved
// and restored. CrashCaptureTests.testCrashPathObjectsImportOnlyAsyncSignalSafeFunctions checks what
// these objects import; testNoSymbolIsBoundAfterTheFault checks the loader stays out.
#include "crash_internal.h"
#include "safe_io.h"
#include "log_rings_internal.h"
#include "async_unwind.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>


#define FL_REPORTING_WAIT_MS 10000  // the holder is writing its report; its watchdog ends that in 5 s
#define FL_CHAINED_WAIT_MS 120000   // the holder is inside the previous handler (Swift's backtracer
                                    // may take tens of seconds to symbolicate)
#define FL_RETURNED_GRACE_MS 1000   // the holder returned for its fault to recur and kill the process
#define FL_WATCHDOG_SECONDS 5
static _Atomic unsigned fl_watchdog_ms_for_testing;  // 0: FL_WATCHDOG_SECONDS

void faultline_crash_set_watchdog_for_testing(unsigned milliseconds) { atomic_store(&fl_watchdog_ms_for_testing, milliseconds); }

const int fl_crash_signals[FL_SIGNAL_COUNT] = {SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP};

// The crash being handled, for the watchdog (which runs nested on the same thread).
static int fl_crash_signo;
static siginfo_t fl_crash_info;
static const ucontext_t *fl_crash_context;
static volatile sig_atomic_t fl_report_done;
static int fl_watchdog_timer = -1;
static struct sigaction fl_alarm_previous;
// Where the holder's handler runs. A signal on the holder's own thread that interrupted code
// between these bounds is nested inside the handler; one that interrupted code elsewhere means
// the thread has gone back to normal execution and its claim is stale.
static uintptr_t fl_claim_stack_low, fl_claim_stack_high;

// Runs on the crashing thread; compromised context.
static pid_t fl_gettid(void) { return (pid_t)syscall(SYS_gettid); }

// Runs on the crashing thread; compromised context. Bypasses our own sigprocmask wrapper
// (signal_mask.c), which would otherwise keep crash signals unblocked.
static void fl_set_mask(int how, const sigset_t *set) { syscall(SYS_rt_sigprocmask, how, set, NULL, _NSIG / 8); }

// Runs on the crashing thread; compromised context. _exit as a raw syscall: a libc function that
// is only ever called once, at the end, could not be bound ahead of time.
static void fl_exit_process(int status) {
    for (;;) syscall(SYS_exit_group, status);
}

// Runs on the crashing thread; compromised context.
static int fl_signal_index(int signo) {
    for (int i = 0; i < FL_SIGNAL_COUNT; i++)
        if (fl_crash_signals[i] == signo) return i;
    return -1;
}

// Runs on the crashing thread; compromised context. Ends the process with `signo`'s default
// action right now (used when we cannot or must not continue normally).
static void fl_die_with_default(int signo) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(signo, &dfl, NULL);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, signo);
    syscall(SYS_tgkill, getpid(), fl_gettid(), signo);
    fl_set_mask(SIG_UNBLOCK, &unblock);
    fl_exit_process(128 + signo);  // only reached if the signal could not kill us (PID 1)
}

// Runs on the crashing thread; compromised context. Makes libunwind safe to enter, or returns why
// it is not (the walk is then by frame pointers and the report carries the reason). A crash in
// start's first moments (the pre-warm runs on a background thread, which on a loaded machine
// may not have run yet) must get the same walk as one a second later: if nobody has begun the pre-warm,
// this thread does it, under the watchdog (libunwind's first use takes its mutex and may wait for
// the loader's lock; if that never comes, the watchdog writes the frame-pointer walk). If start's
// thread is pre-warming now, wait for it, bounded: it may be stuck behind a lock this thread held.
static const char *fl_ready_unwinder(pid_t tid) {
    enum { FL_UNWINDER_WAIT_MS = 1000 };
    if (atomic_load(&fl_state.unwinder_ready)) return NULL;
    int owner = 0;
    if (atomic_compare_exchange_strong(&fl_state.unwinder_owner, &owner, (int)tid)) {
        fl_prewarm_unwinder();
        atomic_store(&fl_state.unwinder_ready, 1);
        fl_state.scratch->frames.prewarmed_by_crash = 1;  // fl_unwind keeps it; the report says so
        return NULL;
    }
    if (owner == (int)tid) return "crashed while preparing the unwinder";
    if (owner == FL_UNWINDER_ABANDONED) return "forked while the unwinder was being prepared";
    // Bounded by the clock, not by a count of naps: any signal the handler lets through (the
    // thread-dump signal) ends a nap early, and a storm of them would use up the count at once.
    const int64_t deadline = fl_monotonic_ms() + FL_UNWINDER_WAIT_MS;
    while (fl_monotonic_ms() < deadline) {
        if (atomic_load(&fl_state.unwinder_ready)) return NULL;
        struct timespec pause = {0, 1000000L};
        nanosleep(&pause, NULL);
    }
    return atomic_load(&fl_state.unwinder_ready) ? NULL : "the unwinder's preparation did not finish in time";
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
        // libunwind is never called again: stuck inside its own locks, or still walking a deep
        // stack slowly (a loaded machine). Frame pointers are walked too, and the longer walk is
        // kept: libunwind's when it got far (a deep overflow's walk is most of the report), the
        // frame pointers' when libunwind stopped after a frame or two.
        fl_frame_buffer *frames = &fl_state.scratch->frames;
        static fl_frame_buffer by_frame_pointers;  // the watchdog runs once, for the one crash reported
        fl_unwind_frame_pointers(fl_crash_context, &by_frame_pointers);
        if (!(frames->method == fl_method_libunwind && frames->total_count > by_frame_pointers.total_count)) *frames = by_frame_pointers;
        frames->stopped_by = "watchdog";
        fl_scan_modules(fl_state.scratch);
        fl_collect_threads(fl_gettid());  // bounded; threads stuck behind the same lock stay silent
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
    unsigned shortened = atomic_load(&fl_watchdog_ms_for_testing);
    if (shortened) {
        when.it_value.tv_sec = shortened / 1000;
        when.it_value.tv_nsec = (long)(shortened % 1000) * 1000000L;
    } else {
        when.it_value.tv_sec = FL_WATCHDOG_SECONDS;
    }
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

// Runs on the crashing thread; compromised context. Notes where this handler's frames live (the
// alternate stack, or the thread's own stack below the interrupted code when it has none).
static void fl_record_handler_stack(void) {
    char here;
    stack_t alternate;
    if (syscall(SYS_sigaltstack, NULL, &alternate) == 0 && (alternate.ss_flags & SS_ONSTACK)) {
        fl_claim_stack_low = (uintptr_t)alternate.ss_sp;
        fl_claim_stack_high = (uintptr_t)alternate.ss_sp + alternate.ss_size;
    } else {
        // The kernel put the signal frame (over a kilobyte with the FPU state) just above us;
        // anything nested runs below.
        fl_claim_stack_high = (uintptr_t)&here + 512;
        fl_claim_stack_low = fl_claim_stack_high - 16 * 1024 * 1024;
    }
}

// Runs on the crashing thread; compromised context.
static int fl_interrupted_inside_handler(const ucontext_t *uc) {
    uintptr_t sp = fl_context_sp(uc);
    return sp >= fl_claim_stack_low && sp < fl_claim_stack_high;
}

// Runs on the crashing thread; compromised context. The crash is real: the previous handler (if
// any) did not recover it. Every other thread's stack goes into the report, rewritten in place.
static void fl_add_all_threads(int signo, siginfo_t *info, void *uc) {
    long watchdog = fl_arm_watchdog();
    fl_report_done = 0;
    uint64_t t0 = fl_monotonic_ns();
    fl_collect_threads(fl_gettid());
    fl_state.scratch->threads_ns = fl_monotonic_ns() - t0;
    fl_write_report(signo, info, (const ucontext_t *)uc, fl_gettid());
    fl_report_done = 1;
    fl_disarm_watchdog(watchdog);
}

// Whether this crash's report already has every thread (set per crash, on the crashing thread).
static volatile sig_atomic_t fl_all_threads_added;

// Runs on the crashing thread; compromised context. The handler we chained to is ending the
// process itself — exit(), abort(), a fault of its own — instead of returning to us (a "log, then
// _exit or abort" handler is common): the report gets every thread's stack before it ends, once.
// From exit() (`process_goes_on`) the process is not dead yet: the atexit handlers registered
// before ours, C++ teardown and stdio's flush still run, so the threads parked for their stacks
// (one may hold the heap's or stdio's lock) are let go once the report is written.
static void fl_add_all_threads_before_the_chained_end(int process_goes_on) {
    if (atomic_load(&fl_state.claim_phase) != FL_CLAIM_CHAINING || fl_all_threads_added) return;
    fl_all_threads_added = 1;
    fl_add_all_threads(fl_crash_signo, &fl_crash_info, (void *)fl_crash_context);
    if (process_goes_on) fl_release_parked_threads();
}

// Runs on the crashing thread; compromised context. The fault was no crash after all (or its
// thread survived it): the report goes, and the next fault on any thread gets its own turn.
static void fl_release_claim(void) {
    fl_release_parked_threads();
    fl_stderr_tail_resume();
    fl_unlink_last_report();
    fl_report_done = 0;
    atomic_store(&fl_state.claim_phase, FL_CLAIM_NONE);
    atomic_store(&fl_state.handling_thread, 0);  // last: a waiter may claim from here on
}

// Runs on the crashing thread; compromised context.
static int fl_same_handler(const struct sigaction *a, const struct sigaction *b) {
    if (a->sa_flags & SA_SIGINFO) return (b->sa_flags & SA_SIGINFO) && a->sa_sigaction == b->sa_sigaction;
    return !(b->sa_flags & SA_SIGINFO) && a->sa_handler == b->sa_handler;
}

// Runs on the crashing thread; compromised context.
static int fl_is_ours(const struct sigaction *a) {
    return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == fl_handle_signal;
}

// Runs on the crashing thread; compromised context.
static void fl_install_ours(int signo) {
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = fl_handle_signal;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
    ours.sa_mask = *fl_crash_entry_mask();
    sigaction(signo, &ours, NULL);
}

// Runs on the crashing thread; compromised context. Calls a previous handler (not SIG_DFL or
// SIG_IGN) the way the kernel would have: in its own sa_mask, with its signal blocked unless
// SA_NODEFER. Calling it with the signal still blocked breaks Swift's backtracer (FIELD-NOTES.md).
static void fl_invoke(const struct sigaction *previous, int signo, siginfo_t *info, void *uc) {
    sigset_t mask = previous->sa_mask;
    if (!(previous->sa_flags & SA_NODEFER)) sigaddset(&mask, signo);
    fl_set_mask(SIG_SETMASK, &mask);
    if (previous->sa_flags & SA_SIGINFO) previous->sa_sigaction(signo, info, uc);
    else previous->sa_handler(signo);
}

// Runs on the crashing thread; compromised context. A signal nested inside the previous handler
// while it runs for the holder (Swift's backtracer probes memory and may fault): it goes where it
// would have gone without us.
static void fl_forward_nested(int signo, siginfo_t *info, void *uc) {
    int index = fl_signal_index(signo);
    struct sigaction previous = fl_state.previous[index];
    if (previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) {
        fl_add_all_threads_before_the_chained_end(0);
        fl_die_with_default(signo);
    }
    fl_invoke(&previous, signo, info, uc);
}

// Runs on the crashing thread; compromised context. Hands the signal to whoever had it before us.
// Our handler stays installed meanwhile, so a fault on another thread still reaches us and waits.
static void fl_chain(int signo, siginfo_t *info, void *uc) {
    int index = fl_signal_index(signo);
    struct sigaction previous = fl_state.previous[index];
    // Swift's backtracer would write a second report of the same crash to stderr and take a
    // quarter of a second doing it: it runs only when the user asked for it (start.c).
    int skip = fl_state.previous_is_swift_backtracer[index] && !fl_state.chain_to_swift_backtracer;

    if (skip || previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) {
        // As PID 1 this is still exact: the kernel kills even init with a fault that re-executes
        // under the default action, and a raised signal init ignores is ignored here too (abort()
        // then goes on to its own fallback, as it would without us).
        fl_add_all_threads(signo, info, uc);
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(signo, &dfl, NULL);
        // A fault re-executes its instruction on return and dies by the default action with a
        // correct core dump. A signal sent by kill/raise/abort does not recur: send it again; it
        // stays pending until we return and the kernel restores the interrupted mask.
        // Nor does one whose handler another handler called (no details): the caller returns to
        // its own fatal path, or to the fault, with the signal pending under the default action.
        if (info->si_code <= 0 || info->si_code == FL_SI_NO_DETAILS || signo == SIGABRT || signo == SIGTRAP)
            syscall(SYS_tgkill, getpid(), fl_gettid(), signo);
        atomic_store(&fl_state.claim_phase, FL_CLAIM_RETURNED);
        return;
    }

    if (previous.sa_flags & SA_RESETHAND) {
        // The kernel would have reset the action on delivery; we call the handler ourselves.
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(signo, &dfl, NULL);
    }
    atomic_store(&fl_state.claim_phase, FL_CLAIM_CHAINING);
    fl_invoke(&previous, signo, info, uc);

    // It returned. If it left the disposition as it was (ours, or its own put back), it dealt
    // with the fault and the interrupted code resumes: withdraw the report.
    struct sigaction now;
    if (sigaction(signo, NULL, &now) == 0 && (fl_is_ours(&now) || fl_same_handler(&previous, &now))) {
        if (!fl_is_ours(&now)) fl_install_ours(signo);
        fl_release_claim();
        return;
    }
    // It changed the disposition (typically to the default): the fault recurs when we return and
    // ends the process. Should the thread survive after all, waiters take the claim over.
    atomic_store(&fl_state.claim_phase, FL_CLAIM_REPORTING);  // writing again: exit() waits for it
    if (!fl_all_threads_added) fl_add_all_threads(signo, info, uc);
    atomic_store(&fl_state.claim_phase, FL_CLAIM_RETURNED);
}

// Runs on a signalled thread, or in normal context (breadcrumb_ring.c). The holder of the crash
// claim belongs to the process recorded with it; when no such thread exists any more (a vfork
// child that crashed in this memory and died), the claim is stale. A thread of this very process
// is never taken for gone: between another thread's claim and its recording of its process, the
// recorded process can still be a child's from before.
int fl_claim_holder_is_gone(pid_t holder) {
    pid_t owner = atomic_load(&fl_state.claim_pid);
    if (holder == 0 || owner == 0) return 0;
    if (syscall(SYS_tgkill, getpid(), holder, 0) == 0) return 0;
    return syscall(SYS_tgkill, owner, holder, 0) != 0 && errno == ESRCH;
}

// Runs in normal context, from exit() (registered at start). Another thread calling exit while a
// crash is being reported ends the process (exit_group) before the report is written, with the
// exit's status instead of the crash's signal: without us the fault had killed the process at
// once. So exit waits while another thread of this process writes its report (as long as a
// second crash would wait for it), or has just returned for its fault to end the process. Not
// while a handler we chained to runs: without us that handler would race exit just the same, and
// one that left by siglongjmp leaves the claim in that phase for good.
void fl_hold_exit_while_crashing(void) {
    pid_t self = fl_gettid();
    pid_t waited_for = 0;
    int waited_phase = -1;
    int64_t waiting_since = 0;
    for (;;) {
        pid_t holder = atomic_load(&fl_state.handling_thread);
        if (holder == self) fl_add_all_threads_before_the_chained_end(1);  // the handler we chained to calls exit
        if (holder == 0 || holder == self || fl_claim_holder_is_gone(holder)) return;
        int phase = atomic_load(&fl_state.claim_phase);
        if (phase == FL_CLAIM_CHAINING || phase == FL_CLAIM_NONE) return;
        if (holder != waited_for || phase != waited_phase) {
            waited_for = holder;
            waited_phase = phase;
            waiting_since = fl_monotonic_ms();
        }
        int64_t limit = phase == FL_CLAIM_RETURNED ? FL_RETURNED_GRACE_MS : FL_REPORTING_WAIT_MS;
        if (fl_monotonic_ms() - waiting_since >= limit) return;
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

// Runs on the crashing thread; compromised context. Returns 1 once this thread holds the claim,
// 0 if the signal was nested inside the previous handler and has been forwarded (just return).
static int fl_claim(pid_t tid, int signo, siginfo_t *info, void *uc) {
    pid_t waited_for = 0;
    uint64_t waited_generation = 0;
    int64_t waiting_since = 0;
    for (;;) {
        pid_t holder = 0;
        if (atomic_compare_exchange_strong(&fl_state.handling_thread, &holder, tid)) return 1;
        int phase = atomic_load(&fl_state.claim_phase);
        if (holder == tid) {
            if (fl_interrupted_inside_handler(uc)) {
                if (phase == FL_CLAIM_CHAINING) {
                    fl_forward_nested(signo, info, uc);
                    return 0;
                }
                FL_LOG("crashed inside the crash handler; giving up on the report");
                fl_die_with_default(signo);
            }
            // As PID 1, a raised signal does not kill, so abort() goes on to its fallback (a
            // faulting instruction): that fault is the same crash ending, not a new one. Keep the
            // report and let the fault kill the process as it would without us.
            // Likewise when the report was made for a handler that called ours without details:
            // that handler's own way to die (Ruby's abort()) is the same crash ending.
            if (phase == FL_CLAIM_RETURNED && (getpid() == 1 || fl_crash_info.si_code == FL_SI_NO_DETAILS)) {
                struct sigaction dfl;
                memset(&dfl, 0, sizeof dfl);
                dfl.sa_handler = SIG_DFL;
                sigaction(signo, &dfl, NULL);
                return 0;
            }
            // This thread left the handler without telling us (it survived a fault we expected
            // to kill it, or the previous handler longjmp'd out of it): that report was no crash.
            fl_release_parked_threads();
            fl_unlink_last_report();
            return 1;
        }
        // The holder is gone: a vfork child that crashed in this memory and died. Its claim is
        // stale and its report is its own: take the claim, keep the report.
        if (fl_claim_holder_is_gone(holder)) {
            if (atomic_compare_exchange_strong(&fl_state.handling_thread, &holder, tid)) {
                fl_release_parked_threads();
                return 1;
            }
            continue;
        }
        // Another thread holds the claim. Patience restarts whenever the holder or its claim changes.
        uint64_t generation = atomic_load(&fl_state.claim_generation);
        if (holder != waited_for || generation != waited_generation || waiting_since == 0) {
            waited_for = holder;
            waited_generation = generation;
            waiting_since = fl_monotonic_ms();
        }
        int64_t limit = phase == FL_CLAIM_RETURNED ? FL_RETURNED_GRACE_MS
                      : phase == FL_CLAIM_CHAINING ? FL_CHAINED_WAIT_MS : FL_REPORTING_WAIT_MS;
        if (fl_monotonic_ms() - waiting_since >= limit) {
            // Still reporting after twice the watchdog's limit: nothing we can add; end it.
            if (phase == FL_CLAIM_REPORTING) fl_die_with_default(signo);
            // The holder is back in normal execution (it survived, or longjmp'd out of the
            // previous handler): its report describes no crash. Take the claim over.
            if (atomic_compare_exchange_strong(&fl_state.handling_thread, &holder, tid)) {
                fl_release_parked_threads();
                fl_unlink_last_report();
                return 1;
            }
            continue;
        }
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

// Runs on the signalled thread. A signal sent by kill, tgkill or raise (si_code <= 0), not by a
// fault, whose disposition before us was to ignore it (a parent's `trap '' SEGV` inherited across
// exec, or the app's own SIG_IGN): without us it would have been discarded and the process gone
// on, so it is discarded here too, with no report. A fault is never ignorable (the kernel forces
// the default action), and SIGABRT this process sent itself is abort(), which goes on to die
// whatever the disposition: both are crashes and reported.
static int fl_would_have_been_ignored(int signo, const siginfo_t *info) {
    int index = fl_signal_index(signo);
    if (index < 0 || info->si_code > 0) return 0;
    if (signo == SIGABRT && info->si_pid == getpid()) return 0;
    return fl_state.previous[index].sa_handler == SIG_IGN;
}

// Runs on the crashing thread; compromised context.
static void fl_handle_crash(int signo, siginfo_t *info, void *context) {
    if (fl_would_have_been_ignored(signo, info)) return;
    pid_t tid = fl_gettid();
    if (!fl_claim(tid, signo, info, context)) return;
    pid_t self = getpid();
    atomic_store(&fl_state.claim_pid, self);
    // A child that shares this memory without having forked through glibc (vfork, clone with
    // CLONE_VM) never ran the atfork handler: the state still names the parent, its pid (which
    // fl_safe_copy reads through) and its event id (the report's name). This crash is the child's:
    // its own pid and a fresh id, taken once it holds the claim (a parent thread reporting its own
    // crash keeps its own meanwhile). The parent's own crash later renews both again (its pid no
    // longer matches) and takes over the claim the child left behind (fl_claim).
    if (self != fl_state.pid) {
        fl_state.pid = self;
        fl_generate_event_id(fl_state.event_id);
    }
    atomic_store(&fl_state.claim_phase, FL_CLAIM_REPORTING);
    atomic_fetch_add(&fl_state.claim_generation, 1);
    fl_record_handler_stack();
    // Before anything copies memory through the kernel: a filter may have come since start.
    fl_note_syscall_filter(fl_state.scratch->maps_buffer, sizeof fl_state.scratch->maps_buffer);

    fl_crash_signo = signo;
    fl_crash_info = *info;
    fl_crash_context = (const ucontext_t *)context;
    fl_report_done = 0;
    fl_all_threads_added = 0;
    long watchdog = fl_arm_watchdog();
    uint64_t t0 = fl_monotonic_ns();
    fl_begin_stack_walk();
    const char *fallback = fl_ready_unwinder(tid);
    if (!fallback) {
        // A fault whose address is the pc is the fetch of the instruction itself: a call or jump
        // to where no code is.
        int fetch = (signo == SIGSEGV || signo == SIGBUS) && info->si_code > 0
                 && (uintptr_t)info->si_addr == fl_context_pc((const ucontext_t *)context);
        fl_unwind((const ucontext_t *)context, &fl_state.scratch->frames, fetch);
    } else {  // no libunwind, so no async search either
        fl_async_reset();
        fl_unwind_frame_pointers((const ucontext_t *)context, &fl_state.scratch->frames);
        fl_state.scratch->frames.fallback = fallback;
    }
    fl_end_stack_walk();
    uint64_t t1 = fl_monotonic_ns();
    fl_scan_modules(fl_state.scratch);
    fl_state.scratch->unwind_ns = t1 - t0;
    fl_state.scratch->modules_ns = fl_monotonic_ns() - t1;
    fl_state.scratch->threads_ns = 0;
    // The crashing thread alone first, so a report is on disk as soon as possible; every other
    // thread's stack is added (the same report rewritten) once the crash is known to be real.
    if (fl_state.threads) fl_state.threads->collected = 0;
    fl_write_report(signo, info, (const ucontext_t *)context, tid);
    fl_report_done = 1;
    fl_disarm_watchdog(watchdog);

    fl_chain(signo, info, context);
}

// What stands in for the siginfo and context when another handler called ours without them
// (fl_signal_details_usable): the signal, FL_SI_NO_DETAILS, and this thread's registers where
// the call came in (in fl_handle_signal itself: our own code, and a frame that stays live while
// the walk starts from it), from which the walk goes through the calling handler and its signal
// frame to where the signal struck. One process-wide copy: the thread that takes it gives it back
// when its handler returns; another thread meanwhile returns at once to its caller (whose own way
// to end the process then comes through here with the kernel's details).
static siginfo_t fl_missing_info;
static ucontext_t fl_missing_context;
static atomic_int fl_missing_details_taken;

// Runs on the crashing thread; compromised context. The entry point the kernel calls: it needs
// under two hundred bytes of whatever stack it was entered on before it moves to a stack of its
// own when that one is not ours (handler_stack.c says why).
FL_OWN_CODE void fl_handle_signal(int signo, siginfo_t *info, void *context) {
    int saved_errno = errno;
    int stand_in = 0;
    if (!fl_signal_details_usable(signo, info, context, __builtin_return_address(0))) {
        int expected = 0;
        if (!atomic_compare_exchange_strong(&fl_missing_details_taken, &expected, 1)) goto done;
        // Its mask too: the calling handler's, which stands for the mask at the signal.
        if (getcontext(&fl_missing_context) != 0) {
            atomic_store(&fl_missing_details_taken, 0);
            goto done;
        }
        memset(&fl_missing_info, 0, sizeof fl_missing_info);
        fl_missing_info.si_signo = signo;
        fl_missing_info.si_code = FL_SI_NO_DETAILS;
        info = &fl_missing_info;
        context = &fl_missing_context;
        stand_in = 1;
    }
    fl_run_on_roomy_stack(fl_handle_crash, signo, info, context);
    if (stand_in) atomic_store(&fl_missing_details_taken, 0);
done:
    errno = saved_errno;
}
