// An app whose runtime installs a handler for every signal after Faultline's (as Go's does), the
// real-time signal Faultline asks other threads for their stacks with included, and ignores what
// it does not expect; then three threads wait ("waiter") and the main thread writes through null.
//
//   takes_every_signal
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static void ignore_it(int signo, siginfo_t *info, void *context) { (void)signo, (void)info, (void)context; }

__attribute__((noinline)) static void wait_in_worker(void) {
    for (;;) pause();
}

// The main thread faults only once every waiter runs: a thread still inside pthread_create's
// start-up has every signal blocked, and would be reported as one that blocks them.
static pthread_barrier_t started;

static void *waiter(void *unused) {
    (void)unused;
    pthread_setname_np(pthread_self(), "waiter");
    pthread_barrier_wait(&started);
    wait_in_worker();
    return NULL;
}

__attribute__((noinline)) static void fault_here(volatile int *p) { *p = 42; }

int main(int argc, char **argv) {
    (void)argv;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = ignore_it;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++) sigaction(s, &sa, NULL);
    pthread_t t;
    pthread_barrier_init(&started, NULL, 4);
    for (int i = 0; i < 3; i++) pthread_create(&t, NULL, waiter, NULL);
    pthread_barrier_wait(&started);
    fault_here((volatile int *)(uintptr_t)(argc > 100 ? argc : 0));
    return 0;
}
