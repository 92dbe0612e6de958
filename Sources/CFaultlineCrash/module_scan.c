// Lists loaded modules from /proc/self/maps and reads each one's GNU build-id from memory.
//
// Why not dl_iterate_phdr or dladdr: both take the dynamic loader's lock, which the crashing
// thread (or a thread stopped inside dlopen) may hold. /proc/self/maps needs only open/read,
// and it lists modules dlopen'ed after start as well.
#include "crash_internal.h"
#include "safe_io.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

// Runs on the crashing thread; compromised context.
static uintptr_t fl_parse_hex(const char **p, const char *end) {
    uintptr_t v = 0;
    while (*p < end) {
        char c = **p;
        int d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else break;
        v = v * 16 + (uintptr_t)d;
        (*p)++;
    }
    return v;
}

// Runs on the crashing thread; compromised context. Copies memory through the kernel so that a
// mapping that cannot be read (a data file truncated after mmap raises SIGBUS) gives an error
// instead of a second fault inside the handler. Falls back to a plain copy only where the
// syscall itself is unavailable (seccomp), never on EFAULT.
static int fl_probe_pipe_ready(void);
static int fl_copy_through_probe_pipe(void *destination, uintptr_t source, size_t length);
static atomic_int fl_probe_pipe_busy;  // the probe pipe is in use by a copy

int fl_safe_copy(void *destination, uintptr_t source, size_t length) {
    if (!atomic_load(&fl_state.syscalls_filtered)) {
        struct iovec local = {destination, length};
        struct iovec remote = {(void *)source, length};
        // fl_state.pid (set at start and after fork) rather than a getpid per copy: hundreds per crash.
        ssize_t n = syscall(SYS_process_vm_readv, fl_state.pid, &local, 1UL, &remote, 1UL, 0UL);
        if (n == (ssize_t)length) return 0;
        if (n >= 0 || (errno != ENOSYS && errno != EPERM)) return -1;
    }
    // process_vm_readv is filtered: write(2) from the source into a pipe checks the memory the
    // same way (EFAULT instead of a fault); then read it back. Chunks fit the pipe's buffer. One
    // thread at a time (threads answering for their stacks copy too, and would read each other's
    // bytes), and only through fds that are still the pipe (see fl_probe_pipe_ready).
    int expected = 0;
    for (int tries = 0; !atomic_compare_exchange_weak(&fl_probe_pipe_busy, &expected, 1); tries++) {
        expected = 0;
        if (tries >= 10000) return -1;
        syscall(SYS_sched_yield);
    }
    int copied = fl_probe_pipe_ready() ? fl_copy_through_probe_pipe(destination, source, length) : -1;
    atomic_store(&fl_probe_pipe_busy, 0);
    return copied;
}

// Runs in a signal handler; compromised context. Whether both probe-pipe fds are still the pipe
// start made (an app that closed every fd may have reused the numbers for its own files, which a
// probe must never write to); when not, a new pipe is made.
static int fl_probe_pipe_ready(void) {
    struct stat a, b;
    int ours = fl_state.probe_pipe[0] >= 0 && fl_state.probe_pipe[1] >= 0 && fstat(fl_state.probe_pipe[0], &a) == 0
            && fstat(fl_state.probe_pipe[1], &b) == 0 && S_ISFIFO(a.st_mode) && S_ISFIFO(b.st_mode)
            && a.st_ino == fl_state.probe_pipe_inode && b.st_ino == fl_state.probe_pipe_inode;
    if (ours) return 1;
    int fresh[2];
    if (syscall(SYS_pipe2, fresh, O_CLOEXEC | O_NONBLOCK) != 0 || fstat(fresh[1], &b) != 0) return 0;
    fl_state.probe_pipe[0] = fresh[0];
    fl_state.probe_pipe[1] = fresh[1];
    fl_state.probe_pipe_inode = b.st_ino;
    return 1;
}

