// An unmodified-style C program that crashes and asks Crashpad's own handler for a minidump, the
// way CrashpadClient::StartHandlerAtCrash does: the signal handler fills an ExceptionInformation,
// forks, lets the child trace it (PR_SET_PTRACER) and the child execs
//   crashpad_handler --database=DIR [--url=URL] --trace-parent-with-exception=<address>
// Two extra threads (named "waiter") wait in known functions, so a dump holds three threads.
//   crashpad_at_crash HANDLER DATABASE [URL|-] [segv|abort|nullcall] [HANDLER-ARGUMENT…]
// (nullcall: a call through a null function pointer, so the crash's pc is 0)
// (further arguments go to the handler, e.g. --annotation=KEY=VALUE).
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

// Crashpad's ExceptionInformation (util/linux/exception_information.h).
struct exception_information {
    uint64_t siginfo_address;
    uint64_t context_address;
    pid_t thread_id;
};

static const char *handler_path, *database_path, *upload_url;
static struct exception_information info;
static char database_argument[4096], url_argument[4096], address_argument[64];
static char **extra_arguments;
static int extra_count;
static volatile int threads_ready;

// Runs in the crashed process's signal handler: only fork, pipe, prctl, execv, waitpid.
static void at_crash(int signo, siginfo_t *siginfo, void *context) {
    info.siginfo_address = (uint64_t)(uintptr_t)siginfo;
    info.context_address = (uint64_t)(uintptr_t)context;
    info.thread_id = (pid_t)syscall(SYS_gettid);
    int go[2];
    if (pipe(go) != 0) _exit(120);
    pid_t child = fork();
    if (child == 0) {
        // Wait until the parent has allowed this child to trace it, then become the handler.
        char byte;
        close(go[1]);
        if (read(go[0], &byte, 1) != 1) _exit(121);
        char *argv[5 + 16];
        int n = 0;
        argv[n++] = (char *)handler_path;
        argv[n++] = database_argument;
        if (upload_url) argv[n++] = url_argument;
        argv[n++] = address_argument;
        for (int i = 0; i < extra_count && i < 16; i++) argv[n++] = extra_arguments[i];
        argv[n] = NULL;
        execv(handler_path, argv);
        _exit(122);
    }
    close(go[0]);
    prctl(PR_SET_PTRACER, child, 0, 0, 0);
    (void)write(go[1], "g", 1);
    close(go[1]);
    int status;
    while (waitpid(child, &status, 0) < 0) {}
    // Back to the default action: returning re-executes the fault, raise() ends an abort.
    signal(signo, SIG_DFL);
    if (signo != SIGSEGV) raise(signo);
}

__attribute__((noinline)) static void wait_in_worker(void) {
    __atomic_add_fetch(&threads_ready, 1, __ATOMIC_SEQ_CST);
    for (;;) pause();
}

static void *worker(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "waiter");
    wait_in_worker();
    return NULL;
}

static void (*volatile null_function)(void);

__attribute__((noinline)) void crash_here(int how) {
    if (how == 1) abort();
    if (how == 2) null_function();
    *(volatile int *)(uintptr_t)16 = 42;
}

__attribute__((noinline)) void caller(int how) {
    crash_here(how);
    __asm__ volatile("" ::: "memory");  // keeps the call from being a tail call
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s HANDLER DATABASE [URL|-] [segv|abort|nullcall] [HANDLER-ARGUMENT...]\n", argv[0]);
        return 2;
    }
    handler_path = argv[1];
    database_path = argv[2];
    upload_url = argc > 3 && strcmp(argv[3], "-") != 0 ? argv[3] : NULL;
    int how = 0;
    if (argc > 4 && strcmp(argv[4], "abort") == 0) how = 1;
    if (argc > 4 && strcmp(argv[4], "nullcall") == 0) how = 2;
    if (argc > 5) {
        extra_arguments = argv + 5;
        extra_count = argc - 5;
    }
    snprintf(database_argument, sizeof database_argument, "--database=%s", database_path);
    if (upload_url) snprintf(url_argument, sizeof url_argument, "--url=%s", upload_url);
    snprintf(address_argument, sizeof address_argument, "--trace-parent-with-exception=0x%llx",
             (unsigned long long)(uintptr_t)&info);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = at_crash;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);

    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
    while (__atomic_load_n(&threads_ready, __ATOMIC_SEQ_CST) < 2) sched_yield();
    caller(how);
    return 0;
}
