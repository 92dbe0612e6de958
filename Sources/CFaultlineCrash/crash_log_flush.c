// Crash path of the log rings (log_rings.c, stderr_tail.c): append queued file-log lines to
// their files, and write the stderr tail into the report. Rules as in safe_io.h: no heap, no
// stdio, no locks; only write/read and raw syscalls.
#include "crash_internal.h"
#include "log_rings_internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

// Normal context or crash path: copies bytes [from, to) of the stream out of the ring.
size_t fl_stderr_tail_copy_range(char *out, uint64_t from, uint64_t to) {
    size_t n = 0;
    for (uint64_t k = from; k < to; k++) out[n++] = fl_tail.ring[k % fl_tail.capacity];
    return n;
}

// Runs on the crashing thread; compromised context. One writev per ring, no locks, no heap.
void fl_flush_log_rings(void) {
    for (int i = 0; i < FAULTLINE_LOG_RING_MAX; i++) {
        faultline_log_ring *r = atomic_load(&fl_rings[i]);
        if (!r) continue;
        int fd = atomic_load(&r->fd);
        if (fd < 0) continue;
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        size_t pending = (size_t)(head - tail);
        if (!pending) continue;
        size_t at = (size_t)(tail % r->capacity);
        size_t a = r->capacity - at < pending ? r->capacity - at : pending;
        struct iovec v[2] = {{r->bytes + at, a}, {r->bytes, pending - a}};
        ssize_t n;
        do { n = syscall(SYS_writev, fd, v, pending > a ? 2 : 1); } while (n < 0 && errno == EINTR);
        if (n > 0) atomic_fetch_add_explicit(&r->tail, (uint64_t)n, memory_order_release);
    }
}

// Normal context or crash path: see FL_LOG.
int fl_log_fd(void) {
    if (fl_tail.ring && atomic_load(&fl_tail.pipe_fd) >= 0) return fl_tail.original_fd;
    return 2;
}

// Runs on the crashing thread; compromised context.
// Runs on the crashing thread; compromised context.
static int fl_put_tail_snapshot(fl_writer *w) {
    fl_put(w, "\"stderr_tail\":{\"capacity\":");
    fl_put_u64(w, fl_tail.capacity);
    fl_put(w, ",\"total_bytes\":");
    fl_put_u64(w, fl_tail.snapshot_total);
    fl_put(w, ",\"text\":");
    fl_put_json_string_n(w, fl_tail.snapshot, fl_tail.snapshot_length);
    fl_put(w, "}");
    return 1;
}

// Runs on the crashing thread; compromised context.
void fl_stderr_tail_resume(void) {
    fl_tail.snapshot_taken = 0;
    atomic_store(&fl_tail.crashing, 0);
}

int fl_put_stderr_tail(fl_writer *w) {
    if (!fl_tail.ring) return 0;
    if (fl_tail.snapshot_taken) return fl_put_tail_snapshot(w);
    // Stop the capture thread from reading, and let a chunk it already read reach the ring
    // (bounded: 200 ms, in case the crashing thread is the capture thread itself).
    atomic_store(&fl_tail.crashing, 1);
    const int64_t deadline = fl_monotonic_ms() + 200;
    while (atomic_load(&fl_tail.reading) && fl_monotonic_ms() < deadline) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    size_t cap = fl_tail.capacity;
    uint64_t end = atomic_load_explicit(&fl_tail.written, memory_order_acquire);
    uint64_t start = end < cap ? 0 : end - cap;
    fl_stderr_tail_copy_range(fl_tail.snapshot, start, end);
    // The capture thread keeps running during the crash: drop what it overwrote while we copied.
    uint64_t now = atomic_load_explicit(&fl_tail.written, memory_order_acquire);
    uint64_t valid = now > cap ? now - cap : 0;
    size_t skip = valid > start ? (size_t)(valid - start) : 0;
    if (skip > (size_t)(end - start)) skip = (size_t)(end - start);
    size_t length = (size_t)(end - start) - skip;
    memmove(fl_tail.snapshot, fl_tail.snapshot + skip, length);

    // Bytes still in the pipe: read them (non-blocking), forward them, add them to the tail.
    uint64_t drained = 0;
    int fd = atomic_load(&fl_tail.pipe_fd);
    int file = atomic_load(&fl_tail.file_fd);
    char chunk[512];
    while (fd >= 0) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        drained += (uint64_t)n;
        // The file is not trimmed here (no locks in a handler): it may pass its cap by what the
        // pipe held (1 MiB at most); the next process's first write trims it.
        if (file >= 0) fl_write_all(file, chunk, (size_t)n);
        if (fl_tail.original_fd >= 0) fl_write_all(fl_tail.original_fd, chunk, (size_t)n);
        if ((size_t)n >= cap) { memcpy(fl_tail.snapshot, chunk + (size_t)n - cap, cap); length = cap; continue; }
        if (length + (size_t)n > cap) {
            size_t drop = length + (size_t)n - cap;
            memmove(fl_tail.snapshot, fl_tail.snapshot + drop, length - drop);
            length -= drop;
        }
        memcpy(fl_tail.snapshot + length, chunk, (size_t)n);
        length += (size_t)n;
    }
    fl_tail.snapshot_length = length;
    fl_tail.snapshot_total = now + drained;
    fl_tail.snapshot_taken = 1;
    return fl_put_tail_snapshot(w);
}
