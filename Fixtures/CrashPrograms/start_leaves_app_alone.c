// Links the crash core and starts it the way the Swift SDK does (its preparation on a thread of
// its own, held open here for a second), then checks that starting changed nothing the app sees:
//   signals   the main thread blocks SIGTERM, sends it to the process and takes it with sigwait
//             (a daemon's shutdown); then a SIGUSR2 sent to the process runs its handler on the
//             main thread, the only one that is the app's. Prints "sigwait 15" and "handler on main".
//   waits     two threads wait in nanosleep and epoll_wait when start comes (started before it);
//             prints how each wait ended ("slept", "timed out") — never "Interrupted system call".
#define _GNU_SOURCE
#include "faultline_crash.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic pid_t handler_thread;

static void note_handler_thread(int signo) {
    (void)signo;
    atomic_store(&handler_thread, (pid_t)syscall(SYS_gettid));
}

static int signals(const char *crash_directory) {
    char error[256];
    faultline_crash_delay_preparation_for_testing(1000);  // start's thread lives meanwhile
    if (faultline_crash_start(crash_directory, error, sizeof error) != 0) {
        fprintf(stderr, "start: %s\n", error);
        return 2;
    }
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, NULL);
    kill(getpid(), SIGTERM);
    int received = 0;
    sigwait(&term, &received);
    printf("sigwait %d\n", received);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = note_handler_thread;
    sigaction(SIGUSR2, &sa, NULL);
    kill(getpid(), SIGUSR2);
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += 10;
    for (;;) {
        if (atomic_load(&handler_thread)) break;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > deadline.tv_sec) break;
        sched_yield();
    }
    pid_t where = atomic_load(&handler_thread);
    printf("handler on %s\n", where == getpid() ? "main" : where ? "another thread" : "no thread");
    fflush(stdout);
    return 0;
}

static _Atomic pid_t waiting_threads[2];

// Whether thread `tid` is blocked in a system call now (/proc/self/task/TID/syscall starts with
// its number then; "running" otherwise).
static int blocked_in_a_call(pid_t tid) {
    char path[64], text[32] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    return n > 0 && text[0] >= '0' && text[0] <= '9';
}

static void *sleeper(void *unused) {
    (void)unused;
    atomic_store(&waiting_threads[0], (pid_t)syscall(SYS_gettid));
    struct timespec second = {1, 0};
    int r = nanosleep(&second, NULL);
    printf("nanosleep %s\n", r == 0 ? "slept" : strerror(errno));
    return NULL;
}

static void *poller(void *unused) {
    (void)unused;
    atomic_store(&waiting_threads[1], (pid_t)syscall(SYS_gettid));
    int ep = epoll_create1(0);
    struct epoll_event event;
    int r = epoll_wait(ep, &event, 1, 1000);
    printf("epoll_wait %s\n", r == 0 ? "timed out" : r < 0 ? strerror(errno) : "an event");
    return NULL;
}

static int waits(const char *crash_directory) {
    pthread_t a, b;
    pthread_create(&a, NULL, sleeper, NULL);
    pthread_create(&b, NULL, poller, NULL);
    // Both in their waits before start (each wait is a second long).
    for (int i = 0; i < 2; i++)
        while (!atomic_load(&waiting_threads[i]) || !blocked_in_a_call(atomic_load(&waiting_threads[i]))) sched_yield();
    char error[256];
    if (faultline_crash_start(crash_directory, error, sizeof error) != 0) {
        fprintf(stderr, "start: %s\n", error);
        return 2;
    }
    faultline_crash_wait_for_preparation(5000);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    if (strcmp(argv[1], "signals") == 0) return signals(argv[2]);
    if (strcmp(argv[1], "waits") == 0) return waits(argv[2]);
    return 2;
}
