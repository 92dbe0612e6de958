// Crashes at once (or after 100 ms with a trailing "late"), always from the same call site.
#include <cstdint>
#include <cstring>
#include <unistd.h>
#include <vector>

__attribute__((noinline)) static int load_settings(const char *how) {
    std::vector<int> slots(2);
    if (std::strcmp(how, "throw") == 0) return slots.at(7);
    if (std::strcmp(how, "null") == 0) *(volatile int *)(uintptr_t)(how[0] - 'n') = 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && std::strcmp(argv[2], "late") == 0) usleep(100 * 1000);
    return load_settings(argc > 1 ? argv[1] : "throw");
}
