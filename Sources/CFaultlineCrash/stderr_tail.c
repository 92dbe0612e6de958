// The stderr tail: the last N bytes the process wrote to fd 2, kept for the crash report.
// Normal context: the stderr capture thread (Swift) appends what it reads from the capture pipe.
// Crash path: the handler copies the ring into a preallocated snapshot, re-checks how far the
// writer got (bytes it overwrote meanwhile are dropped from the front), then drains the pipe
// without blocking (what the crashing thread printed last has often not been read yet), appends
// those bytes to the capture file and forwards them to the original stderr so they are not lost,
// and writes it all as one JSON string.
#include "crash_internal.h"
#include "faultline_log_rings.h"
#include "log_rings_internal.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

fl_stderr_tail_state fl_tail;

int faultline_stderr_tail_configure(size_t capacity, int pipe_read_fd, int original_stderr_fd) {
    if (fl_tail.ring && capacity != fl_tail.capacity) return -1;  // sized once per process
    if (!fl_tail.ring && capacity) {
        void *p = mmap(NULL, capacity * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return -1;
        fl_tail.snapshot = (char *)p + capacity;
        fl_tail.capacity = capacity;
        atomic_store(&fl_tail.written, 0);
        atomic_store(&fl_tail.file_fd, -1);
        fl_tail.ring = p;  // last: the crash path checks it
    }
    fl_tail.original_fd = original_stderr_fd;
    atomic_store(&fl_tail.pipe_fd, pipe_read_fd);
    return 0;
}

void faultline_stderr_tail_detach_pipe(void) {
    atomic_store(&fl_tail.pipe_fd, -1);
    atomic_store(&fl_tail.file_fd, -1);
}

void faultline_stderr_tail_set_file(int fd) { atomic_store(&fl_tail.file_fd, fd); }

void faultline_stderr_tail_append(const void *bytes, size_t length) {
    if (!fl_tail.ring || !length) return;
    // `written` counts every byte of the stream (the report's total_bytes), also the ones of a
    // chunk larger than the ring that are never stored: only the chunk's last `capacity` bytes
    // are copied, at the ring positions their stream offsets map to.
    uint64_t w = atomic_load_explicit(&fl_tail.written, memory_order_relaxed);
    const char *b = bytes;
    size_t keep = length > fl_tail.capacity ? fl_tail.capacity : length;
    b += length - keep;
    size_t at = (size_t)((w + length - keep) % fl_tail.capacity);
    size_t first = fl_tail.capacity - at < keep ? fl_tail.capacity - at : keep;
    memcpy(fl_tail.ring + at, b, first);
    memcpy(fl_tail.ring, b + first, keep - first);
    atomic_store_explicit(&fl_tail.written, w + length, memory_order_release);
}

size_t faultline_stderr_tail_copy(char *out, size_t capacity) {
    if (!fl_tail.ring) return 0;
    uint64_t w = atomic_load_explicit(&fl_tail.written, memory_order_acquire);
    uint64_t keep = w < fl_tail.capacity ? w : fl_tail.capacity;
    if (keep > capacity) keep = capacity;
    return fl_stderr_tail_copy_range(out, w - keep, w);
}


int faultline_stderr_tail_begin_read(void) {
    atomic_store(&fl_tail.reading, 1);
    if (atomic_load(&fl_tail.crashing)) { atomic_store(&fl_tail.reading, 0); return 0; }
    return 1;
}

void faultline_stderr_tail_end_read(void) { atomic_store(&fl_tail.reading, 0); }
