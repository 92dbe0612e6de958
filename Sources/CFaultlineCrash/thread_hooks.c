// Alternate signal stacks for every thread (normal context).
//
// sigaltstack is per thread and glibc has no thread-start hook, so a stack overflow on any
// thread but main would kill the process silently (no stack left to run the handler on). We
// interpose pthread_create: the real one comes from dlsym(RTLD_NEXT), and the new thread first
// maps its own alternate stack (with guard pages on both sides: 8-128 KiB frames can jump a
// single guard) and frees it at exit through a pthread key destructor. This covers pthreads,
// Foundation Thread, Dispatch workers and Swift concurrency (whose threads are Dispatch workers)
// as long as this code comes before libc in symbol lookup: true when linked into the executable
// and for LD_PRELOAD. Threads that existed before start, and glibc-internal threads
// (timer_create SIGEV_THREAD), are not covered.
//
// The sigprocmask/pthread_sigmask wrappers that keep crash signals deliverable live in
// signal_mask.c: libunwind calls them inside the handler, so they are crash-path code.
#include "crash_internal.h"
#include "faultline_crash.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FL_GUARD_SIZE (64 * 1024)

typedef int (*fl_pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static pthread_key_t fl_altstack_key;
static pthread_once_t fl_key_once = PTHREAD_ONCE_INIT;
static __thread void *fl_thread_altstack;

// Normal context (thread exit): unmaps the thread's alternate stack.
static void fl_release_altstack(void *mapping) {
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && (char *)current.ss_sp == (char *)mapping + FL_GUARD_SIZE) {
        stack_t off = {.ss_flags = SS_DISABLE};
        sigaltstack(&off, NULL);
    }
    munmap(mapping, FL_ALTSTACK_SIZE + 2 * FL_GUARD_SIZE);
    fl_thread_altstack = NULL;
}

static void fl_make_key(void) { pthread_key_create(&fl_altstack_key, fl_release_altstack); }

static fl_pthread_create_fn fl_real_pthread_create(void);

// Normal context (start): the definitions our sigprocmask/pthread_sigmask wrappers forward to
// (signal_mask.c), looked up now because the wrappers also run inside the crash handler.
void fl_resolve_sigmask_functions(void) {
    if (!atomic_load(&fl_next_pthread_sigmask))
        atomic_store(&fl_next_pthread_sigmask, (fl_sigmask_fn)dlsym(RTLD_NEXT, "pthread_sigmask"));
    if (!atomic_load(&fl_next_sigprocmask))
        atomic_store(&fl_next_sigprocmask, (fl_sigmask_fn)dlsym(RTLD_NEXT, "sigprocmask"));
}

int fl_install_thread_hooks(void) {
    pthread_once(&fl_key_once, fl_make_key);
    fl_real_pthread_create();  // resolved now, not on the first thread created after a crash began
    fl_resolve_sigmask_functions();
    return 0;
}

int faultline_crash_thread_has_alternate_stack(void) {
    stack_t current;
    return fl_thread_altstack && sigaltstack(NULL, &current) == 0 && !(current.ss_flags & SS_DISABLE) &&
           (char *)current.ss_sp == (char *)fl_thread_altstack + FL_GUARD_SIZE;
}

int faultline_crash_install_alternate_stack(void) {
    if (faultline_crash_thread_has_alternate_stack()) return 0;
    pthread_once(&fl_key_once, fl_make_key);
    size_t total = FL_ALTSTACK_SIZE + 2 * FL_GUARD_SIZE;
    char *mapping = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapping == MAP_FAILED) return -1;
    if (mprotect(mapping + FL_GUARD_SIZE, FL_ALTSTACK_SIZE, PROT_READ | PROT_WRITE) != 0) {
        munmap(mapping, total);
        return -1;
    }
    stack_t stack = {.ss_sp = mapping + FL_GUARD_SIZE, .ss_size = FL_ALTSTACK_SIZE, .ss_flags = 0};
    if (sigaltstack(&stack, NULL) != 0) {
        munmap(mapping, total);
        return -1;
    }
    fl_thread_altstack = mapping;
    pthread_setspecific(fl_altstack_key, mapping);
    return 0;
}

typedef struct {
    void *(*start)(void *);
    void *argument;
} fl_thread_start;

FL_OWN_CODE static void *fl_thread_trampoline(void *raw) {
    fl_thread_start start = *(fl_thread_start *)raw;
    free(raw);
    faultline_crash_install_alternate_stack();
    fl_note_thread_started_after_start();  // no catch-up signal for this one (thread_setup.c)
    return start.start(start.argument);
}

static fl_pthread_create_fn fl_real_pthread_create(void) {
    static _Atomic(fl_pthread_create_fn) real;
    fl_pthread_create_fn fn = atomic_load(&real);
    if (!fn) {
        fn = (fl_pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
        atomic_store(&real, fn);
    }
    return fn;
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *argument) {
    fl_pthread_create_fn real = fl_real_pthread_create();
    if (!atomic_load(&fl_state.started)) return real(thread, attr, start, argument);
    fl_thread_start *boxed = malloc(sizeof *boxed);
    if (!boxed) return real(thread, attr, start, argument);
    boxed->start = start;
    boxed->argument = argument;
    int result = real(thread, attr, fl_thread_trampoline, boxed);
    if (result != 0) free(boxed);
    return result;
}
