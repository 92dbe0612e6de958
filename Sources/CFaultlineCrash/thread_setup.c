// Start-time set-up for other threads (normal context): alternate stacks for the threads that
// already exist, and the signal that asks every thread for its stack at a crash (thread_dump.c).
//
// The pthread_create wrapper (thread_hooks.c) covers threads created after start. Threads that
// were running before it — created by a library constructor, by code that ran before
// Faultline.start, or with a raw clone() that bypasses pthread_create — have no alternate stack,
// so a stack overflow there would kill the process with no report. sigaltstack() only acts on the
// calling thread, so each of them must install its own: we send every other thread in
// /proc/self/task (but those the wrapper started meanwhile) a real-time signal (one nobody has a
// handler for) whose handler takes a pre-mapped stack from a pool and hands it to the kernel
// through its signal frame. The handler touches no thread-local storage, so a raw clone() thread
// sharing its parent's TLS is safe.
//
// This runs on a background thread start creates (start does not wait for the answers), so for a
// moment after start a pre-existing thread may not be covered yet; faultline_crash_wait_for_
// preparation waits for it. Bounded: at most FL_CATCH_UP_MAX_THREADS threads, and at most FL_CATCH_UP_WAIT_MS for the
// answers. A thread that blocks the signal (or is stopped) does not answer in time: it stays
// uncovered, and its pending signal is discarded (the action is set to SIG_IGN, which drops
// pending instances, before the original action is put back). A thread waiting in a call the
// signal would interrupt with EINTR is not sent it (fl_blocked_in_call_a_signal_would_interrupt). These stacks are not unmapped when
// their thread exits (no pthread key destructor can be registered from a signal handler); the
// pool is mapped once, MAP_NORESERVE, and only the pages a handler touches cost memory.
#include "crash_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FL_CATCH_UP_MAX_THREADS 1024
#define FL_CATCH_UP_WAIT_MS 250
#define FL_CATCH_UP_GUARD (64 * 1024)

static char *fl_pool;
static size_t fl_pool_count;
static _Atomic size_t fl_pool_next;
static _Atomic int fl_answers;

static size_t fl_pool_stride(void) { return FL_ALTSTACK_SIZE + FL_CATCH_UP_GUARD; }

// Runs on each pre-existing thread, in its signal handler: only atomics and memory writes.
// Linux's rt_sigreturn re-installs the alternate stack saved in the signal frame (uc_stack), so a
// sigaltstack() call here would be undone on return; writing the new stack into uc_stack is what
// makes the kernel install it as the handler returns.
static void fl_catch_up_handler(int signo, siginfo_t *info, void *context) {
    (void)signo;
    (void)info;
    ucontext_t *uc = context;
    if (uc->uc_stack.ss_flags & SS_DISABLE) {
        size_t index = atomic_fetch_add(&fl_pool_next, 1);
        if (index < fl_pool_count) {
            uc->uc_stack.ss_sp = fl_pool + FL_CATCH_UP_GUARD + index * fl_pool_stride();
            uc->uc_stack.ss_size = FL_ALTSTACK_SIZE;
            uc->uc_stack.ss_flags = 0;
        }
    }
    atomic_fetch_add(&fl_answers, 1);
}

// Normal context: a real-time signal that has no handler (searched from the top, where
// applications rarely look), or -1.
static int fl_free_realtime_signal(void) {
    for (int signo = SIGRTMAX - 1; signo > SIGRTMIN + 4; signo--) {
        struct sigaction current;
        if (sigaction(signo, NULL, &current) == 0 && current.sa_handler == SIG_DFL && !(current.sa_flags & SA_SIGINFO)) return signo;
    }
    return -1;
}

// Threads the pthread_create wrapper started after start: they map their own alternate stack
// (thread_hooks.c) and need no catch-up signal, which could only do harm there: an app's own
// handler running on a small alternate stack of its own when the signal arrives would have the
// catch-up frame pushed on top of it, where it does not fit, and the kernel would kill the
// process. Only the moment before the catch-up is over counts; later threads are not recorded.
#define FL_STARTED_THREADS_MAX 256
static _Atomic pid_t fl_started_threads[FL_STARTED_THREADS_MAX];
static _Atomic size_t fl_started_thread_count;
static _Atomic int fl_catch_up_over;

