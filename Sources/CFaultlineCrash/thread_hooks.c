// Alternate signal stacks for every thread, and crash signals that stay deliverable.
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
// We also interpose sigprocmask/pthread_sigmask so the synchronous crash signals (SEGV, BUS,
// ILL, FPE, TRAP) are never blocked: a blocked synchronous signal kills without running any
// handler. SIGABRT is left alone; abort() unblocks it itself.
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
typedef int (*fl_sigmask_fn)(int, const sigset_t *, sigset_t *);

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

int fl_install_thread_hooks(void) {
    pthread_once(&fl_key_once, fl_make_key);
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

static void *fl_thread_trampoline(void *raw) {
    fl_thread_start start = *(fl_thread_start *)raw;
    free(raw);
    faultline_crash_install_alternate_stack();
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

// Normal context, and also called from libunwind inside our handler: the set minus the
// synchronous crash signals. On the thread that is handling a crash it also keeps the watchdog's
// SIGALRM deliverable: libunwind blocks every signal around its own locks, and exactly then it
// may wait forever for the loader lock (the watchdog test reproduces this).
static const sigset_t *fl_without_crash_signals(int how, const sigset_t *set, sigset_t *copy) {
    if (!set || !atomic_load(&fl_state.started) || how == SIG_UNBLOCK) return set;
    *copy = *set;
    sigdelset(copy, SIGSEGV);
    sigdelset(copy, SIGBUS);
    sigdelset(copy, SIGILL);
    sigdelset(copy, SIGFPE);
    sigdelset(copy, SIGTRAP);
    pid_t handling = atomic_load(&fl_state.handling_thread);
    if (handling != 0 && handling == (pid_t)syscall(SYS_gettid)) sigdelset(copy, SIGALRM);
    return copy;
}

static fl_sigmask_fn fl_real_sigmask(const char *name, _Atomic(fl_sigmask_fn) *cache) {
    fl_sigmask_fn fn = atomic_load(cache);
    if (!fn) {
        fn = (fl_sigmask_fn)dlsym(RTLD_NEXT, name);
        atomic_store(cache, fn);
    }
    return fn;
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
    static _Atomic(fl_sigmask_fn) real;
    sigset_t copy;
    return fl_real_sigmask("pthread_sigmask", &real)(how, fl_without_crash_signals(how, set, &copy), old);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
    static _Atomic(fl_sigmask_fn) real;
    sigset_t copy;
    return fl_real_sigmask("sigprocmask", &real)(how, fl_without_crash_signals(how, set, &copy), old);
}
