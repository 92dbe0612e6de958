// Crashes at once (or after 100 ms with a trailing "late"), always from the same call site.
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static void parse_arguments(const char *how) {
    if (strcmp(how, "abort") == 0) abort();
    if (strcmp(how, "assert") == 0) assert(how[0] == 'x' && "a configuration file is required");
    if (strcmp(how, "null") == 0) *(volatile int *)(uintptr_t)(how[0] - 'n') = 1;
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[2], "late") == 0) usleep(100 * 1000);
    parse_arguments(argc > 1 ? argv[1] : "abort");
    return 0;
}