// Normal context: on a thread the wrapper started, before it runs the app's code.
void fl_note_thread_started_after_start(void) {
    if (atomic_load(&fl_catch_up_over)) return;
    size_t index = atomic_fetch_add(&fl_started_thread_count, 1);
    if (index < FL_STARTED_THREADS_MAX) atomic_store(&fl_started_threads[index], (pid_t)syscall(SYS_gettid));
}

// Normal context (the background preparation thread).
static int fl_started_after_start(pid_t tid) {
    size_t count = atomic_load(&fl_started_thread_count);
    if (count > FL_STARTED_THREADS_MAX) count = FL_STARTED_THREADS_MAX;
    for (size_t i = 0; i < count; i++)
        if (atomic_load(&fl_started_threads[i]) == tid) return 1;
    return 0;
}

// Normal context. Whether thread `tid` is blocked in a system call a signal would end with EINTR
// even under SA_RESTART (signal(7): the waits with a timeout or for an event — sleeps, poll,
// select, epoll, sigtimedwait, io_getevents, System V IPC). Such a thread gets no catch-up
// signal: covering it would hand the app an EINTR it never had without Faultline (an event loop's
// epoll_wait, a worker's nanosleep), and a thread that waits there rarely overflows its stack.
// /proc/self/task/TID/syscall names the call a blocked thread is in ("running" otherwise); a
// thread that enters such a call between the read and the signal is the one case left.
static int fl_blocked_in_call_a_signal_would_interrupt(pid_t tid) {
    static const long interrupted[] = {
#ifdef SYS_nanosleep
        SYS_nanosleep,
#endif
        SYS_clock_nanosleep, SYS_ppoll, SYS_pselect6, SYS_epoll_pwait, SYS_rt_sigtimedwait, SYS_rt_sigsuspend,
        SYS_io_getevents, SYS_msgrcv, SYS_msgsnd, SYS_semtimedop,
#ifdef SYS_epoll_pwait2
        SYS_epoll_pwait2,
#endif
#ifdef SYS_poll
        SYS_poll,
#endif
#ifdef SYS_select
        SYS_select,
#endif
#ifdef SYS_epoll_wait
        SYS_epoll_wait,
#endif
#ifdef SYS_pause
        SYS_pause,
#endif
#ifdef SYS_semop
        SYS_semop,
#endif
    };
    char path[64], text[32];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0 || text[0] < '0' || text[0] > '9') return 0;  // "running", or "-1 …" (not in a call)
    text[n] = 0;
    long number = strtol(text, NULL, 10);
    for (size_t i = 0; i < sizeof interrupted / sizeof interrupted[0]; i++)
        if (interrupted[i] == number) return 1;
    return 0;
}

// Normal context: the kernel thread ids of the process, except the caller's; returns how many.
static size_t fl_other_threads(pid_t *out, size_t capacity, pid_t except) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return 0;
    pid_t self = (pid_t)syscall(SYS_gettid);
    size_t n = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) && n < capacity) {
        pid_t tid = (pid_t)atoi(entry->d_name);
        if (tid > 0 && tid != self && tid != except) out[n++] = tid;
    }
    closedir(tasks);
    return n;
}

// Normal context (the background preparation thread): `except` is the thread that called start,
// which got its alternate stack there.
static int fl_send_catch_up(pid_t except) {
    pid_t *threads = calloc(FL_CATCH_UP_MAX_THREADS, sizeof *threads);
    if (!threads) return -1;
    size_t count = fl_other_threads(threads, FL_CATCH_UP_MAX_THREADS, except);
    int signo = count ? fl_free_realtime_signal() : -1;
    if (count == 0 || signo < 0) {
        free(threads);
        return count == 0 ? 0 : -1;
    }
    size_t bytes = FL_CATCH_UP_GUARD + count * fl_pool_stride();
    char *pool = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (pool == MAP_FAILED) {
        free(threads);
        return -1;
    }
    for (size_t i = 0; i < count; i++)  // guard pages stay PROT_NONE between and around the stacks
        mprotect(pool + FL_CATCH_UP_GUARD + i * fl_pool_stride(), FL_ALTSTACK_SIZE, PROT_READ | PROT_WRITE);
    fl_pool = pool;
    fl_pool_count = count;
    atomic_store(&fl_pool_next, 0);
    atomic_store(&fl_answers, 0);

    struct sigaction ours, original;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = fl_catch_up_handler;
    ours.sa_flags = SA_SIGINFO | SA_RESTART;  // interrupted blocking calls resume where the kernel can
    sigemptyset(&ours.sa_mask);
    sigaction(signo, &ours, &original);
    int sent = 0;
    for (size_t i = 0; i < count; i++) {  // checked just before each signal: a thread may be starting now
        if (fl_started_after_start(threads[i]) || fl_blocked_in_call_a_signal_would_interrupt(threads[i])) continue;
        if (syscall(SYS_tgkill, getpid(), threads[i], signo) == 0) sent++;
    }
    struct timespec pause = {0, 100 * 1000};
    for (int64_t until = fl_monotonic_ms() + FL_CATCH_UP_WAIT_MS; atomic_load(&fl_answers) < sent && fl_monotonic_ms() < until;)
        nanosleep(&pause, NULL);

    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigaction(signo, &ignore, NULL);  // drops what is still pending on threads that did not answer
    sigaction(signo, &original, NULL);
    free(threads);
    return atomic_load(&fl_answers);
}

