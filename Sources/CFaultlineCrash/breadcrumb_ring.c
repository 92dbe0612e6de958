// Breadcrumb ring and context (normal context). The SDK serialises each breadcrumb to JSON once,
// here, so the crash handler only has to copy bytes. Writers take a mutex among themselves; the
// handler never takes it and uses each slot's sequence number (a seqlock) instead.
#include "crash_internal.h"
#include "faultline_crash.h"

#include <pthread.h>
#include <string.h>

static pthread_mutex_t fl_ring_writers = PTHREAD_MUTEX_INITIALIZER;

int faultline_crash_add_breadcrumb(const char *json, size_t length) {
    if (length == 0 || length > sizeof fl_state.breadcrumbs[0].bytes) return -1;
    pthread_mutex_lock(&fl_ring_writers);
    uint64_t index = atomic_load(&fl_state.breadcrumb_next);
    fl_breadcrumb_slot *slot = &fl_state.breadcrumbs[index % 32];
    atomic_fetch_add(&slot->sequence, 1);  // odd: being written
    memcpy(slot->bytes, json, length);
    slot->length = (uint32_t)length;
    atomic_fetch_add(&slot->sequence, 1);  // even: complete
    atomic_store(&fl_state.breadcrumb_next, index + 1);
    pthread_mutex_unlock(&fl_ring_writers);
    return 0;
}

int faultline_crash_set_context(const char *json, size_t length) {
    if (length > sizeof fl_state.context[0]) return -1;
    pthread_mutex_lock(&fl_ring_writers);
    // Double buffer: fill the one the handler is not reading, then flip.
    int spare = 1 - atomic_load(&fl_state.context_current);
    memcpy(fl_state.context[spare], json, length);
    fl_state.context_length[spare] = (uint32_t)length;
    atomic_store(&fl_state.context_current, spare);
    pthread_mutex_unlock(&fl_ring_writers);
    return 0;
}
