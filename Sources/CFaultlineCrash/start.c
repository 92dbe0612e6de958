// Start path (normal context): everything the handler will need is prepared here, so the crash
// path only copies bytes and makes syscalls.
#include "crash_internal.h"
#include "faultline_crash.h"
#include "safe_io.h"
#include "session_writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

fl_crash_state fl_state;
static pthread_mutex_t fl_start_lock = PTHREAD_MUTEX_INITIALIZER;

// Normal context: a forked child is a new process and must not reuse the parent's event id, nor
// end the parent's session with its crash.
static void fl_after_fork_in_child(void) {
    fl_generate_event_id(fl_state.event_id);
    fl_session_after_fork_in_child();
    fl_state.pid = getpid();
    atomic_store(&fl_state.claim_phase, FL_CLAIM_NONE);
    atomic_store(&fl_state.handling_thread, 0);
    // The parent's preparing thread does not exist here: a crash must not wait for it. A pre-warm
    // that was under way may have held libunwind's lock at the fork: this child never enters
    // libunwind (frame pointers, and the report says why). One not yet begun is begun by a crash.
    if (!atomic_load(&fl_state.unwinder_ready) && atomic_load(&fl_state.unwinder_owner) != 0)
        atomic_store(&fl_state.unwinder_owner, FL_UNWINDER_ABANDONED);
    // The breadcrumb ring resets itself (breadcrumb_ring.c registers its own handler).
}

// Normal context: the nearest directory at or above `path` that exists, into `out`, with its
// stat; 0, or -1 with errno set.
static int fl_nearest_existing_directory(const char *path, char *out, size_t capacity, struct stat *st) {
    size_t n = fl_copy_string(out, capacity, path);
    for (;;) {
        if (stat(out, st) == 0) return 0;
        if (errno != ENOENT) return -1;
        if (n == 1 && (out[0] == '/' || out[0] == '.')) return -1;
        while (n > 0 && out[n - 1] != '/') n--;  // drop the last component
        while (n > 1 && out[n - 1] == '/') n--;  // and the slashes before it, but not the root's
        if (n == 0) out[n++] = '.';               // a relative path: the working directory
        out[n] = 0;
    }
}

// Normal context: proves the directory is usable now rather than at crash time, without creating
// it: it exists and is a writable directory, or the nearest directory above it that exists is
// writable. Creating a directory is a disk allocation the caller need not wait for: start's
// preparation thread makes it, and a crash that comes first makes it itself (report_writer.c).
// access() answers for permissions and a read-only file system without a probe file.
static int fl_check_directory(const char *dir, char *error, size_t cap) {
    if (strlen(dir) + 64 >= FL_PATH_MAX) {
        snprintf(error, cap, "crash directory path is too long (max %d bytes)", FL_PATH_MAX - 64);
        return -1;
    }
    char existing[FL_PATH_MAX];
    struct stat st;
    if (fl_nearest_existing_directory(dir, existing, sizeof existing, &st) != 0) {
        snprintf(error, cap, "cannot use crash directory %s: %s", dir, strerror(errno));
        return -1;
    }
    int exists = strcmp(existing, dir) == 0;
    if (!S_ISDIR(st.st_mode)) {
        if (exists) snprintf(error, cap, "crash directory %s is not a directory", dir);
        else snprintf(error, cap, "cannot create crash directory %s: %s is not a directory", dir, existing);
        return -1;
    }
    // Writable by the effective user (access() asks about the real one: a setuid program got the
    // wrong answer).
    if (faccessat(AT_FDCWD, existing, W_OK | X_OK, AT_EACCESS) != 0) {
        if (exists) snprintf(error, cap, "crash directory %s is not writable: %s", dir, strerror(errno));
        else snprintf(error, cap, "cannot create crash directory %s: %s is not writable: %s", dir, existing, strerror(errno));
        return -1;
    }
    return 0;
}

