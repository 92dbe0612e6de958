// An app whose SIGSEGV handler, installed after Faultline's, calls the handler it replaced as a
// plain function after its own report, then aborts: what Ruby's VM does ("[BUG] Segmentation
// fault", then the old handler as f(signo), then abort()). The old handler's siginfo and context
// arguments are then whatever the registers hold.
//
//   plain_call_chain null|garbage|none
//     null     passes NULL for both (f(signo, NULL, NULL))
//     garbage  passes small non-pointers, as Ruby's registers held (0x1, 0x128)
//     none     installs no handler of its own (the same fault, for comparison)
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct sigaction replaced;
static const char *how;

__attribute__((noinline)) static void call_replaced(int signo) {
    typedef void (*three)(int, void *, void *);
    if (replaced.sa_handler == SIG_DFL || replaced.sa_handler == SIG_IGN) return;
    if (strcmp(how, "null") == 0) ((three)replaced.sa_sigaction)(signo, NULL, NULL);
    else ((three)replaced.sa_sigaction)(signo, (void *)(uintptr_t)0x1, (void *)(uintptr_t)0x128);
}

static void app_handler(int signo, siginfo_t *info, void *context) {
    (void)info, (void)context;
    static const char bug[] = "[BUG] Segmentation fault\n";
    write(2, bug, sizeof bug - 1);
    call_replaced(signo);
    abort();
}

__attribute__((noinline)) static void fault_here(volatile int *p) { *p = 42; }

int main(int argc, char **argv) {
    how = argc > 1 ? argv[1] : "none";
    if (strcmp(how, "none") != 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = app_handler;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, &replaced);
    }
    fault_here((volatile int *)(uintptr_t)(argc > 100 ? argc : 0));  // a null write the compiler cannot see
    return 0;
}
