// Normal context: the loaded modules for events captured outside a crash (captured errors).
// dl_iterate_phdr is the right tool here, and the wrong one in the crash path (module_scan.c).
#include "faultline_crash.h"
#include "safe_io.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

long faultline_current_thread_id(void) { return syscall(SYS_gettid); }

typedef struct {
    faultline_module_info *out;
    size_t capacity;
    size_t count;
    char executable[1024];
} fl_list_state;

static int fl_list_one(struct dl_phdr_info *info, size_t size, void *raw) {
    (void)size;
    fl_list_state *st = raw;
    uintptr_t low = UINTPTR_MAX, high = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t start = info->dlpi_addr + (ph->p_vaddr & ~(uintptr_t)4095);
        uintptr_t end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        if (start < low) low = start;
        if (end > high) high = end;
    }
    if (high == 0) return 0;
    size_t index = st->count++;
    if (index >= st->capacity) return 0;
    faultline_module_info *m = &st->out[index];
    memset(m, 0, sizeof *m);
    m->base = low;
    m->size = high - low;
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : st->executable;
    fl_copy_string(m->path, sizeof m->path, name);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const char *note = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = note + ph->p_memsz;
        while (note + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)note;
            const char *nm = note + sizeof *n;
            size_t name_size = ((size_t)n->n_namesz + 3) & ~(size_t)3;
            size_t desc_size = ((size_t)n->n_descsz + 3) & ~(size_t)3;
            if (name_size + desc_size > (size_t)(end - nm)) break;
            const char *desc = nm + name_size;
            const char *next = desc + desc_size;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(nm, "GNU", 4) == 0) {
                m->build_id_length = n->n_descsz < sizeof m->build_id ? n->n_descsz : sizeof m->build_id;
                memcpy(m->build_id, desc, m->build_id_length);
                break;
            }
            note = next;
        }
    }
    return 0;
}

size_t faultline_list_modules(faultline_module_info *out, size_t capacity) {
    fl_list_state st = {out, capacity, 0, {0}};
    ssize_t n = readlink("/proc/self/exe", st.executable, sizeof st.executable - 1);
    st.executable[n > 0 ? n : 0] = 0;
    dl_iterate_phdr(fl_list_one, &st);
    return st.count;
}