// Normal context (a short-lived thread started by start): the preparations that would otherwise
// cost the caller: libunwind's pre-warm (its lazy initialisation and first unwind parse the
// loaded objects' unwind tables), alternate stacks for the threads that already
// exist (which means waiting for each to answer a signal), and /proc/self/maps with every
// module's build-id read once, so a crash later only has to check that nothing was loaded since.
//
// The handler is installed before this runs, so no crash is lost in the meantime. The pre-warm
// belongs to whichever thread begins it first (one compare-and-swap on unwinder_owner): a crash
// that comes before this thread has been scheduled — start-up crashes happen in the first
// milliseconds, on the starting thread — pre-warms on the crashing thread and gets the same walk
// as a crash a second later; one that comes while this thread is pre-warming waits for it
// (handler.c, fl_ready_unwinder). Then the caller's own continuation (the Swift SDK's outbox
// scan, crash pickup and network set-up) runs here, so start costs the caller one thread.
static pid_t fl_starting_thread;
static _Atomic int fl_prepared;
static _Atomic unsigned fl_preparation_delay_ms;  // tests only
static _Atomic int fl_preparation_fault_signal;   // tests only
static _Atomic unsigned fl_unwinder_hold_ms;       // tests only
static _Atomic int fl_unwinder_held;               // tests only
typedef struct {
    int prepare;  // 0: the core was prepared by an earlier start; only the continuation runs
    void (*then)(void *);
    void *argument;
    char crash_directory[FL_PATH_MAX];  // as that start set it (a later start may change it)
    char creator_name[16];              // the starting thread's name, for the continuation
    sigset_t creator_mask;              // the starting thread's signal mask, for the continuation
} fl_background_work;

_Static_assert(FL_MAKE_DIRECTORIES_MAX >= FL_PATH_MAX, "every crash directory start accepts can be made");

// Normal context: the crash directory, when start found it missing (fl_check_directory).
static void fl_make_crash_directory(const char *directory) {
    if (fl_make_directories(directory) != 0) FL_LOG("cannot create the crash directory now; a crash will try again");
}

static void fl_prepare(const char *crash_directory) {
    {
        // Before anything below copies memory through the kernel (the module cache does).
        char status[4096];
        fl_note_syscall_filter(status, sizeof status);
    }
    unsigned delay = atomic_load(&fl_preparation_delay_ms);
    if (delay) {
        struct timespec pause = {delay / 1000, (long)(delay % 1000) * 1000000L};
        nanosleep(&pause, NULL);
    }
    fl_make_crash_directory(crash_directory);
    fl_confirm_dump_signal();  // first: until it has run, an emulator may refuse the dump requests
    int owner = 0;
    if (atomic_compare_exchange_strong(&fl_state.unwinder_owner, &owner, (int)syscall(SYS_gettid))) {
        int fault = atomic_load(&fl_preparation_fault_signal);
        if (fault) raise(fault);
        unsigned hold = atomic_load(&fl_unwinder_hold_ms);
        if (hold) {
            atomic_store(&fl_unwinder_held, 1);
            for (int64_t until = fl_monotonic_ms() + hold; fl_monotonic_ms() < until;) {
                struct timespec pause = {0, 1000000L};
                nanosleep(&pause, NULL);
            }
            atomic_store(&fl_unwinder_held, 0);
        }
        fl_prewarm_unwinder();
        atomic_store(&fl_state.unwinder_ready, 1);
    }
    // Otherwise a crashing thread began it and finishes it: the process is on its way out, or the
    // crash was recovered and unwinder_ready follows.
    fl_cover_existing_threads(fl_starting_thread);
    if (fl_state.module_cache) fl_fill_module_cache(fl_state.module_cache);
    atomic_store(&fl_prepared, 1);
}

