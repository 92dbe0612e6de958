// Crash-path entry points of log_rings.c and stderr_tail.c (see faultline_log_rings.h).
#ifndef FAULTLINE_LOG_RINGS_INTERNAL_H
#define FAULTLINE_LOG_RINGS_INTERNAL_H

#include "faultline_log_rings.h"
#include "safe_io.h"

#include <pthread.h>
#include <stdatomic.h>

#pragma GCC visibility push(hidden)

struct faultline_log_ring {
    pthread_mutex_t appenders;
    _Atomic uint64_t head;   // total bytes ever appended
    _Atomic uint64_t tail;   // total bytes ever written to the file
    _Atomic int fd;
    size_t capacity;
    size_t mapping;
    char bytes[];
};

extern _Atomic(faultline_log_ring *) fl_rings[FAULTLINE_LOG_RING_MAX];

typedef struct {
    char *ring;          // capacity bytes
    char *snapshot;      // capacity bytes, the crash path's copy
    size_t capacity;
    _Atomic uint64_t written;  // total bytes ever appended
    _Atomic int pipe_fd;
    _Atomic int file_fd;   // the capture file (O_APPEND): a crash appends the bytes it drains
    int original_fd;
    _Atomic int reading;   // the capture thread holds bytes it read but has not appended yet
    _Atomic int crashing;  // set by the crash path: the capture thread stops reading
    // The tail as the first report of this crash took it: the report is written again (with every
    // thread) once other threads are parked — the capture thread among them, so it is not asked
    // for its bytes a second time.
    int snapshot_taken;
    size_t snapshot_length;
    uint64_t snapshot_total;
} fl_stderr_tail_state;
extern fl_stderr_tail_state fl_tail;

/// Copies bytes [from, to) of the stderr stream out of the ring (normal context or crash path).
size_t fl_stderr_tail_copy_range(char *out, uint64_t from, uint64_t to);


/// Runs on the crashing thread; compromised context. Appends every registered ring's unwritten
/// lines to its file.
void fl_flush_log_rings(void);
/// Runs on the crashing thread; compromised context. Writes `"stderr_tail":{…}` (no comma) or
/// nothing when capture is off; returns 1 if it wrote the member.
int fl_put_stderr_tail(fl_writer *w);
/// Runs on the crashing thread; compromised context. The fault was recovered: the capture
/// thread reads again, and the next crash takes a fresh tail.
void fl_stderr_tail_resume(void);

#pragma GCC visibility pop
#endif
