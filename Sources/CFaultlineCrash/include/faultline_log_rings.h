// Byte rings the crash handler can drain: queued file-log lines and the stderr tail.
//
// Both are filled in normal context (by the Swift SDK) and only read by the crash handler, which
// never takes their locks. See docs/CRASH-REPORT.md ("stderr_tail") and the file log's design
// note in Sources/Faultline/Logging/Sinks/FileLog.swift.
#ifndef FAULTLINE_LOG_RINGS_H
#define FAULTLINE_LOG_RINGS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: File-log rings (lines queued for an asynchronous writer)

/// At most this many rings are registered for the crash-time flush at once.
#define FAULTLINE_LOG_RING_MAX 8

typedef struct faultline_log_ring faultline_log_ring;

/// Maps a ring of `capacity` bytes whose unwritten bytes a crash appends to `fd` (O_APPEND).
/// Returns NULL when mapping fails. A ring beyond FAULTLINE_LOG_RING_MAX still works but is not
/// flushed by a crash.
faultline_log_ring *faultline_log_ring_create(size_t capacity, int fd);
/// Unregisters and unmaps the ring (the caller has drained it).
void faultline_log_ring_destroy(faultline_log_ring *ring);
/// The descriptor a crash flush writes to (changes after the file is trimmed and reopened).
void faultline_log_ring_set_fd(faultline_log_ring *ring, int fd);
/// Copies one or more whole lines in. Returns 0, or -1 if there is not room for all of them
/// (nothing is copied; the caller drains the ring and writes the bytes itself). Thread-safe.
int faultline_log_ring_append(faultline_log_ring *ring, const void *bytes, size_t length);
/// The unwritten bytes as up to two spans (the second after the wrap). Single consumer.
size_t faultline_log_ring_peek(faultline_log_ring *ring, const void **first, size_t *first_length,
                               const void **second, size_t *second_length);
/// Marks `length` peeked bytes as written.
void faultline_log_ring_consume(faultline_log_ring *ring, size_t length);
/// Bytes queued and not yet written.
size_t faultline_log_ring_pending(faultline_log_ring *ring);

/// The caller's kernel thread id (what log lines record), cached per thread and fork-safe.
long faultline_log_thread_id(void);

// MARK: stderr tail (the last bytes the process wrote to fd 2)

/// Prepares a tail of `capacity` bytes (0 turns it off) and the descriptors a crash uses:
/// `pipe_read_fd` is the non-blocking read end of the capture pipe (a crash drains what the
/// capture thread has not read yet), `original_stderr_fd` is where those bytes are forwarded
/// (-1: nowhere). Call before the capture thread starts. Returns 0 or -1.
int faultline_stderr_tail_configure(size_t capacity, int pipe_read_fd, int original_stderr_fd);
/// Appends bytes read from the pipe. Only the capture thread calls it.
void faultline_stderr_tail_append(const void *bytes, size_t length);
/// The capture thread calls this before each read(2) of the pipe: 0 means a crash is being
/// handled and it must not read (the crash path drains the pipe). Pair with _end_read, called
/// once the bytes are in the tail, in the file and forwarded: a crash waits (200 ms at most) for
/// that, so the file and the original stderr get the bytes it drains after the ones the thread read.
int faultline_stderr_tail_begin_read(void);
void faultline_stderr_tail_end_read(void);
/// Copies the current tail (oldest first) into `out`; returns its length. For tests and tools.
size_t faultline_stderr_tail_copy(char *out, size_t capacity);
/// Stops the crash path from reading the pipe and appending to the file (the capture is being
/// torn down, or this is a forked child that does not own the capture).
void faultline_stderr_tail_detach_pipe(void);
/// The capture file's current descriptor (O_APPEND; it changes when a trim reopens the file),
/// where a crash appends the bytes it drains from the pipe. -1: none.
void faultline_stderr_tail_set_file(int fd);

#ifdef __cplusplus
}
#endif
#endif