static void *fl_background(void *raw) {
    fl_background_work *work_memory = raw;
    fl_background_work work = *work_memory;
    free(work_memory);
    // Named as Faultline's while it prepares (from its creation: fl_start_background lends it the
    // name), so a crash in the first milliseconds leaves it out of the report. The continuation
    // gets the starting thread's name, so that threads it starts (a dispatch worker that later
    // runs app work) neither bear Faultline's nor are left out of reports.
    prctl(PR_SET_NAME, FL_START_THREAD_NAME, 0, 0, 0);
    // SCHED_BATCH: no wake-up preemption of the app's threads by this one, yet its fair share of
    // CPU (SCHED_IDLE could starve it on a loaded server). Set by the thread itself: an explicit
    // policy in the attributes makes glibc create the thread stopped and set the policy from the
    // caller's thread, which measured slower for the caller (median and tail), and so did lending
    // the caller SCHED_BATCH for the clone() so the thread would inherit it.
    struct sched_param batch = {.sched_priority = 0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &batch);
    if (work.prepare) {
        fl_prepare(work.crash_directory);
    } else {
        fl_make_crash_directory(work.crash_directory);
        faultline_crash_wait_for_preparation(5000);
    }
    if (work.then) {
        // The continuation is work the app may be waiting for (the SDK's outbox and sender): the
        // ordinary policy again, also for the threads it creates, and the starting thread's
        // signal mask, so those threads are like any other the app starts.
        struct sched_param other = {.sched_priority = 0};
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
        prctl(PR_SET_NAME, work.creator_name, 0, 0, 0);
        pthread_sigmask(SIG_SETMASK, &work.creator_mask, NULL);
        work.then(work.argument);
    }
    return NULL;
}

int faultline_crash_wait_for_preparation(unsigned timeout_ms) {
    struct timespec pause = {0, 100 * 1000};
    for (int64_t until = fl_monotonic_ms() + timeout_ms; !atomic_load(&fl_prepared) && fl_monotonic_ms() < until;) nanosleep(&pause, NULL);
    return atomic_load(&fl_prepared);
}

void faultline_crash_delay_preparation_for_testing(unsigned milliseconds) { atomic_store(&fl_preparation_delay_ms, milliseconds); }
void faultline_crash_hold_unwinder_preparation_for_testing(unsigned milliseconds) { atomic_store(&fl_unwinder_hold_ms, milliseconds); }
int faultline_crash_unwinder_preparation_held_for_testing(void) { return atomic_load(&fl_unwinder_held); }

void faultline_crash_fault_during_preparation_for_testing(int signo) { atomic_store(&fl_preparation_fault_signal, signo); }

// Normal context (start). The file of the loaded object whose segments hold `address`, found
// through the program headers (dl_iterate_phdr) rather than dladdr: dladdr also looks for the
// nearest symbol, a walk over the object's whole symbol table (libswiftCore's is large), which
// made it nearly all of start's own cost; only the file is wanted here.
struct fl_object_search {
    uintptr_t address;
    const char *file;
};

static int fl_object_holding(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct fl_object_search *search = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && search->address >= start && search->address - start < ph->p_memsz) {
            search->file = info->dlpi_name;
            return 1;
        }
    }
    return 0;
}

// Normal context (start). Which of the previous handlers are Swift's runtime backtracer (in
// libswiftCore, installed before main), and whether the user asked for its report: it is on by
// default on Linux, so without SWIFT_BACKTRACE in the environment every Swift crash would also be
// symbolicated and printed to stderr by a helper process after our report is written
// (docs/CRASH-HANDLER.md, "Swift's backtracer").
static void fl_note_swift_backtracer(void) {
    const char *requested = getenv("SWIFT_BACKTRACE");
    fl_state.chain_to_swift_backtracer = requested && requested[0];
    for (int i = 0; i < FL_SIGNAL_COUNT; i++) {
        const struct sigaction *p = &fl_state.previous[i];
        void *handler = (p->sa_flags & SA_SIGINFO) ? (void *)p->sa_sigaction : (void *)p->sa_handler;
        fl_state.previous_is_swift_backtracer[i] = 0;
        if (p->sa_handler == SIG_DFL || p->sa_handler == SIG_IGN) continue;
        struct fl_object_search search = {(uintptr_t)handler, 0};
        if (!dl_iterate_phdr(fl_object_holding, &search) || !search.file) continue;
        const char *name = strrchr(search.file, '/');
        name = name ? name + 1 : search.file;
        fl_state.previous_is_swift_backtracer[i] = strncmp(name, "libswiftCore.so", 15) == 0;
    }
}