// Runs in a signal handler; compromised context. The pipe copy itself (fl_safe_copy holds the pipe).
static int fl_copy_through_probe_pipe(void *destination, uintptr_t source, size_t length) {
    char *out = destination;
    while (length > 0) {
        size_t chunk = length < 4096 ? length : 4096;
        ssize_t wrote = write(fl_state.probe_pipe[1], (const void *)source, chunk);
        if (wrote != (ssize_t)chunk) {
            char drain[4096];
            while (read(fl_state.probe_pipe[0], drain, sizeof drain) > 0) {
            }
            return -1;
        }
        if (read(fl_state.probe_pipe[0], out, chunk) != (ssize_t)chunk) return -1;
        out += chunk;
        source += chunk;
        length -= chunk;
    }
    return 0;
}

// Runs in normal context at start, and on the crashing thread (compromised context) at a crash:
// filters are added at any time, never removed. A seccomp filter may kill the process for a call
// it does not allow (systemd's SystemCallFilter= without process_vm_readv, a sandbox): then
// memory is copied through the pipe only. /proc/self/status's `Seccomp:` line says whether one is
// on (0: none); unreadable, nothing changes.
void fl_note_syscall_filter(char *buffer, size_t capacity) {
    // This thread's: a filter installed without TSYNC is the installing thread's (and its
    // children's) only, and /proc/self is the main thread's.
    int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || capacity < 2) {
        if (fd >= 0) close(fd);
        return;
    }
    ssize_t got = 0, n;
    while (got < (ssize_t)capacity - 1 && (n = read(fd, buffer + got, capacity - 1 - (size_t)got)) > 0) got += n;
    close(fd);
    static const char key[] = "\nSeccomp:";
    for (ssize_t i = 0; i + (ssize_t)sizeof key - 1 < got; i++) {
        if (memcmp(buffer + i, key, sizeof key - 1) != 0) continue;
        ssize_t at = i + (ssize_t)sizeof key - 1;
        while (at < got && (buffer[at] == ' ' || buffer[at] == '\t')) at++;
        if (at < got && buffer[at] >= '1' && buffer[at] <= '9') atomic_store(&fl_state.syscalls_filtered, 1);
        return;
    }
}

// Runs on the crashing thread; compromised context. Reads the ELF header, program headers and
// the build-id note from the mapped image, each copy bounds-checked against the module's range.
static int fl_is_elf(uintptr_t start, uintptr_t stop) {
    unsigned char magic[SELFMAG];
    return stop - start >= SELFMAG && fl_safe_copy(magic, start, SELFMAG) == 0 && memcmp(magic, ELFMAG, SELFMAG) == 0;
}

// Runs on the crashing thread; compromised context.
static void fl_read_build_id(fl_module *m, uintptr_t first_mapping_end) {
    m->build_id_length = 0;
    ElfW(Ehdr) eh;
    if (first_mapping_end - m->base < sizeof eh || fl_safe_copy(&eh, m->base, sizeof eh) != 0) return;
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) return;
    ElfW(Phdr) ph[64];
    size_t phnum = eh.e_phnum < 64 ? eh.e_phnum : 64;
    uintptr_t ph_start = m->base + eh.e_phoff;
    if (eh.e_phentsize != sizeof(ElfW(Phdr)) || ph_start + phnum * sizeof ph[0] > first_mapping_end) return;
    if (fl_safe_copy(ph, ph_start, phnum * sizeof ph[0]) != 0) return;

    // The load bias: where the segment with file offset 0 ended up, minus its link-time address.
    uintptr_t bias = m->base;
    for (size_t i = 0; i < phnum; i++) {
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) {
            bias = m->base - (ph[i].p_vaddr & ~(uintptr_t)4095);
            break;
        }
    }
    unsigned char notes[2048];
    for (size_t i = 0; i < phnum; i++) {
        if (ph[i].p_type != PT_NOTE) continue;
        uintptr_t start = bias + ph[i].p_vaddr;
        size_t size = ph[i].p_memsz < sizeof notes ? ph[i].p_memsz : sizeof notes;
        if (start < m->base || start + size > m->end || fl_safe_copy(notes, start, size) != 0) continue;
        size_t at = 0;
        while (at + sizeof(ElfW(Nhdr)) <= size) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(notes + at);
            size_t name = at + sizeof(ElfW(Nhdr));
            size_t desc = name + (((size_t)n->n_namesz + 3) & ~(size_t)3);
            size_t next = desc + (((size_t)n->n_descsz + 3) & ~(size_t)3);
            if (next > size || next <= at) break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(notes + name, "GNU", 4) == 0) {
                size_t len = n->n_descsz < sizeof m->build_id ? n->n_descsz : sizeof m->build_id;
                memcpy(m->build_id, notes + desc, len);
                m->build_id_length = len;
                return;
            }
            at = next;
        }
    }
}

