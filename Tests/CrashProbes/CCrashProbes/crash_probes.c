// Deliberate faults, each in its own noinline function so tests can find it by symbol.
#define _GNU_SOURCE
#include "crash_probes.h"

#include <dlfcn.h>
#include <link.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define PROBE __attribute__((noinline, used))

PROBE void probe_segv(void) {
    volatile int *p = (volatile int *)(uintptr_t)0x10;
    *p = 1;
}

PROBE void probe_bus(const char *scratch_file) {
    // Touching a mapped page beyond the end of a file raises SIGBUS.
    int fd = open(scratch_file, O_CREAT | O_RDWR | O_TRUNC, 0600);
    char *map = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ((volatile char *)map)[4096] = 1;
}

PROBE void probe_fpe(void) {
    volatile int zero = 0;
    volatile int x = 10 / zero;
    (void)x;
}

PROBE void probe_ill(void) { __builtin_trap(); }
PROBE void probe_trap(void) { __asm__ volatile("int3"); }
PROBE void probe_abort(void) { abort(); }

PROBE void probe_double_free(void) {
    // glibc detects this inside free() with the arena lock held, then aborts.
    void *volatile p = malloc(64);
    free(p);
    free(p);
}

PROBE static int probe_recurse(volatile int depth) {
    volatile char pad[256];
    pad[0] = (char)depth;
    return probe_recurse(depth + 1) + pad[0];
}
PROBE void probe_c_stack_overflow(void) { probe_recurse(0); }

// `asm volatile` after each call: a call in tail position compiles to a jmp at -O2, and the
// probe's own frame (the caller the report must name) would be gone.
PROBE void probe_call_null(void) {
    void (*volatile fn)(void) = 0;
    fn();
    __asm__ volatile("");
}

PROBE void probe_call_unmapped(void) {
    void (*volatile fn)(void) = (void (*)(void))0xdeadbeef0;
    fn();
    __asm__ volatile("");
}

// A jump (not a call) to where no code is, as a smashed return address gives: what the stack
// (or the link register) holds is no return address (junk that follows no call), so nothing says
// who made it, and the walk starts at a pc nothing can be read at.
PROBE void probe_jump_unmapped(void) {
    void *volatile target = (void *)0xdeadbeef0;
    void *volatile junk = (void *)0x10;
#if defined(__x86_64__)
    __asm__ volatile("push %1\n\tjmp *%0" ::"r"(target), "r"(junk));
#elif defined(__aarch64__)
    __asm__ volatile("mov x30, %1\n\tbr %0" ::"r"(target), "r"(junk) : "x30");
#endif
}

static char probe_not_code[64];  // zeroes in a data page: mapped, never executable
PROBE void probe_call_data(void) {
    void (*volatile fn)(void) = (void (*)(void))(void *)probe_not_code;
    fn();
    __asm__ volatile("");
}

