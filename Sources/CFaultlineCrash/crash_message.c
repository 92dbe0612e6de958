// Where runtimes keep the sentence that says why a process is crashing (normal context).
//
// Three sources, each found once at start so the handler only copies bytes:
//   Swift   the runtime keeps the last fatal-error text ("file.swift:7: Fatal error: …") in a
//           buffer whose address swift_getFatalErrorMessageBuffer() returns — the hook the
//           toolchain's own backtracer reads (exported by libswiftCore since Swift 5.9; looked up
//           with dlsym, so C programs without Swift simply have none).
//   glibc   assert() and glibc's own aborts ("double free detected …") format their message into
//           __abort_msg (GLIBC_PRIVATE, `struct { unsigned size; char msg[]; } *`) before abort().
//   C++     the terminate handler (Sources/CFaultlineCxx) records the uncaught exception's type
//           and what() through faultline_crash_set_message, before the abort it leads to.
#include "crash_internal.h"
#include "faultline_crash.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

static pthread_mutex_t fl_message_writers = PTHREAD_MUTEX_INITIALIZER;

// Normal context (start).
void fl_find_crash_message_sources(void) {
    typedef char *const *(*fl_buffer_fn)(void);
    fl_buffer_fn swift_buffer = (fl_buffer_fn)dlsym(RTLD_DEFAULT, "swift_getFatalErrorMessageBuffer");
    if (swift_buffer) fl_state.swift_fatal_message = swift_buffer();
    void *abort_message = dlvsym(RTLD_DEFAULT, "__abort_msg", "GLIBC_PRIVATE");
    if (!abort_message) abort_message = dlsym(RTLD_DEFAULT, "__abort_msg");
    fl_state.glibc_abort_message = abort_message;
}

// Normal context: copies at most capacity-1 bytes, never cutting a UTF-8 sequence in two.
static void fl_copy_cut(char *out, size_t capacity, const char *in) {
    size_t n = in ? strlen(in) : 0;
    if (n >= capacity) {
        n = capacity - 1;
        while (n > 0 && ((unsigned char)in[n] & 0xC0) == 0x80) n--;  // back off a continuation byte
    }
    if (n) memcpy(out, in, n);
    out[n] = 0;
}

int faultline_crash_set_message(const char *source, const char *type, const char *text) {
    pthread_mutex_lock(&fl_message_writers);
    fl_message_slot *slot = &fl_state.message;
    atomic_fetch_add(&slot->sequence, 1);  // odd: being written
    fl_copy_cut(slot->source, sizeof slot->source, source);
    fl_copy_cut(slot->type, sizeof slot->type, type);
    fl_copy_cut(slot->text, sizeof slot->text, text);
    atomic_fetch_add(&slot->sequence, 1);  // even: complete
    pthread_mutex_unlock(&fl_message_writers);
    return 0;
}