// What one scan fills: the module table and the buffer /proc/self/maps is read through.
typedef struct {
    fl_module *modules;
    size_t *count;
    char *buffer;
    size_t capacity;
    const fl_module_cache *known;  // build-ids already read at start, by base and path (or NULL)
    size_t *omitted;               // ELF modules left out of a full table
    const fl_frame_buffer *frames;  // the crashing thread's frames (NULL at start)
} fl_scan_target;

// Runs on the crashing thread; compromised context. Whether one of the walked frames lies in `m`.
static int fl_holds_a_frame(const fl_frame_buffer *frames, const fl_module *m) {
    size_t inner = frames->inner_count, outer = frames->total_count - inner;
    if (outer > FL_OUTER_FRAMES) outer = FL_OUTER_FRAMES;
    for (size_t i = 0; i < inner; i++)
        if (frames->inner[i].address >= m->base && frames->inner[i].address < m->end) return 1;
    for (size_t i = 0; i < outer; i++)
        if (frames->outer_ring[i].address >= m->base && frames->outer_ring[i].address < m->end) return 1;
    return 0;
}

// Runs on the crashing thread; compromised context. A module that came past
// FL_MODULES_TAKEN_AS_THEY_COME (the table's last slots, kept for the frames' modules) is given
// back when no frame lies in it; its range is whole by then (the next module has begun, or the
// maps ended).
static void fl_keep_only_if_needed(const fl_scan_target *t) {
    if (!t->frames || *t->count <= FL_MODULES_TAKEN_AS_THEY_COME) return;
    if (fl_holds_a_frame(t->frames, &t->modules[*t->count - 1])) return;
    (*t->count)--;
    (*t->omitted)++;
}

// Runs on the crashing thread; compromised context. A module the start-time scan already read
// (same base, same path) has the same build-id: no memory reads needed.
static int fl_known_build_id(const fl_module_cache *known, fl_module *m) {
    if (!known) return 0;
    for (size_t i = 0; i < known->count; i++) {
        const fl_module *k = &known->modules[i];
        if (k->base == m->base && k->end == m->end && strncmp(k->path, m->path, FL_PATH_MAX) == 0) {
            memcpy(m->build_id, k->build_id, k->build_id_length);
            m->build_id_length = k->build_id_length;
            return 1;
        }
    }
    return 0;
}

// Runs on the crashing thread; compromised context.
static void fl_finish_module(const fl_scan_target *t, fl_module *m, uintptr_t first_end) {
    if (!fl_known_build_id(t->known, m)) fl_read_build_id(m, first_end);
}

// Runs on the crashing thread; compromised context. Handles one line of /proc/self/maps:
// "start-end perms offset dev inode   path".
static void fl_take_maps_line(const fl_scan_target *t, const char *line, const char *end, uintptr_t *first_end) {
    const char *p = line;
    uintptr_t start = fl_parse_hex(&p, end);
    if (p >= end || *p != '-') return;
    p++;
    uintptr_t stop = fl_parse_hex(&p, end);
    if (p + 5 >= end) return;
    int readable = p[1] == 'r';
    p += 6;  // " rwxp "
    uintptr_t offset = fl_parse_hex(&p, end);
    // Skip device and inode to the path.
    int fields = 0;
    while (p < end && fields < 2) {
        while (p < end && *p == ' ') p++;
        while (p < end && *p != ' ') p++;
        fields++;
    }
    while (p < end && *p == ' ') p++;
    size_t path_len = (size_t)(end - p);
    // A binary replaced on disk while running shows as "/path (deleted)"; the build-id still
    // identifies it, and the plain path is what a symbolicator can look up.
    static const char deleted[] = " (deleted)";
    if (path_len > sizeof deleted - 1 && memcmp(end - (sizeof deleted - 1), deleted, sizeof deleted - 1) == 0)
        path_len -= sizeof deleted - 1;
    if (path_len == 0 || (p[0] != '/' && !(path_len == 6 && memcmp(p, "[vdso]", 6) == 0))) return;
    if (path_len >= FL_PATH_MAX) path_len = FL_PATH_MAX - 1;

    fl_module *last = *t->count ? &t->modules[*t->count - 1] : 0;
    if (last && strncmp(last->path, p, path_len) == 0 && last->path[path_len] == 0 && start >= last->end) {
        last->end = stop;  // a later segment of the same file
        return;
    }
    if (offset != 0 || !readable) return;
    if (!fl_is_elf(start, stop)) return;
    if (last && last->build_id_length == 0) fl_finish_module(t, last, *first_end);
    if (last) fl_keep_only_if_needed(t);
    if (*t->count == FL_MAX_MODULES) {
        (*t->omitted)++;
        return;
    }
    fl_module *m = &t->modules[(*t->count)++];
    m->base = start;
    m->end = stop;
    memcpy(m->path, p, path_len);
    m->path[path_len] = 0;
    m->build_id_length = 0;
    *first_end = stop;
    // Build-ids are read once the module's whole range is known (next module or end of file).
}