// A vfork child crashes in the parent's memory (no atfork handler runs), then the parent crashes.
PROBE void probe_vfork_child_then_parent(void) {
    pid_t child = vfork();
    if (child == 0) {
        probe_segv();
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    probe_segv();
}

static void *probe_thread_main(void *arg) {
    pthread_setname_np(pthread_self(), "probe-worker");  // the report must name this thread
    if (arg) probe_recurse(0);
    else probe_segv();
    return NULL;
}

PROBE void probe_segv_on_pthread(int stack_overflow) {
    pthread_t t;
    pthread_create(&t, NULL, probe_thread_main, stack_overflow ? (void *)1 : NULL);
    pthread_join(t, NULL);
}

static pthread_barrier_t probe_barrier;
static void *probe_racer(void *arg) {
    (void)arg;
    pthread_barrier_wait(&probe_barrier);
    probe_segv();
    return NULL;
}

PROBE void probe_segv_on_threads(int count) {
    pthread_t threads[64];
    if (count > 64) count = 64;
    pthread_barrier_init(&probe_barrier, NULL, (unsigned)count);
    for (int i = 0; i < count; i++) pthread_create(&threads[i], NULL, probe_racer, NULL);
    for (int i = 0; i < count; i++) pthread_join(threads[i], NULL);
}

PROBE void probe_dlopen_and_crash(const char *library_path) {
    void *handle = dlopen(library_path, RTLD_NOW);
    if (!handle) {
        fprintf(stderr, "dlopen failed: %s\n", dlerror());
        exit(3);
    }
    void (*fn)(void) = (void (*)(void))dlsym(handle, "faultline_test_crash_in_library");
    if (!fn) exit(4);
    fn();
}

static char probe_marker[1024];
static void probe_previous_handler(int signo, siginfo_t *info, void *uc) {
    (void)info;
    (void)uc;
    int fd = open(probe_marker, O_CREAT | O_WRONLY | O_APPEND, 0600);
    if (fd >= 0) {
        char line[32];
        int n = snprintf(line, sizeof line, "previous-handler %d\n", signo);
        write(fd, line, (size_t)n);
        close(fd);
    }
    // Like most handlers, it restores the default and lets the fault recur.
    signal(signo, SIG_DFL);
}

void probe_install_previous_handler(const char *marker_path) {
    snprintf(probe_marker, sizeof probe_marker, "%s", marker_path);
    int signals[] = {SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP};
    for (int i = 0; i < 6; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = probe_previous_handler;
        sa.sa_flags = SA_SIGINFO;
        sigaction(signals[i], &sa, NULL);
    }
}

PROBE static int probe_descend(int depth) {
    volatile char pad[32];  // read after the call: no tail call, no loop, one real frame per level
    pad[0] = (char)depth;
    if (depth <= 0) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        printf("fault_at_ns %lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
        fflush(stdout);
        probe_segv();
        return 0;
    }
    int below = probe_descend(depth - 1);
    return below + pad[0];
}
PROBE void probe_recurse_then_segv(int depth) { probe_descend(depth); }

static pthread_barrier_t probe_lock_barrier;
static int probe_hold_loader_lock(struct dl_phdr_info *info, size_t size, void *data) {
    (void)info;
    (void)size;
    (void)data;
    pthread_barrier_wait(&probe_lock_barrier);
    for (;;) pause();  // never returns: the loader lock stays taken
    return 0;
}
static void *probe_lock_holder(void *arg) {
    (void)arg;
    dl_iterate_phdr(probe_hold_loader_lock, NULL);
    return NULL;
}
PROBE void probe_segv_while_loader_lock_held(void) {
    pthread_t t;
    pthread_barrier_init(&probe_lock_barrier, NULL, 2);
    pthread_create(&t, NULL, probe_lock_holder, NULL);
    pthread_barrier_wait(&probe_lock_barrier);
    probe_segv();
}

PROBE void probe_segv_with_invalid_utf8_thread_name(void) {
    // "naïve-wörker-ü" cut mid-character, plus a lone 0xff.
    prctl(PR_SET_NAME, "na\xc3\xafve-\xff-w\xc3", 0, 0, 0);
    probe_segv();
}

// Guard pages, one per thread, that the recovering handler below unprotects on first touch.
#define PROBE_GUARD_PAGES 16
static char *probe_guard_pages;
static void probe_recovering_handler(int signo, siginfo_t *info, void *uc) {
    (void)uc;
    char *address = (char *)info->si_addr;
    if (probe_guard_pages && address >= probe_guard_pages && address < probe_guard_pages + PROBE_GUARD_PAGES * 4096) {
        char *page = probe_guard_pages + ((address - probe_guard_pages) / 4096) * 4096;
        mprotect(page, 4096, PROT_READ | PROT_WRITE);  // fixed: the access re-executes and succeeds
        return;
    }
    signal(signo, SIG_DFL);  // not ours: a real crash
}

void probe_install_recovering_handler(void) {
    probe_guard_pages = mmap(NULL, PROBE_GUARD_PAGES * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = probe_recovering_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
}

PROBE void probe_touch_guard_page(void) {
    ((volatile char *)probe_guard_pages)[100] = 7;
    printf("recovered %d\n", probe_guard_pages[100]);
    fflush(stdout);
}

// Recurses `depth` real frames, then touches `page` (a fault the handler recovers).
PROBE static int probe_touch_deep(int depth, char *page) {
    volatile char pad[32];
    pad[0] = (char)(depth & 1);
    if (depth <= 0) {
        ((volatile char *)page)[100] = 7;
        return ((volatile char *)page)[100];
    }
    int below = probe_touch_deep(depth - 1, page);
    return below + pad[0] - (depth & 1);
}

typedef struct {
    int index;
    int stagger_us;
    int crashes;  // this thread crashes for real instead of touching its guard page
    int result;
} probe_recovery_thread;

static pthread_barrier_t probe_recovery_barrier;
static void *probe_recovery_body(void *raw) {
    probe_recovery_thread *t = raw;
    pthread_barrier_wait(&probe_recovery_barrier);
    if (t->stagger_us) usleep((useconds_t)(t->index * t->stagger_us));
    if (t->crashes) probe_segv();
    // The first thread recurses deepest, so its unwind (and report) takes longest.
    t->result = probe_touch_deep(t->index == 0 ? 2000 : 50, probe_guard_pages + 4096 * (1 + t->index));
    return NULL;
}

PROBE void probe_recover_on_threads(int count, int stagger_us, int real_crash) {
    if (count < 1) count = 1;
    if (count > PROBE_GUARD_PAGES - 1) count = PROBE_GUARD_PAGES - 1;
    pthread_t threads[PROBE_GUARD_PAGES];
    probe_recovery_thread state[PROBE_GUARD_PAGES];
    pthread_barrier_init(&probe_recovery_barrier, NULL, (unsigned)count);
    for (int i = 0; i < count; i++) {
        state[i] = (probe_recovery_thread){i, stagger_us, real_crash && i == count - 1, 0};
        pthread_create(&threads[i], NULL, probe_recovery_body, &state[i]);
    }
    int recovered = 0;
    for (int i = 0; i < count; i++) {
        pthread_join(threads[i], NULL);
        if (state[i].result == 7) recovered++;
    }
    printf("recovered %d of %d\n", recovered, count);
    fflush(stdout);
}

PROBE void probe_segv_after_marker(void) {
    // One write(2) straight to stderr, so it lands in order with the loader's LD_DEBUG lines.
    static const char marker[] = "faultline-test: faulting now\n";
    write(2, marker, sizeof marker - 1);
    probe_segv();
}

// Sets the crash context over and over from another thread, alternating two valid objects of
// different lengths, while this thread faults: the report must carry one of them whole.
// From the crash core, which the crasher links (this probe target does not depend on it).
int faultline_crash_set_context(const char *json, size_t length);
static void *probe_context_churn(void *arg) {
    (void)arg;
    static char a[6000], b[300];
    static const char head[] = "{\"release\":\"churn-a\",\"pad\":\"";
    memset(a, 'a', sizeof a - 1);
    memcpy(a, head, sizeof head - 1);
    memcpy(a + sizeof a - 3, "\"}", 2);  // a[5999] stays 0: 5,999 bytes of JSON
    snprintf(b, sizeof b, "{\"release\":\"churn-b\"}");
    for (unsigned long i = 0;; i++) {
        if (i & 1) faultline_crash_set_context(b, strlen(b));
        else faultline_crash_set_context(a, sizeof a - 1);
    }
    return NULL;
}
PROBE void probe_segv_while_context_changes(void) {
    pthread_t t;
    pthread_create(&t, NULL, probe_context_churn, NULL);
    usleep(20000);
    probe_segv();
}

#include <assert.h>
PROBE void probe_assert(int value) {
    assert(value > 5);
}

// A thread that exists before Faultline starts (a pthread, or a raw clone() that bypasses
// pthread_create and shares its parent's TLS), waiting until released to overflow its stack.
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <linux/futex.h>
static _Atomic int probe_pre_start_go;
// A futex wait, as a worker parked on a condition variable waits: a call a signal handler with
// SA_RESTART resumes, so Faultline's catch-up signal reaches this thread (it leaves threads in
// sleeps and polls alone, which would return EINTR).
static void probe_wait_for_release(void) {
    while (!atomic_load(&probe_pre_start_go)) syscall(SYS_futex, &probe_pre_start_go, FUTEX_WAIT, 0, NULL, NULL, 0);
}
static void *probe_pre_start_pthread(void *arg) {
    (void)arg;
    probe_wait_for_release();
    probe_recurse(0);
    return NULL;
}
static int probe_pre_start_clone(void *arg) {
    (void)arg;
    probe_wait_for_release();
    probe_recurse(0);
    return 0;
}
PROBE void probe_spawn_thread_before_start(int raw_clone) {
    if (!raw_clone) {
        pthread_t t;
        pthread_create(&t, NULL, probe_pre_start_pthread, NULL);
        return;
    }
    size_t guard = 64 * 1024, size = 1024 * 1024;
    char *stack = mmap(NULL, guard + size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(stack, guard, PROT_NONE);  // the overflow must hit a guard page, not the heap
    clone(probe_pre_start_clone, stack + guard + size,
          CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM, NULL);
}
PROBE void probe_release_pre_start_thread_and_wait(void) {
    atomic_store(&probe_pre_start_go, 1);
    syscall(SYS_futex, &probe_pre_start_go, FUTEX_WAKE, 1, NULL, NULL, 0);
    for (;;) pause();
}

// Threads parked in different places, each in its own named function and with its own thread
// name, then a crash on the main thread: the report must list every one with its own frames.
#include <poll.h>
static pthread_barrier_t probe_park_barrier;
static pthread_mutex_t probe_park_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t probe_park_cond = PTHREAD_COND_INITIALIZER;
static int probe_park_pipe[2];
PROBE static void probe_park_sleep(void) { for (;;) sleep(100); }
PROBE static void probe_park_cond_wait(void) {
    pthread_mutex_lock(&probe_park_mutex);
    for (;;) pthread_cond_wait(&probe_park_cond, &probe_park_mutex);
}
PROBE static void probe_park_read(void) { char c; for (;;) read(probe_park_pipe[0], &c, 1); }
PROBE static void probe_park_poll(void) { for (;;) poll(NULL, 0, 100000); }
PROBE static void probe_park_spin(void) { for (volatile unsigned long i = 0;; i++) {} }
PROBE static void probe_park_mutex_wait(void) { for (;;) { pthread_mutex_lock(&probe_park_mutex); pthread_mutex_unlock(&probe_park_mutex); } }
PROBE static void probe_park_pause(void) { for (;;) pause(); }
PROBE static void probe_park_signals_blocked(void) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);  // our wrapper keeps only the crash signals open
    for (;;) sleep(100);
}
typedef struct { const char *name; void (*park)(void); } probe_park_kind;
static const probe_park_kind probe_park_kinds[] = {
    {"park-sleep", probe_park_sleep}, {"park-cond", probe_park_cond_wait}, {"park-read", probe_park_read},
    {"park-poll", probe_park_poll}, {"park-spin", probe_park_spin}, {"park-mutex", probe_park_mutex_wait},
    {"park-pause", probe_park_pause}, {"park-blocked", probe_park_signals_blocked},
};
static void *probe_park_body(void *raw) {
    const probe_park_kind *kind = raw;
    pthread_setname_np(pthread_self(), kind->name);
    pthread_barrier_wait(&probe_park_barrier);
    kind->park();
    return NULL;
}
PROBE void probe_crash_with_parked_threads(int count) {
    pipe(probe_park_pipe);
    int kinds = (int)(sizeof probe_park_kinds / sizeof probe_park_kinds[0]);
    pthread_barrier_init(&probe_park_barrier, NULL, (unsigned)count + 1);
    for (int i = 0; i < count; i++) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 256 * 1024);  // 500 threads stay cheap
        // Beyond the eight kinds (and never the mutex one twice: the cond waiter holds it) sleep.
        int k = i < kinds ? i : 0;
        pthread_create(&t, &attr, probe_park_body, (void *)&probe_park_kinds[k]);
        pthread_attr_destroy(&attr);
    }
    pthread_barrier_wait(&probe_park_barrier);
    usleep(50 * 1000);  // let each reach its parking place (and start's background preparation end)
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    printf("fault_at_ns %lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);  // for tools/measure-crash
    fflush(stdout);
    probe_segv();
}

static _Atomic pid_t probe_storm_target;
static _Atomic long probe_storm_received;

static void probe_count_storm_signal(int signo) {
    (void)signo;
    atomic_fetch_add(&probe_storm_received, 1);
}

static void *probe_send_storm(void *unused) {
    (void)unused;
    pid_t target = atomic_load(&probe_storm_target);
    for (;;) syscall(SYS_tgkill, getpid(), target, SIGUSR1);
    return NULL;
}

void probe_start_signal_storm(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = probe_count_storm_signal;
    sigaction(SIGUSR1, &sa, NULL);
    atomic_store(&probe_storm_target, (pid_t)syscall(SYS_gettid));
    pthread_t sender;
    pthread_create(&sender, NULL, probe_send_storm, NULL);
    while (atomic_load(&probe_storm_received) < 100) sched_yield();
}

void probe_use_own_alternate_stack(size_t size) {
    stack_t ss = {.ss_sp = malloc(size), .ss_size = size, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        perror("sigaltstack");
        exit(3);
    }
}
