// Prints how many threads the process has when main begins (its /proc/self/status line), and
// with "unshare", whether it may then enter a new user namespace (the kernel allows that only to a
// single-threaded process): "unshare ok" or "unshare failed: <reason>".
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, "Threads:", 8) == 0) fputs(line, stdout);
    if (argc > 1 && strcmp(argv[1], "unshare") == 0) {
        if (unshare(CLONE_NEWUSER) == 0) puts("unshare ok");
        else printf("unshare failed: %s\n", strerror(errno));
    }
    return 0;
}