// Runs on the crashing thread (and once at start); compromised context.
static void fl_scan_maps(const fl_scan_target *t) {
    *t->count = 0;
    *t->omitted = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char *buf = t->buffer;
    size_t have = 0;
    uintptr_t first_end = 0;
    for (;;) {
        ssize_t n = read(fd, buf + have, t->capacity - have);
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (n == 0 && have == 0) break;
        have += (size_t)n;
        size_t consumed = 0;
        for (size_t i = 0; i < have; i++) {
            if (buf[i] == '\n') {
                fl_take_maps_line(t, buf + consumed, buf + i, &first_end);
                consumed = i + 1;
            }
        }
        if (n == 0) {  // last line without a newline
            if (consumed < have) fl_take_maps_line(t, buf + consumed, buf + have, &first_end);
            break;
        }
        if (consumed == 0 && have == t->capacity) consumed = have;  // absurd line: drop it
        memmove(buf, buf + consumed, have - consumed);
        have -= consumed;
    }
    close(fd);
    if (*t->count && t->modules[*t->count - 1].build_id_length == 0)
        fl_finish_module(t, &t->modules[*t->count - 1], first_end);
    if (*t->count) fl_keep_only_if_needed(t);
}

// Any context (fl_safe_copy only): the loader's list of objects (glibc's r_debug.r_map chain of
// link_maps), node by node into `heads` (and each node's address into `objects`, when given).
// Returns how many, or -1 if it could not be read whole.
static long fl_read_loader_heads(fl_link_map_head *heads, uintptr_t *objects, uintptr_t *first) {
    struct { int version; uintptr_t map; } debug;  // the head of struct r_debug
    if (!fl_state.loader_debug || fl_safe_copy(&debug, (uintptr_t)fl_state.loader_debug, sizeof debug) != 0) return -1;
    if (first) *first = debug.map;
    long count = 0;
    for (uintptr_t node = debug.map; node; node = heads[count - 1].next) {
        if (count == FL_MAX_LOADED_OBJECTS) return -1;
        if (fl_safe_copy(&heads[count], node, sizeof heads[0]) != 0) return -1;
        if (objects) objects[count] = node;
        count++;
    }
    return count;
}

// Normal context (start): the loader's list, remembered node by node. Returns 0 if it could not
// be read whole.
static int fl_read_loader_list(fl_module_cache *cache) {
    long count = fl_read_loader_heads(cache->heads, cache->objects, &cache->first_object);
    cache->object_count = count < 0 ? 0 : (size_t)count;
    return count > 0;
}

// Any context. Whether every object the loader lists has its dynamic section inside a module of
// the table. A scan can miss a module although nothing was loaded or unloaded: qemu-user builds
// the guest's /proc/self/maps from the host's and leaves out a range whose pages it finds changing
// as another thread maps memory, so the test runs that crash at start (while start's background
// thread still allocates) lost the program itself now and then.
static int fl_modules_cover(const fl_link_map_head *heads, size_t objects, const fl_module *modules, size_t count) {
    for (size_t i = 0; i < objects; i++) {
        uintptr_t dynamic = heads[i].ld;
        if (dynamic == 0) continue;
        int found = 0;
        for (size_t m = 0; m < count && !found; m++) found = modules[m].base <= dynamic && dynamic < modules[m].end;
        if (!found) return 0;
    }
    return 1;
}

