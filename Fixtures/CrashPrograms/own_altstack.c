// An app that sets its own small alternate signal stack (as language runtimes do for their own
// stack-overflow detection), then crashes: own_altstack SIZE overflow|fault main|thread
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t altstack_size;

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

static void crash(const char *how) {
    if (strcmp(how, "overflow") == 0) recurse_forever(0);
    write_through_null();
}

static void *worker(void *how) {
    install_own_altstack();
    crash(how);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    altstack_size = strtoul(argv[1], NULL, 0);
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
