// Loads COUNT copies of one small library (DIR/libplugin-N.so, N = 1…COUNT, each its own module)
// and then crashes inside the first one loaded: many_libraries DIR COUNT. Modules are listed in
// address order and later loads take lower addresses, so the crashing copy and libc come after
// the others in /proc/self/maps.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    int count = atoi(argv[2]);
    void (*first)(void) = NULL;
    for (int i = 1; i <= count; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/libplugin-%d.so", argv[1], i);
        void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!library) {
            fprintf(stderr, "%s\n", dlerror());
            return 3;
        }
        if (i == 1) first = (void (*)(void))dlsym(library, "plugin_crash");
    }
    first();
    return 0;
}