// Runs on the crashing thread; compromised context. Whether the loader's list is exactly what it
// was when the module table was cached: the same first object, and every remembered link_map
// still holding the same bias, name, dynamic section and successor (so nothing was dlopen'ed,
// which appends, or dlclose'd, which unlinks). All nodes are re-read in one process_vm_readv:
// one syscall instead of one per object, and a stale pointer only fails the read.
static int fl_loader_unchanged(const fl_module_cache *cache, fl_crash_scratch *s) {
    struct { int version; uintptr_t map; } debug;
    if (fl_safe_copy(&debug, (uintptr_t)fl_state.loader_debug, sizeof debug) != 0 || debug.map != cache->first_object) return 0;
    size_t n = cache->object_count;
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++) {
        s->loader_remote[i].iov_base = (void *)cache->objects[i];
        s->loader_remote[i].iov_len = sizeof s->loader_heads[0];
    }
    if (atomic_load(&fl_state.syscalls_filtered)) return 0;  // a fresh scan, through fl_safe_copy
    struct iovec local = {s->loader_heads, n * sizeof s->loader_heads[0]};
    ssize_t got = syscall(SYS_process_vm_readv, fl_state.pid, &local, 1UL, s->loader_remote, (unsigned long)n, 0UL);
    if (got != (ssize_t)(n * sizeof s->loader_heads[0])) return 0;
    return memcmp(s->loader_heads, cache->heads, n * sizeof s->loader_heads[0]) == 0;
}

// Runs on the crashing thread; compromised context. The module table for the report: the one
// cached at start when the loader's list is unchanged (reading /proc/self/maps and every
// build-id is most of a crash's cost), else a fresh scan that still reuses known build-ids.
void fl_scan_modules(fl_crash_scratch *s) {
    const fl_module_cache *known = fl_state.module_cache;
    s->modules_omitted = 0;
    if (known && atomic_load_explicit(&known->ready, memory_order_acquire)) {
        // A table that was full at start may lack the frames' modules: scanned afresh then.
        if (known->omitted == 0 && fl_loader_unchanged(known, s)) {
            s->report_modules = known->modules;
            s->report_module_count = known->count;
            return;
        }
    } else {
        known = 0;
    }
    fl_scan_target t = {s->modules, &s->module_count, s->maps_buffer, sizeof s->maps_buffer, known, &s->modules_omitted, &s->frames};
    // A table missing one of the loader's objects is scanned again (twice at most).
    for (int attempt = 0; attempt < 3; attempt++) {
        fl_scan_maps(&t);
        long objects = fl_read_loader_heads(s->loader_heads, 0, 0);
        if (objects < 0 || fl_modules_cover(s->loader_heads, (size_t)objects, s->modules, s->module_count)) break;
    }
    s->report_modules = s->modules;
    s->report_module_count = s->module_count;
}

// Normal context (a thread started at start): fills the module cache. The loader's list is read
// before and after the scan; a dlopen in between, or a table missing one of the loader's objects,
// makes it try again, and after three tries a crash scans for itself.
void fl_fill_module_cache(fl_module_cache *cache) {
    for (int attempt = 0; attempt < 3; attempt++) {
        if (!fl_read_loader_list(cache)) return;
        uintptr_t first = cache->first_object, last = cache->objects[cache->object_count - 1];
        size_t objects = cache->object_count;
        fl_scan_target t = {cache->modules, &cache->count, cache->maps_buffer, sizeof cache->maps_buffer, 0, &cache->omitted, 0};
        fl_scan_maps(&t);
        if (fl_read_loader_list(cache) && cache->first_object == first && cache->object_count == objects &&
            cache->objects[objects - 1] == last && fl_modules_cover(cache->heads, objects, cache->modules, cache->count)) {
            atomic_store_explicit(&cache->ready, 1, memory_order_release);
            return;
        }
    }
}