// Normal context (the background preparation thread).
int fl_cover_existing_threads(pid_t except) {
    int answers = fl_send_catch_up(except);
    atomic_store(&fl_catch_up_over, 1);
    return answers;
}

// Normal context: installs the dump-request handler on the highest real-time signal at or below
// `from` that has no handler; returns it, or -1.
static int fl_take_dump_signal(int from) {
    for (int signo = from; signo > SIGRTMIN + 4; signo--) {
        struct sigaction current;
        if (sigaction(signo, NULL, &current) != 0 || current.sa_handler != SIG_DFL || (current.sa_flags & SA_SIGINFO)) continue;
        struct sigaction ours;
        fl_dump_signal_action(&ours);
        if (sigaction(signo, &ours, NULL) == 0) return signo;
    }
    return -1;
}

// Normal context (start): maps the thread table and takes a real-time signal nobody handles for
// the dump requests; the handler (fl_answer_dump_request, thread_dump.c) stays installed. That
// the signal can also be sent is checked on the background thread (fl_confirm_dump_signal), so
// the app's thread does not take a signal delivery at start for a check only an emulator fails.
int fl_prepare_thread_dump(void) {
    fl_thread_table *table = mmap(NULL, sizeof *table, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (table == MAP_FAILED) return -1;
    int signo = fl_take_dump_signal(SIGRTMAX);
    if (signo < 0) {
        munmap(table, sizeof *table);
        return -1;
    }
    fl_state.threads = table;
    atomic_store(&fl_state.dump_signal, signo);
    return 0;
}

// Normal context (the background preparation thread). The dump signal is sent once to this
// thread, blocked, and taken back with sigtimedwait: never delivered, so a debugger (gdb stops at
// every real-time signal it sees delivered) does not stop every program at start. An emulator
// (qemu-user) accepts a handler for a guest real-time signal it has no host signal for, and only
// refuses to send it (EINVAL); then the next free signal down is taken and tried, and the refused
// one gets its default action back (a crash that read it a moment earlier cannot send it either).
// Any other failure (the queue of pending signals full) keeps the signal. Until this has run, a
// crash under such an emulator reports the other threads without their stacks.
void fl_confirm_dump_signal(void) {
    int signo = atomic_load(&fl_state.dump_signal);
    pid_t self = (pid_t)syscall(SYS_gettid);
    while (signo > 0) {
        sigset_t only, before;
        sigemptyset(&only);
        sigaddset(&only, signo);
        pthread_sigmask(SIG_BLOCK, &only, &before);
        int refused = syscall(SYS_tgkill, getpid(), self, signo) != 0 && errno == EINVAL;
        if (!refused) {
            struct timespec now = {0, 0};
            sigtimedwait(&only, NULL, &now);
        }
        pthread_sigmask(SIG_SETMASK, &before, NULL);
        if (!refused) return;
        struct sigaction none;  // it had no handler when taken
        memset(&none, 0, sizeof none);
        none.sa_handler = SIG_DFL;
        sigemptyset(&none.sa_mask);
        int next = fl_take_dump_signal(signo - 1);
        atomic_store(&fl_state.dump_signal, next);
        sigaction(signo, &none, NULL);
        signo = next;
    }
}
