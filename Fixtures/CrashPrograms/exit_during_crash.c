// A worker thread faults while the main thread is on its way out through exit(): without a crash
// handler the fault kills the process at once, by SIGSEGV. With one, the main thread calls exit
// once the handler has begun its report (a file has appeared in the crash directory), so exit
// races the report every time.
//
//   exit_during_crash CRASH_DIRECTORY
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void fault_here(volatile int *p) { *p = 42; }

static void *worker(void *unused) {
    (void)unused;
    fault_here((volatile int *)(uintptr_t)16);
    return NULL;
}

static int has_an_entry(const char *path) {
    DIR *d = opendir(path);
    if (!d) return 0;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) found = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return found;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    while (!has_an_entry(argv[1])) sched_yield();
    exit(0);
}
