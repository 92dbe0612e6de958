// An app that sets its own small alternate signal stack (as language runtimes do for their own
// stack-overflow detection), then crashes: own_altstack SIZE overflow|fault main|thread [signals]
//
// own_altstack SIZE beside: a thread with its own small alternate stack waits (named "small-stack")
// while the main thread aborts; the crash asks that thread for its stack too.
//
// With "signals", another thread sends the crashing thread an app signal (SIGUSR1) as fast as it
// can, before and while it crashes: a signal arriving just as the crash handler is entered would
// nest on the small alternate stack. Its handler runs on the alternate stack too (SA_ONSTACK), so
// that near the end of an overflow its frame still finds room, and the overflow stays a fault on
// the guard page rather than a signal frame the kernel could not push.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static size_t altstack_size;
static _Atomic pid_t crashing_thread;
static _Atomic long signals_received;

static void count_signal(int signo) {
    (void)signo;
    atomic_fetch_add(&signals_received, 1);
}

static void *send_signals(void *unused) {
    (void)unused;
    pid_t target;
    while (!(target = atomic_load(&crashing_thread))) sched_yield();
    for (;;) syscall(SYS_tgkill, getpid(), target, SIGUSR1);
    return NULL;
}

// On the thread about to crash: the sender aims at it, and the crash waits until signals arrive.
static void start_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = count_signal;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t sender;
    pthread_create(&sender, NULL, send_signals, NULL);
    atomic_store(&crashing_thread, (pid_t)syscall(SYS_gettid));
    while (atomic_load(&signals_received) < 100) sched_yield();
}

static void install_own_altstack(void) {
    stack_t ss = {.ss_sp = malloc(altstack_size), .ss_size = altstack_size, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        perror("sigaltstack");
        exit(3);
    }
}

__attribute__((noinline)) static int recurse_forever(volatile int depth) {
    volatile char frame[512];
    frame[0] = (char)depth;
    return recurse_forever(depth + 1) + frame[0];
}

__attribute__((noinline)) static void write_through_null(void) { *(volatile int *)16 = 1; }

static int with_signals;

static void crash(const char *how) {
    if (with_signals) start_signals();
    if (strcmp(how, "overflow") == 0) recurse_forever(0);
    write_through_null();
}

static void *worker(void *how) {
    install_own_altstack();
    crash(how);
    return NULL;
}

static _Atomic int bystander_ready;

__attribute__((noinline)) static void wait_with_small_altstack(void) {
    atomic_store(&bystander_ready, 1);
    for (;;) pause();
}

static void *bystander(void *unused) {
    (void)unused;
    pthread_setname_np(pthread_self(), "small-stack");
    install_own_altstack();
    wait_with_small_altstack();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[2], "beside") == 0) {
        altstack_size = strtoul(argv[1], NULL, 0);
        pthread_t t;
        pthread_create(&t, NULL, bystander, NULL);
        while (!atomic_load(&bystander_ready)) sched_yield();
        abort();
    }
    if (argc < 4) return 2;
    altstack_size = strtoul(argv[1], NULL, 0);
    with_signals = argc > 4 && strcmp(argv[4], "signals") == 0;
    if (strcmp(argv[3], "thread") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, worker, argv[2]);
        pthread_join(t, NULL);
    } else {
        install_own_altstack();
        crash(argv[2]);
    }
    return 0;
}
