// Crashes the way argv[1] says, for the core-file tests: null, abort, overflow, thread.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int read_through(volatile int *p) { return *p + 1; }

__attribute__((noinline)) static int null_dereference(void) { return read_through(NULL) * 2; }

__attribute__((noinline)) static void give_up(void) { abort(); }

__attribute__((noinline)) static int recurse(int depth) {
    volatile char frame[128];
    memset((char *)frame, depth & 0xff, sizeof frame);
    return recurse(depth + 1) + frame[depth % 128];
}

static void *worker(void *arg) {
    (void)arg;
    null_dereference();
    return NULL;
}

__attribute__((noinline)) static void crash_on_second_thread(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
}

int main(int argc, char **argv) {
    const char *how = argc > 1 ? argv[1] : "";
    if (strcmp(how, "null") == 0) return null_dereference();
    if (strcmp(how, "abort") == 0) give_up();
    if (strcmp(how, "overflow") == 0) return recurse(0);
    if (strcmp(how, "thread") == 0) crash_on_second_thread();
    fprintf(stderr, "usage: crash null|abort|overflow|thread\n");
    return 2;
}
