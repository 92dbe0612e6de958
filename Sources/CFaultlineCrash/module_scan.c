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
int fl_safe_copy(void *destination, uintptr_t source, size_t length) {
    struct iovec local = {destination, length};
    struct iovec remote = {(void *)source, length};
    // fl_state.pid (set at start and after fork) rather than a getpid per copy: hundreds per crash.
    ssize_t n = syscall(SYS_process_vm_readv, fl_state.pid, &local, 1UL, &remote, 1UL, 0UL);
    if (n == (ssize_t)length) return 0;
    if (n >= 0 || (errno != ENOSYS && errno != EPERM)) return -1;
    // process_vm_readv is filtered: write(2) from the source into a pipe checks the memory the
    // same way (EFAULT instead of a fault); then read it back. Chunks fit the pipe's buffer.
    if (fl_state.probe_pipe[0] < 0 || fl_state.probe_pipe[1] < 0) return -1;
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

// Runs on the crashing thread; compromised context. Handles one line of /proc/self/maps:
// "start-end perms offset dev inode   path".
static void fl_take_maps_line(fl_crash_scratch *s, const char *line, const char *end, uintptr_t *first_end) {
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

    fl_module *last = s->module_count ? &s->modules[s->module_count - 1] : 0;
    if (last && strncmp(last->path, p, path_len) == 0 && last->path[path_len] == 0 && start >= last->end) {
        last->end = stop;  // a later segment of the same file
        return;
    }
    if (offset != 0 || !readable || s->module_count == FL_MAX_MODULES) return;
    if (!fl_is_elf(start, stop)) return;
    if (last && last->build_id_length == 0) fl_read_build_id(last, *first_end);
    fl_module *m = &s->modules[s->module_count++];
    m->base = start;
    m->end = stop;
    memcpy(m->path, p, path_len);
    m->path[path_len] = 0;
    m->build_id_length = 0;
    *first_end = stop;
    // Build-ids are read once the module's whole range is known (next module or end of file).
}

// Runs on the crashing thread; compromised context.
void fl_scan_modules(fl_crash_scratch *s) {
    s->module_count = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char *buf = s->maps_buffer;
    size_t have = 0;
    uintptr_t first_end = 0;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof s->maps_buffer - have);
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (n == 0 && have == 0) break;
        have += (size_t)n;
        size_t consumed = 0;
        for (size_t i = 0; i < have; i++) {
            if (buf[i] == '\n') {
                fl_take_maps_line(s, buf + consumed, buf + i, &first_end);
                consumed = i + 1;
            }
        }
        if (n == 0) {  // last line without a newline
            if (consumed < have) fl_take_maps_line(s, buf + consumed, buf + have, &first_end);
            break;
        }
        if (consumed == 0 && have == sizeof s->maps_buffer) consumed = have;  // absurd line: drop it
        memmove(buf, buf + consumed, have - consumed);
        have -= consumed;
    }
    close(fd);
    if (s->module_count && s->modules[s->module_count - 1].build_id_length == 0)
        fl_read_build_id(&s->modules[s->module_count - 1], first_end);
}
