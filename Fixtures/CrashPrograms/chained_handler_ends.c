// An app whose own SIGSEGV handler was installed before Faultline's (from a library's
// constructor: a DT_NEEDED library is initialised before the preloaded one), so Faultline chains
// to it; the app's handler then ends the process itself instead of returning. Three threads named
// `worker` wait meanwhile, then the main thread writes through a near-null pointer.
//
// Built twice: with -DAPP_HANDLER_LIBRARY -shared -fPIC as libapphandler.so (the handler), and
// as the program linked against it (-L. -lapphandler -Wl,--no-as-needed).
//
//   chained_handler_ends exit|abort   the app's handler calls exit(77) or abort()
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef APP_HANDLER_LIBRARY
static void app_handler(int signo, siginfo_t *info, void *context) {
    (void)signo, (void)info, (void)context;
    static const char line[] = "app handler: giving up\n";
    write(2, line, sizeof line - 1);
    const char *how = getenv("APP_HANDLER_ENDS");
    if (how && strcmp(how, "abort") == 0) abort();
    exit(77);
}

__attribute__((constructor)) static void install_app_handler(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = app_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
}

void app_handler_linked(void) {}
#else
void app_handler_linked(void);

static pthread_barrier_t started;

static void *worker(void *unused) {
    (void)unused;
    pthread_setname_np(pthread_self(), "worker");
    pthread_barrier_wait(&started);
    for (;;) pause();
    return NULL;
}

__attribute__((noinline)) static void fault_here(volatile int *p) { *p = 42; }

int main(int argc, char **argv) {
    app_handler_linked();
    if (argc > 1) setenv("APP_HANDLER_ENDS", argv[1], 1);
    pthread_barrier_init(&started, NULL, 4);
    for (int i = 0; i < 3; i++) {
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
    }
    pthread_barrier_wait(&started);
    fault_here((volatile int *)(uintptr_t)16);
    return 0;
}
#endif
