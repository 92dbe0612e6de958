// File-log rings (normal context to fill, crash path to drain). The SDK formats each line on the
// calling thread and copies it in here; a writer thread appends the bytes to the log file. If the
// process crashes first, the handler appends what is still queued, so lines logged just before a
// crash are on disk. Appenders share a mutex; the writer and the crash path never take it:
// `head` is published (release) only after a whole line is copied, and `tail` only moves forward
// after the bytes are written, so a crash may repeat a batch the writer was writing at that
// instant but never loses or tears one.
#include "crash_internal.h"
#include "faultline_crash.h"
#include "faultline_log_rings.h"
#include "log_rings_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

_Atomic(faultline_log_ring *) fl_rings[FAULTLINE_LOG_RING_MAX];

faultline_log_ring *faultline_log_ring_create(size_t capacity, int fd) {
    if (capacity < 4096) capacity = 4096;
    size_t size = sizeof(faultline_log_ring) + capacity;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    faultline_log_ring *r = p;
    pthread_mutex_init(&r->appenders, NULL);
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    atomic_init(&r->fd, fd);
    r->capacity = capacity;
    r->mapping = size;
    for (int i = 0; i < FAULTLINE_LOG_RING_MAX; i++) {
        faultline_log_ring *expected = NULL;
        if (atomic_compare_exchange_strong(&fl_rings[i], &expected, r)) break;
    }
    return r;
}

void faultline_log_ring_destroy(faultline_log_ring *r) {
    if (!r) return;
    for (int i = 0; i < FAULTLINE_LOG_RING_MAX; i++) {
        faultline_log_ring *expected = r;
        atomic_compare_exchange_strong(&fl_rings[i], &expected, NULL);
    }
    pthread_mutex_destroy(&r->appenders);
    munmap(r, r->mapping);
}

void faultline_log_ring_set_fd(faultline_log_ring *r, int fd) { atomic_store(&r->fd, fd); }

int faultline_log_ring_append(faultline_log_ring *r, const void *bytes, size_t length) {
    pthread_mutex_lock(&r->appenders);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (length > r->capacity - (size_t)(head - tail)) {
        pthread_mutex_unlock(&r->appenders);
        return -1;
    }
    size_t at = (size_t)(head % r->capacity);
    size_t first = r->capacity - at < length ? r->capacity - at : length;
    memcpy(r->bytes + at, bytes, first);
    memcpy(r->bytes, (const char *)bytes + first, length - first);
    atomic_store_explicit(&r->head, head + length, memory_order_release);
    pthread_mutex_unlock(&r->appenders);
    return 0;
}

size_t faultline_log_ring_peek(faultline_log_ring *r, const void **first, size_t *first_length,
                               const void **second, size_t *second_length) {
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    size_t pending = (size_t)(head - tail);
    size_t at = (size_t)(tail % r->capacity);
    size_t a = r->capacity - at < pending ? r->capacity - at : pending;
    *first = r->bytes + at;
    *first_length = a;
    *second = r->bytes;
    *second_length = pending - a;
    return pending;
}

void faultline_log_ring_consume(faultline_log_ring *r, size_t length) {
    atomic_fetch_add_explicit(&r->tail, length, memory_order_release);
}

size_t faultline_log_ring_pending(faultline_log_ring *r) {
    return (size_t)(atomic_load(&r->head) - atomic_load(&r->tail));
}


// The caller's kernel thread id, cached per thread: a syscall per log line would cost more than
// the rest of the line. A forked child's threads have new ids, so the cache is keyed by a fork
// generation that a pthread_atfork child handler bumps.
static _Atomic unsigned fl_fork_generation = 1;
static __thread long fl_cached_tid;
static __thread unsigned fl_cached_generation;
static pthread_once_t fl_atfork_once = PTHREAD_ONCE_INIT;
static void fl_after_fork_child(void) { atomic_fetch_add(&fl_fork_generation, 1); }
static void fl_register_atfork(void) { pthread_atfork(NULL, NULL, fl_after_fork_child); }

long faultline_log_thread_id(void) {
    unsigned generation = atomic_load_explicit(&fl_fork_generation, memory_order_relaxed);
    if (fl_cached_generation != generation) {
        pthread_once(&fl_atfork_once, fl_register_atfork);
        fl_cached_tid = faultline_current_thread_id();
        fl_cached_generation = generation;
    }
    return fl_cached_tid;
}