// Normal context (start, holding fl_start_lock). `in_place`: no thread; the preparation runs here
// (the preload's start, see faultline_crash_start_in_place).
static void fl_start_background(int prepare, void (*then)(void *), void *argument, int in_place) {
    if (prepare) {
        fl_state.loader_debug = dlsym(RTLD_DEFAULT, "_r_debug");
        // In place (the preload, before main) there is no module table cached at start: reading every
        // module's build-id is most of the preparation, paid by every process the preload is in,
        // and a crash reads them itself (as after a dlopen).
        fl_module_cache *cache = in_place ? MAP_FAILED
                                          : mmap(NULL, sizeof *cache, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        fl_state.module_cache = cache == MAP_FAILED ? NULL : cache;
        fl_starting_thread = (pid_t)syscall(SYS_gettid);
    }
    fl_background_work *work = in_place ? NULL : malloc(sizeof *work);
    fl_background_work on_stack = {prepare, then, argument, {0}, {0}, {{0}}};
    fl_copy_string(on_stack.crash_directory, sizeof on_stack.crash_directory, fl_state.crash_directory);
    prctl(PR_GET_NAME, on_stack.creator_name, 0, 0, 0);
    pthread_attr_t attr;
    pthread_t thread;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    // The new thread is born with every signal blocked but the crash signals (a fault with its
    // signal blocked would kill the process unreported): a signal sent to the process must never
    // be taken by Faultline's thread — one whose default action ends the process (a daemon's
    // SIGTERM, awaited with sigwait) would end it, and one with a handler would run it there
    // while the thread that waits for it (sigsuspend) waits on.
    pthread_sigmask(SIG_BLOCK, fl_crash_entry_mask(), &on_stack.creator_mask);
    if (work) *work = on_stack;
    // The new thread inherits this thread's name at creation: lent FL_START_THREAD_NAME for it.
    prctl(PR_SET_NAME, FL_START_THREAD_NAME, 0, 0, 0);
    int created = work && pthread_create(&thread, &attr, fl_background, work) == 0;
    prctl(PR_SET_NAME, on_stack.creator_name, 0, 0, 0);
    pthread_sigmask(SIG_SETMASK, &on_stack.creator_mask, NULL);
    if (!created) {
        // In place, or no thread to spare: do it here.
        free(work);
        if (prepare) {
            if (!in_place) fl_state.module_cache = NULL;  // no memory to spare: a crash rescans /proc/self/maps
            fl_prepare(on_stack.crash_directory);
        } else {
            fl_make_crash_directory(on_stack.crash_directory);
        }
        if (then) then(argument);
    }
    pthread_attr_destroy(&attr);
}

static int fl_start(const char *crash_directory, char *error, size_t error_capacity, void (*then)(void *), void *argument,
                    int in_place);

int faultline_crash_start(const char *crash_directory, char *error, size_t error_capacity) {
    return fl_start(crash_directory, error, error_capacity, NULL, NULL, 0);
}

int faultline_crash_start_in_place(const char *crash_directory, char *error, size_t error_capacity) {
    return fl_start(crash_directory, error, error_capacity, NULL, NULL, 1);
}

int faultline_crash_start_then(const char *crash_directory, char *error, size_t error_capacity,
                               void (*then)(void *), void *argument) {
    return fl_start(crash_directory, error, error_capacity, then, argument, 0);
}

// Normal context (start). `dir` made absolute against the working directory now: a relative
// crash directory names the one meant at start, not wherever the process has moved (chdir) by the
// time it crashes. -1 when that cannot be done (no working directory, or too long a path): the
// caller then keeps `dir` as given, as it was before.
static int fl_absolute_directory(const char *dir, char *out, size_t capacity) {
    size_t n = 0;
    if (dir[0] != '/') {
        if (!getcwd(out, capacity)) return -1;
        n = strlen(out);
        if (out[n - 1] != '/') out[n++] = '/';
    }
    if (n + strlen(dir) >= capacity) return -1;
    fl_copy_string(out + n, capacity - n, dir);
    return 0;
}

static int fl_start(const char *crash_directory, char *error, size_t error_capacity, void (*then)(void *), void *argument,
                    int in_place) {
    char scratch_error[256];
    if (!error || error_capacity == 0) {
        error = scratch_error;
        error_capacity = sizeof scratch_error;
    }
    error[0] = 0;
    if (!crash_directory || !crash_directory[0]) {
        snprintf(error, error_capacity, "no crash directory given");
        return -1;
    }
    char absolute[FL_PATH_MAX];
    if (fl_absolute_directory(crash_directory, absolute, sizeof absolute - 64) == 0) crash_directory = absolute;
    if (fl_check_directory(crash_directory, error, error_capacity) != 0) return -1;

    pthread_mutex_lock(&fl_start_lock);
    fl_copy_string(fl_state.crash_directory, sizeof fl_state.crash_directory, crash_directory);
    if (atomic_load(&fl_state.started)) {
        // Already prepared (or being prepared): only the continuation needs a thread.
        if (then) fl_start_background(0, then, argument, 0);
        pthread_mutex_unlock(&fl_start_lock);
        return 0;
    }

    fl_crash_scratch *scratch = mmap(NULL, sizeof(fl_crash_scratch), PROT_READ | PROT_WRITE,
                                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (scratch == MAP_FAILED) {
        snprintf(error, error_capacity, "cannot reserve %zu bytes for the crash handler: %s",
                 sizeof(fl_crash_scratch), strerror(errno));
        pthread_mutex_unlock(&fl_start_lock);
        return -1;
    }
    fl_state.scratch = scratch;
    ssize_t len = readlink("/proc/self/exe", fl_state.executable, sizeof fl_state.executable - 1);
    fl_state.executable[len > 0 ? len : 0] = 0;
    fl_state.pid = getpid();
    fl_state.page_size = (size_t)sysconf(_SC_PAGESIZE);
    fl_generate_event_id(fl_state.event_id);
    pthread_atfork(NULL, NULL, fl_after_fork_in_child);
    atexit(fl_hold_exit_while_crashing);

    struct stat pipe_status;
    if (pipe2(fl_state.probe_pipe, O_CLOEXEC | O_NONBLOCK) != 0) fl_state.probe_pipe[0] = fl_state.probe_pipe[1] = -1;
    else if (fstat(fl_state.probe_pipe[1], &pipe_status) == 0) fl_state.probe_pipe_inode = pipe_status.st_ino;
    fl_install_thread_hooks();
    fl_find_crash_message_sources();
    fl_bind_crash_path_symbols();
    atomic_store(&fl_state.started, 1);  // from here on new threads get alternate stacks
    fl_prepare_thread_dump();            // a signal that asks each thread for its stack at a crash
    if (faultline_crash_install_alternate_stack() != 0) {
        // Not fatal: crashes are still reported, only a main-thread stack overflow is not.
        FL_LOG("could not map an alternate signal stack for the calling thread");
    }

#if !defined(__x86_64__)
    {
        // No trampoline to know the kernel's calls by (fl_signal_details_usable probes them): a
        // filter present now is known before the first signal can come.
        char status[4096];
        fl_note_syscall_filter(status, sizeof status);
    }
#endif
    fl_prepare_crash_entry_mask();
    for (int i = 0; i < FL_SIGNAL_COUNT; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = fl_handle_signal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sa.sa_mask = *fl_crash_entry_mask();
        sigaction(fl_crash_signals[i], &sa, &fl_state.previous[i]);
    }
#if defined(__x86_64__)
    // The trampoline the kernel returns a handler to (glibc's __restore_rt, which its sigaction
    // sets with the kernel's SA_RESTORER flag): a call to ours from there is the kernel's.
    struct sigaction installed;
    if (sigaction(fl_crash_signals[0], NULL, &installed) == 0 && (installed.sa_flags & 0x04000000))
        fl_state.kernel_restorer = (void *)installed.sa_restorer;
#endif
    fl_note_swift_backtracer();
    // After the handlers: no crash in the background work (or in an inline fallback) goes unseen.
    fl_start_background(1, then, argument, in_place);  // libunwind pre-warm, pre-existing threads, modules
    pthread_mutex_unlock(&fl_start_lock);
    return 0;
}

int faultline_crash_is_started(void) { return atomic_load(&fl_state.started); }

void faultline_crash_current_event_id(char *out) { memcpy(out, fl_state.event_id, 33); }

size_t faultline_crash_reserved_bytes(void) {
    return sizeof(fl_crash_scratch) + sizeof(fl_crash_state) + FL_ALTSTACK_SIZE + 2 * 4096;
}
