// Async-signal-safe output: EINTR-safe writes, number formatting without printf, JSON escaping.
// Rules for everything declared here (signal-safety(7)): no heap, no stdio, no locks, errno
// preserved by the callers that need it.
#ifndef FAULTLINE_SAFE_IO_H
#define FAULTLINE_SAFE_IO_H


#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

// Internal to the crash core: not exported from the preload library or the app.
#pragma GCC visibility push(hidden)

/// Writes a string literal to stderr with one write(2). Only literals: no formatting in a handler.
/// Goes to fl_log_fd(), not fd 2: while stderr is captured, fd 2 is a pipe that nobody reads
/// during a crash, and a write to a full pipe would block the handler for good.
#define FL_LOG(literal) fl_write_all(fl_log_fd(), "faultline: " literal "\n", sizeof("faultline: " literal "\n") - 1)

/// Where the crash core's own messages go: the original stderr while stderr is captured (-1 if
/// it was closed), else fd 2. Normal context or crash path (crash_log_flush.c).
int fl_log_fd(void);

/// A buffered writer over a file descriptor, with caller-provided memory.
typedef struct {
    int fd;
    char *buffer;
    size_t capacity;
    size_t length;
    int failed;  // sticky: once a write fails, the report is abandoned
} fl_writer;

int fl_write_all(int fd, const void *bytes, size_t length);
void fl_writer_init(fl_writer *w, int fd, char *buffer, size_t capacity);
void fl_put_bytes(fl_writer *w, const char *bytes, size_t length);
void fl_put(fl_writer *w, const char *cstring);
void fl_put_json_string(fl_writer *w, const char *cstring);
void fl_put_json_string_n(fl_writer *w, const char *bytes, size_t length);
void fl_put_u64(fl_writer *w, uint64_t value);
void fl_put_i64(fl_writer *w, int64_t value);
void fl_put_hex(fl_writer *w, uint64_t value);        // "0x1a2b" without quotes
void fl_put_hex_bytes(fl_writer *w, const uint8_t *bytes, size_t length);
int fl_flush(fl_writer *w);

size_t fl_strlen(const char *s);
/// Copies at most capacity-1 bytes and always terminates; returns the length written.
size_t fl_copy_string(char *destination, size_t capacity, const char *source);
/// mkdir -p with mode 0700 (mkdir(2) only: start's preparation, and a crash that finds its
/// directory missing); 0, or -1 with errno set (ENAMETOOLONG from FL_MAKE_DIRECTORIES_MAX bytes).
#define FL_MAKE_DIRECTORIES_MAX 1024
int fl_make_directories(const char *path);
/// Formats value as decimal into out (needs 21 bytes); returns the length.
size_t fl_format_u64(char *out, uint64_t value);

#pragma GCC visibility pop
#endif
