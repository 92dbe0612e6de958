/* Crashes the way the first argument says; built for aarch64 at test time (Aarch64CrashTests). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
void library_fault(volatile int *where);
__attribute__((noinline)) void null_write(volatile int *where) { *where = 1; }
__attribute__((noinline)) int recurse(volatile char *previous) {
    volatile char frame[512];
    frame[0] = previous ? previous[0] + 1 : 0;
    return recurse(frame) + frame[1];
}
static void *overflow_thread(void *arg) { (void)arg; recurse(0); return 0; }
static void *sleeper(void *arg) { (void)arg; for (;;) sleep(100); return 0; }
int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "null")) null_write((volatile int *)16);
    if (!strcmp(mode, "abort")) abort();
    if (!strcmp(mode, "overflow-main")) recurse(0);
    if (!strcmp(mode, "library")) library_fault((volatile int *)32);
    if (!strcmp(mode, "overflow-thread") || !strcmp(mode, "threads")) {
        pthread_t t;
        int sleepers = !strcmp(mode, "threads") ? 3 : 0;
        for (int i = 0; i < sleepers; i++) pthread_create(&t, 0, sleeper, 0);
        if (!sleepers) {
            pthread_create(&t, 0, overflow_thread, 0);
            pthread_join(t, 0);
        }
        usleep(100000);
        null_write((volatile int *)16);
    }
    return 2;
}
