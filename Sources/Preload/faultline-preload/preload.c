// Starts the crash handler inside an unmodified program (normal context, library constructor).
//
//   LD_PRELOAD=/path/to/libFaultlinePreload.so FAULTLINE_CRASH_DIR=/var/crash/myapp ./program
//
// Optional: FAULTLINE_RELEASE, FAULTLINE_ENVIRONMENT, FAULTLINE_SERVICE become the report's
// context. The constructor runs after libswiftCore's (so Swift's backtracer, if any, is already
// installed and we chain to it) and before the program's main.
#include "faultline_preload.h"
#include "faultline_crash.h"

#include <dlfcn.h>
#include <limits.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t append_json_field(char *out, size_t used, size_t cap, const char *key, const char *value) {
    if (!value || !*value) return used;
    int wrote = snprintf(out + used, cap - used, "%s\"%s\":\"", used > 1 ? "," : "", key);
    if (wrote < 0 || (size_t)wrote >= cap - used) return used;
    size_t n = used + (size_t)wrote;
    for (const char *p = value; *p && n + 8 < cap; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\') { out[n++] = '\\'; out[n++] = (char)c; }
        else if (c < 0x20) n += (size_t)snprintf(out + n, cap - n, "\\u%04x", c);
        else out[n++] = (char)c;
    }
    if (n + 1 >= cap) return used;
    out[n++] = '"';
    out[n] = 0;
    return n;
}

int faultline_preload_start_from_environment(void) {
    const char *dir = getenv("FAULTLINE_CRASH_DIR");
    if (!dir || !*dir) {
        fprintf(stderr, "faultline: FAULTLINE_CRASH_DIR is not set; crash handler not installed\n");
        return -1;
    }
    char error[512];
    // In place: an unmodified program must start as it would without us, single-threaded.
    if (faultline_crash_start_in_place(dir, error, sizeof error) != 0) {
        fprintf(stderr, "faultline: crash handler not installed: %s\n", error);
        return -1;
    }
    char context[2048] = "{";
    size_t used = 1;
    used = append_json_field(context, used, sizeof context - 2, "release", getenv("FAULTLINE_RELEASE"));
    used = append_json_field(context, used, sizeof context - 2, "environment", getenv("FAULTLINE_ENVIRONMENT"));
    used = append_json_field(context, used, sizeof context - 2, "service", getenv("FAULTLINE_SERVICE"));
    context[used++] = '}';
    context[used] = 0;
    faultline_crash_set_context(context, used);
    return 0;
}

// Normal context. In a program that uses libstdc++ (std::set_terminate is already loaded), load
// the terminate handler built beside this library, so an uncaught exception's type and what()
// reach the report. A C program is left without a C++ runtime.
static void faultline_preload_cxx_terminate_handler(void) {
    if (!dlsym(RTLD_DEFAULT, "_ZSt13set_terminatePFvvE")) return;
    Dl_info self;
    if (!dladdr((void *)faultline_preload_cxx_terminate_handler, &self) || !self.dli_fname) return;
    char path[PATH_MAX];
    const char *slash = strrchr(self.dli_fname, '/');
    size_t dir = slash ? (size_t)(slash - self.dli_fname + 1) : 0;
    if (dir + sizeof "libfaultline-preload-cxx.so" > sizeof path) return;
    memcpy(path, self.dli_fname, dir);
    memcpy(path + dir, "libfaultline-preload-cxx.so", sizeof "libfaultline-preload-cxx.so");
    void *cxx = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!cxx) {
        fprintf(stderr, "faultline: C++ exception messages unavailable: %s\n", dlerror());
        return;
    }
    void (*install)(void) = (void (*)(void))dlsym(cxx, "faultline_install_terminate_handler");
    if (install) install();
}

__attribute__((constructor)) static void faultline_preload_constructor(void) {
    if (faultline_preload_start_from_environment() == 0) faultline_preload_cxx_terminate_handler();
}
