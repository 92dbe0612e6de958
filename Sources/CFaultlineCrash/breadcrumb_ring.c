// Breadcrumb ring and context (normal context). A slot holds one breadcrumb: JSON
// (faultline_crash_add_breadcrumb) or the SDK's binary record, written straight into the slot
// (reserve/commit), so the crash handler only has to copy bytes. Writers take a mutex among themselves; the
// handler never takes it and uses each slot's sequence number (a seqlock) instead.
#include "crash_internal.h"
#include "faultline_crash.h"

#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t fl_ring_writers = PTHREAD_MUTEX_INITIALIZER;

// The ring is written whether or not the crash core was started (Log.* before start, or with
// crash capture off), so it registers its own fork handler on first use rather than in start.
static pthread_once_t fl_ring_atfork_once = PTHREAD_ONCE_INIT;
static void fl_ring_register_atfork(void) { pthread_atfork(NULL, NULL, fl_breadcrumb_ring_after_fork); }

static void fl_ring_lock(void) {
    pthread_once(&fl_ring_atfork_once, fl_ring_register_atfork);
    pthread_mutex_lock(&fl_ring_writers);
}

int faultline_crash_add_breadcrumb(const char *json, size_t length) {
    if (length == 0 || length > sizeof fl_state.breadcrumbs[0].bytes) return -1;
    if ((unsigned char)json[0] == FL_BREADCRUMB_RECORD_MAGIC) return -1;  // not JSON; would pass for a record
    fl_ring_lock();
    uint64_t index = atomic_load(&fl_state.breadcrumb_next);
    fl_breadcrumb_slot *slot = &fl_state.breadcrumbs[index % FAULTLINE_BREADCRUMB_SLOTS];
    atomic_fetch_add(&slot->sequence, 1);  // odd: being written
    memcpy(slot->bytes, json, length);
    slot->length = (uint32_t)length;
    atomic_fetch_add(&slot->sequence, 1);  // even: complete
    atomic_store(&fl_state.breadcrumb_next, index + 1);
    pthread_mutex_unlock(&fl_ring_writers);
    return 0;
}

char *faultline_crash_reserve_breadcrumb(void) {
    fl_ring_lock();
    uint64_t index = atomic_load(&fl_state.breadcrumb_next);
    fl_breadcrumb_slot *slot = &fl_state.breadcrumbs[index % FAULTLINE_BREADCRUMB_SLOTS];
    atomic_fetch_add(&slot->sequence, 1);  // odd: being written (it held the oldest breadcrumb)
    return slot->bytes;
}

void faultline_crash_commit_breadcrumb(size_t length) {
    uint64_t index = atomic_load(&fl_state.breadcrumb_next);
    fl_breadcrumb_slot *slot = &fl_state.breadcrumbs[index % FAULTLINE_BREADCRUMB_SLOTS];
    int keep = length > 0 && length <= sizeof slot->bytes;
    slot->length = keep ? (uint32_t)length : 0;  // 0: the slot is empty until the next breadcrumb
    atomic_fetch_add(&slot->sequence, 1);  // even: complete
    if (keep) atomic_store(&fl_state.breadcrumb_next, index + 1);
    pthread_mutex_unlock(&fl_ring_writers);
}

// Normal context, in a forked child (the ring's own atfork handler): a thread of the parent may have
// been between reserve and commit when another forked, so the child's copy of the mutex can be
// held by a thread that does not exist there. The child is single-threaded now: a fresh mutex,
// and a slot left half-written is emptied (even sequence, no length).
void fl_breadcrumb_ring_after_fork(void) {
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    fl_ring_writers = fresh;
    uint64_t index = atomic_load(&fl_state.breadcrumb_next);
    fl_breadcrumb_slot *slot = &fl_state.breadcrumbs[index % FAULTLINE_BREADCRUMB_SLOTS];
    if (atomic_load(&slot->sequence) & 1) {
        slot->length = 0;
        atomic_fetch_add(&slot->sequence, 1);
    }
}

size_t faultline_crash_copy_breadcrumb(size_t age, char *out, size_t capacity) {
    fl_ring_lock();
    uint64_t next = atomic_load(&fl_state.breadcrumb_next);
    size_t length = 0;
    if (age < FAULTLINE_BREADCRUMB_SLOTS && age < next) {
        fl_breadcrumb_slot *slot = &fl_state.breadcrumbs[(next - 1 - age) % FAULTLINE_BREADCRUMB_SLOTS];
        if (slot->length <= capacity) {
            length = slot->length;
            memcpy(out, slot->bytes, length);
        }
    }
    pthread_mutex_unlock(&fl_ring_writers);
    return length;
}

// Normal context. While another thread's crash is being reported, context writers wait: a
// writer replacing the context in a tight loop (spans will, per thread) could otherwise tear every
// copy the handler attempts. The wait ends when the process dies, or in a millisecond or so when
// the fault turns out to be recovered; the crashing thread itself never waits here.
static void fl_wait_while_a_crash_is_reported(void) {
    pid_t self = (pid_t)syscall(SYS_gettid);
    struct timespec pause = {0, 200 * 1000};
    for (;;) {
        pid_t holder = atomic_load(&fl_state.handling_thread);
        if (holder == 0 || holder == self || fl_claim_holder_is_gone(holder)) return;
        nanosleep(&pause, NULL);
    }
}

int faultline_crash_set_context(const char *json, size_t length) {
    if (length > FAULTLINE_CONTEXT_MAX_BYTES) return -1;
    fl_wait_while_a_crash_is_reported();
    fl_ring_lock();
    // Double buffer: fill the one the handler is not reading, then flip. The handler may still be
    // copying the spare one (picked before the last flip) when we set the context twice in a row;
    // its sequence, odd while we write, tells it the copy is torn and to read again.
    int spare = 1 - atomic_load(&fl_state.context_current);
    fl_context_buffer *buffer = &fl_state.context[spare];
    atomic_fetch_add(&buffer->sequence, 1);  // odd: being written
    memcpy(buffer->bytes, json, length);
    buffer->length = (uint32_t)length;
    atomic_fetch_add(&buffer->sequence, 1);  // even: complete
    atomic_store(&fl_state.context_current, spare);
    pthread_mutex_unlock(&fl_ring_writers);
    return 0;
}
