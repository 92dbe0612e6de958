// Async-signal-safe output helpers. Runs on the crashing thread; compromised context.
#include "safe_io.h"

#include <errno.h>
#include <sys/stat.h>

int fl_write_all(int fd, const void *bytes, size_t length) {
    const char *p = bytes;
    while (length > 0) {
        ssize_t n = write(fd, p, length);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) return -1;
        p += n;
        length -= (size_t)n;
    }
    return 0;
}

void fl_writer_init(fl_writer *w, int fd, char *buffer, size_t capacity) {
    w->fd = fd;
    w->buffer = buffer;
    w->capacity = capacity;
    w->length = 0;
    w->failed = 0;
}

int fl_flush(fl_writer *w) {
    if (w->failed) return -1;
    if (w->length > 0 && fl_write_all(w->fd, w->buffer, w->length) != 0) w->failed = 1;
    w->length = 0;
    return w->failed ? -1 : 0;
}

void fl_put_bytes(fl_writer *w, const char *bytes, size_t length) {
    while (length > 0 && !w->failed) {
        if (w->length == w->capacity) fl_flush(w);
        size_t room = w->capacity - w->length;
        size_t n = length < room ? length : room;
        for (size_t i = 0; i < n; i++) w->buffer[w->length + i] = bytes[i];
        w->length += n;
        bytes += n;
        length -= n;
    }
}

size_t fl_strlen(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

void fl_put(fl_writer *w, const char *cstring) { fl_put_bytes(w, cstring, fl_strlen(cstring)); }

// Length of the well-formed UTF-8 sequence starting at bytes[i], or 0 if it is not one.
static size_t fl_utf8_sequence(const unsigned char *bytes, size_t i, size_t length) {
    unsigned char c = bytes[i];
    size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    if (n == 0 || i + n > length) return 0;
    for (size_t k = 1; k < n; k++)
        if ((bytes[i + k] & 0xc0) != 0x80) return 0;
    if (n == 3 && c == 0xe0 && bytes[i + 1] < 0xa0) return 0;  // overlong
    if (n == 3 && c == 0xed && bytes[i + 1] >= 0xa0) return 0; // surrogates
    if (n == 4 && c == 0xf0 && bytes[i + 1] < 0x90) return 0;  // overlong
    if (n == 4 && c == 0xf4 && bytes[i + 1] >= 0x90) return 0; // beyond U+10FFFF
    return n;
}

void fl_put_json_string_n(fl_writer *w, const char *raw, size_t length) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *bytes = (const unsigned char *)raw;
    fl_put_bytes(w, "\"", 1);
    for (size_t i = 0; i < length; i++) {
        unsigned char c = bytes[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            fl_put_bytes(w, e, 2);
        } else if (c < 0x20 || c == 0x7f) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            fl_put_bytes(w, e, 6);
        } else if (c < 0x80) {
            fl_put_bytes(w, (const char *)&c, 1);
        } else {
            // Valid UTF-8 passes through. A byte that is not (a thread name the kernel cut in the
            // middle of a character, a Latin-1 path) becomes \u00XX: a JSON reader rejects the
            // whole report over one invalid byte, and then the crash would be lost.
            size_t n = fl_utf8_sequence(bytes, i, length);
            if (n) {
                fl_put_bytes(w, (const char *)bytes + i, n);
                i += n - 1;
            } else {
                char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                fl_put_bytes(w, e, 6);
            }
        }
    }
    fl_put_bytes(w, "\"", 1);
}

void fl_put_json_string(fl_writer *w, const char *cstring) { fl_put_json_string_n(w, cstring, fl_strlen(cstring)); }

size_t fl_format_u64(char *out, uint64_t value) {
    char tmp[21];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    out[n] = 0;
    return n;
}

void fl_put_u64(fl_writer *w, uint64_t value) {
    char digits[21];
    size_t n = fl_format_u64(digits, value);
    fl_put_bytes(w, digits, n);
}

void fl_put_i64(fl_writer *w, int64_t value) {
    if (value < 0) {
        fl_put_bytes(w, "-", 1);
        fl_put_u64(w, (uint64_t)(-(value + 1)) + 1);
    } else {
        fl_put_u64(w, (uint64_t)value);
    }
}

void fl_put_hex(fl_writer *w, uint64_t value) {
    static const char hex[] = "0123456789abcdef";
    char tmp[18];
    size_t n = 0;
    do {
        tmp[n++] = hex[value & 15];
        value >>= 4;
    } while (value);
    char out[20] = {'0', 'x'};
    for (size_t i = 0; i < n; i++) out[2 + i] = tmp[n - 1 - i];
    fl_put_bytes(w, out, n + 2);
}

void fl_put_hex_bytes(fl_writer *w, const uint8_t *bytes, size_t length) {
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < length; i++) {
        char pair[2] = {hex[bytes[i] >> 4], hex[bytes[i] & 15]};
        fl_put_bytes(w, pair, 2);
    }
}

size_t fl_copy_string(char *destination, size_t capacity, const char *source) {
    size_t n = 0;
    if (capacity == 0) return 0;
    while (source[n] && n + 1 < capacity) {
        destination[n] = source[n];
        n++;
    }
    destination[n] = 0;
    return n;
}

int fl_make_directories(const char *path) {
    char partial[FL_MAKE_DIRECTORIES_MAX];
    if (fl_strlen(path) >= sizeof partial) {
        errno = ENAMETOOLONG;
        return -1;
    }
    size_t n = fl_copy_string(partial, sizeof partial, path);
    for (size_t i = 1; i <= n; i++) {
        if (partial[i] == '/' || partial[i] == 0) {
            char saved = partial[i];
            partial[i] = 0;
            if (mkdir(partial, 0700) != 0 && errno != EEXIST) return -1;
            partial[i] = saved;
        }
    }
    return 0;
}
