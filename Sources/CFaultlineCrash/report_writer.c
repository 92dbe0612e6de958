// Writes the crash report (docs/CRASH-REPORT.md) to a temporary file and renames it into place,
// so a reader never sees half a report under the final name.
#include "crash_internal.h"
#include "faultline_crash.h"
#include "log_rings_internal.h"
#include "safe_io.h"
#include "message_writer.h"
#include "session_writer.h"
#include "async_unwind.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// Runs on the crashing thread; compromised context.
static const char *fl_signal_name(int signo) {
    switch (signo) {
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGTRAP: return "SIGTRAP";
    default: return "SIGNAL";
    }
}

// Runs on the crashing thread; compromised context.
static const char *fl_code_name(int signo, int code) {
    switch (code) {
    case SI_USER: return "SI_USER";
    case SI_KERNEL: return "SI_KERNEL";
    case SI_QUEUE: return "SI_QUEUE";
    case SI_TKILL: return "SI_TKILL";
    case FL_SI_NO_DETAILS: return "no details: another handler called ours without them";
    default: break;
    }
    switch (signo) {
    case SIGSEGV:
        switch (code) {
        case SEGV_MAPERR: return "SEGV_MAPERR";
        case SEGV_ACCERR: return "SEGV_ACCERR";
        case SEGV_BNDERR: return "SEGV_BNDERR";
        case SEGV_PKUERR: return "SEGV_PKUERR";
        }
        break;
    case SIGBUS:
        switch (code) {
        case BUS_ADRALN: return "BUS_ADRALN";
        case BUS_ADRERR: return "BUS_ADRERR";
        case BUS_OBJERR: return "BUS_OBJERR";
        case BUS_MCEERR_AR: return "BUS_MCEERR_AR";
        case BUS_MCEERR_AO: return "BUS_MCEERR_AO";
        }
        break;
    case SIGFPE:
        switch (code) {
        case FPE_INTDIV: return "FPE_INTDIV";
        case FPE_INTOVF: return "FPE_INTOVF";
        case FPE_FLTDIV: return "FPE_FLTDIV";
        case FPE_FLTOVF: return "FPE_FLTOVF";
        case FPE_FLTUND: return "FPE_FLTUND";
        case FPE_FLTRES: return "FPE_FLTRES";
        case FPE_FLTINV: return "FPE_FLTINV";
        case FPE_FLTSUB: return "FPE_FLTSUB";
        }
        break;
    case SIGILL:
        switch (code) {
        case ILL_ILLOPC: return "ILL_ILLOPC";
        case ILL_ILLOPN: return "ILL_ILLOPN";
        case ILL_ILLADR: return "ILL_ILLADR";
        case ILL_ILLTRP: return "ILL_ILLTRP";
        case ILL_PRVOPC: return "ILL_PRVOPC";
        case ILL_PRVREG: return "ILL_PRVREG";
        case ILL_COPROC: return "ILL_COPROC";
        case ILL_BADSTK: return "ILL_BADSTK";
        }
        break;
    case SIGTRAP:
        switch (code) {
        case TRAP_BRKPT: return "TRAP_BRKPT";
        case TRAP_TRACE: return "TRAP_TRACE";
        }
        break;
    }
    return "UNKNOWN";
}

// Runs on the crashing thread; compromised context.
static void fl_put_key(fl_writer *w, const char *key) {
    fl_put_json_string(w, key);
    fl_put_bytes(w, ":", 1);
}

// Runs on the crashing thread; compromised context. Named per architecture (machine_context.c).
static void fl_put_register_set(fl_writer *w, const fl_registers *registers) {
    fl_put(w, "\"registers\":{");
    for (size_t i = 0; i < FL_REGISTER_COUNT; i++) {
        if (i) fl_put_bytes(w, ",", 1);
        fl_put_key(w, fl_register_names[i]);
        fl_put_bytes(w, "\"", 1);
        fl_put_hex(w, registers->values[i]);
        fl_put_bytes(w, "\"", 1);
    }
    fl_put(w, "}");
}

// Runs on the crashing thread; compromised context.
static void fl_put_registers(fl_writer *w, const ucontext_t *uc) {
    fl_registers registers;
    fl_capture_registers(uc, &registers);
    fl_put_register_set(w, &registers);
}

// The linker's bounds of FL_OWN_CODE_SECTION in the object the crash core is linked into (weak:
// absent when nothing was placed there).
extern const char __start_faultline_own_code[] __attribute__((weak, visibility("hidden")));
extern const char __stop_faultline_own_code[] __attribute__((weak, visibility("hidden")));

// Runs on the crashing thread; compromised context. 1 when `address` is inside our own code that
// can appear in a stack (the handler entry, the thread-start wrapper, the terminate handler).
static int fl_is_own_code(uintptr_t address) {
    uintptr_t low = (uintptr_t)__start_faultline_own_code, high = (uintptr_t)__stop_faultline_own_code;
    return low && address >= low && address < high;
}

// Runs on the crashing thread; compromised context.
static void fl_put_frame(fl_writer *w, const fl_frame *f, int first) {
    if (!first) fl_put_bytes(w, ",", 1);
    fl_put(w, "{\"address\":\"");
    fl_put_hex(w, f->address);
    fl_put(w, f->is_pc ? "\",\"kind\":\"pc\"" : "\",\"kind\":\"return\"");
    if (fl_is_own_code(f->is_pc ? f->address : f->address - FL_CALL_SITE_BACKSTEP)) fl_put(w, ",\"faultline\":true");
    fl_put(w, "}");
}

// Runs on the crashing thread; compromised context.
static const char *fl_run_state_name(char state) {
    switch (state) {
    case 'R': return "running";
    case 'S': return "sleeping";
    case 'D': return "uninterruptible";
    case 'T': return "stopped";
    case 't': return "traced";
    case 'Z': return "zombie";
    default: return "unknown";
    }
}

// Runs on the crashing thread; compromised context. Every thread: the crashing one first (its
// frames are the report's top-level `frames`), then each other thread as it answered.
static void fl_put_threads(fl_writer *w, pid_t crashing_tid, const char *crashing_name) {
    fl_thread_table *table = fl_state.threads;
    if (!table || !table->collected) return;
    fl_put(w, ",\"threads\":[{\"tid\":");
    fl_put_i64(w, crashing_tid);
    fl_put(w, ",\"name\":");
    fl_put_json_string(w, crashing_name);
    fl_put(w, ",\"crashed\":true}");
    for (size_t i = 0; i < table->count; i++) {
        fl_thread_slot *slot = &table->slots[i];
        if (slot->faultline_own) continue;
        int state = atomic_load(&slot->state);
        fl_put(w, ",{\"tid\":");
        fl_put_i64(w, slot->tid);
        fl_put(w, ",\"name\":");
        fl_put_json_string(w, slot->name);
        fl_put(w, ",\"state\":");
        fl_put_json_string(w, fl_run_state_name(slot->run_state));
        if (state == FL_SLOT_DONE) {
            fl_put(w, ",");
            fl_put_register_set(w, &slot->registers);
            fl_put(w, ",\"frames\":[");
            for (uint32_t f = 0; f < slot->frame_count && f < FL_THREAD_FRAMES; f++) {
                fl_frame frame = {slot->frames[f], f == 0};
                fl_put_frame(w, &frame, f == 0);
            }
            fl_put(w, "],\"unwind\":{\"stopped_by\":");
            fl_put_json_string(w, slot->stopped_by);
            fl_put(w, "}");
        } else {
            fl_put(w, ",\"error\":");
            fl_put_json_string(w, state == FL_SLOT_GONE ? "exited before it could be asked"
                                  : state == FL_SLOT_WORKING ? "still unwinding at the deadline"
                                  : slot->blocks_request ? "blocks signals (its stack cannot be asked for)"
                                  : !slot->asked ? "not asked: the deadline for every thread's stack had passed"
                                  : "no answer by the deadline (stopped, or stuck)");
        }
        fl_put(w, "}");
    }
    fl_put(w, "]");
    if (table->total > table->count) {
        fl_put(w, ",\"threads_omitted\":");
        fl_put_u64(w, table->total - table->count);
    }
}

// Runs on the crashing thread; compromised context.
static void fl_put_frames(fl_writer *w, const fl_frame_buffer *fb) {
    fl_put(w, "\"frames\":[");
    for (size_t i = 0; i < fb->inner_count; i++) fl_put_frame(w, &fb->inner[i], i == 0);
    size_t outer_seen = fb->total_count - fb->inner_count;
    size_t outer_kept = outer_seen < FL_OUTER_FRAMES ? outer_seen : FL_OUTER_FRAMES;
    size_t first_outer = outer_seen - outer_kept;  // index (in walk order) of the first kept one
    for (size_t i = 0; i < outer_kept; i++)
        fl_put_frame(w, &fb->outer_ring[(first_outer + i) % FL_OUTER_FRAMES], 0);
    fl_put(w, "]");
    if (first_outer > 0) {
        fl_put(w, ",\"frames_omitted\":{\"after\":");
        fl_put_u64(w, fb->inner_count);
        fl_put(w, ",\"count\":");
        fl_put_u64(w, first_outer);
        fl_put(w, "}");
    }
    fl_put(w, ",\"unwind\":{\"frames_walked\":");
    fl_put_u64(w, fb->total_count);
    fl_put(w, ",\"stopped_by\":");
    fl_put_json_string(w, fb->stopped_by);
    fl_put(w, ",\"method\":");
    fl_put_json_string(w, fb->method ? fb->method : "libunwind");
    if (fb->fallback) {
        fl_put(w, ",\"fallback\":");
        fl_put_json_string(w, fb->fallback);
    }
    if (fb->prewarmed_by_crash) fl_put(w, ",\"prewarmed_by_crash\":true");
    fl_put(w, "}");
}

// Runs on the crashing thread; compromised context.
static void fl_put_modules(fl_writer *w, const fl_crash_scratch *s) {
    fl_put(w, "\"modules\":[");
    for (size_t i = 0; i < s->report_module_count; i++) {
        const fl_module *m = &s->report_modules[i];
        if (i) fl_put_bytes(w, ",", 1);
        fl_put(w, "{\"path\":");
        fl_put_json_string(w, m->path);
        fl_put(w, ",\"base\":\"");
        fl_put_hex(w, m->base);
        fl_put(w, "\",\"size\":");
        fl_put_u64(w, m->end - m->base);
        if (m->build_id_length) {
            fl_put(w, ",\"build_id\":\"");
            fl_put_hex_bytes(w, m->build_id, m->build_id_length);
            fl_put(w, "\"");
        }
        fl_put(w, "}");
    }
    fl_put(w, "]");
    if (s->modules_omitted) {
        fl_put(w, ",\"modules_omitted\":");
        fl_put_u64(w, s->modules_omitted);
    }
}

// Runs on the crashing thread; compromised context. Copies each slot out under its seqlock and
// skips one that a writer was changing at the moment of the crash.
static void fl_put_breadcrumbs(fl_writer *w) {
    char copy[sizeof fl_state.breadcrumbs[0].bytes];
    uint64_t next = atomic_load(&fl_state.breadcrumb_next);
    uint64_t count = next < FAULTLINE_BREADCRUMB_SLOTS ? next : FAULTLINE_BREADCRUMB_SLOTS;
    int first = 1;
    fl_put(w, "\"breadcrumbs\":[");
    for (uint64_t k = next - count; k < next; k++) {
        fl_breadcrumb_slot *slot = &fl_state.breadcrumbs[k % FAULTLINE_BREADCRUMB_SLOTS];
        uint32_t before = atomic_load(&slot->sequence);
        if (before & 1u) continue;
        uint32_t length = slot->length;
        if (length == 0 || length > sizeof copy) continue;
        for (uint32_t i = 0; i < length; i++) copy[i] = slot->bytes[i];
        atomic_thread_fence(memory_order_acquire);  // the copy is done before the re-check (seqlock)
        if (atomic_load(&slot->sequence) != before) continue;
        if (!first) fl_put_bytes(w, ",", 1);
        if ((unsigned char)copy[0] == FL_BREADCRUMB_RECORD_MAGIC) {
            // The SDK's binary record: as hex, rendered to JSON at the next launch
            // (FaultlineProtocol's BreadcrumbRecord, which also names the key).
            fl_put(w, "{\"faultline_record\":\"");
            fl_put_hex_bytes(w, (const uint8_t *)copy, length);
            fl_put(w, "\"}");
        } else {
            fl_put_bytes(w, copy, length);
        }
        first = 0;
    }
    fl_put(w, "]");
}

// Runs on the crashing thread; compromised context. Copies the current context out under its
// seqlock; a few attempts, since a writer on another thread may flip buffers while we copy. A
// writer interrupted by this very crash (the crashing thread was inside set_context) leaves its
// buffer odd: the other buffer is whole. Returns 0 with the length, or -1 if none was whole.
int fl_copy_context(char *out, size_t capacity, uint32_t *length) {
    for (int attempt = 0; attempt < 8; attempt++) {
        int index = atomic_load(&fl_state.context_current);
        for (int pick = 0; pick < 2; pick++, index = 1 - index) {
            fl_context_buffer *buffer = &fl_state.context[index];
            uint32_t before = atomic_load(&buffer->sequence);
            if (before & 1u) continue;
            uint32_t n = buffer->length;
            if (n > capacity) continue;
            for (uint32_t i = 0; i < n; i++) out[i] = buffer->bytes[i];
            atomic_thread_fence(memory_order_acquire);  // the copy is done before the re-check (seqlock)
            if (atomic_load(&buffer->sequence) != before) continue;
            *length = n;
            return 0;
        }
    }
    return -1;
}

// Runs on the crashing thread; compromised context. The crashing thread's span (trace_slots.c),
// as `"trace":{"trace_id":…,"span_id":…},`; nothing when the thread was in no span.
static void fl_put_thread_trace(fl_writer *w, pid_t tid) {
    uint64_t ids[3];
    if (fl_trace_slot_read(tid, &ids[0], &ids[1], &ids[2]) != 0) return;
    uint8_t bytes[24];
    for (int k = 0; k < 3; k++)
        for (int b = 0; b < 8; b++) bytes[k * 8 + b] = (uint8_t)(ids[k] >> (56 - 8 * b));
    fl_put(w, "\"trace\":{\"trace_id\":\"");
    fl_put_hex_bytes(w, bytes, 16);
    fl_put(w, "\",\"span_id\":\"");
    fl_put_hex_bytes(w, bytes + 16, 8);
    fl_put(w, "\"},");
}

static char fl_last_report[FL_PATH_MAX + 64];

// Runs on the crashing thread; compromised context.
void fl_unlink_last_report(void) {
    if (fl_last_report[0]) unlink(fl_last_report);
    fl_last_report[0] = 0;
}

// Runs on the crashing thread; compromised context.
int fl_write_report(int signo, const siginfo_t *info, const ucontext_t *uc, pid_t tid) {
    fl_crash_scratch *s = fl_state.scratch;
    fl_flush_log_rings();  // queued file-log lines first: they matter even if the report fails
    char temporary[FL_PATH_MAX + 64];
    char *final_path = fl_last_report;
    size_t n = fl_copy_string(temporary, sizeof temporary, fl_state.crash_directory);
    n += fl_copy_string(temporary + n, sizeof temporary - n, "/.");
    n += fl_copy_string(temporary + n, sizeof temporary - n, fl_state.event_id);
    fl_copy_string(temporary + n, sizeof temporary - n, ".crash.json.tmp");
    const size_t cap = sizeof fl_last_report;
    n = fl_copy_string(final_path, cap, fl_state.crash_directory);
    n += fl_copy_string(final_path + n, cap - n, "/");
    n += fl_copy_string(final_path + n, cap - n, fl_state.event_id);
    fl_copy_string(final_path + n, cap - n, ".crash.json");

    int fd = open(temporary, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ENOENT && fl_make_directories(fl_state.crash_directory) == 0) {
        // Not made yet (a crash before start's preparation) or removed since: made now.
        fd = open(temporary, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
    }
    if (fd < 0) {
        FL_LOG("cannot create the crash report file");
        return -1;
    }
    fl_writer w;
    fl_writer_init(&w, fd, s->write_buffer, sizeof s->write_buffer);

    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char thread_name[17] = {0};
    syscall(SYS_prctl, PR_GET_NAME, thread_name, 0, 0, 0);
    // A signal sent by a process (kill, tgkill, raise, abort) has no fault address: si_addr
    // shares its bytes with si_pid there (the sender is sender_pid below).
    uintptr_t fault = info->si_code <= 0 ? 0 : (uintptr_t)info->si_addr;
    uintptr_t sp = fl_context_sp(uc);
    // A fault within a few pages of the stack pointer on SIGSEGV is the guard page: overflow. Not
    // the fetch of an instruction (a jump into the stack, which is not executable), and only
    // beside a stack: a readable page within 64 KiB above the fault (the stack the guard pages
    // protect; a frame larger than a page skips some); a stack pointer set to garbage faults
    // near itself too, with nothing mapped around.
    int overflow = signo == SIGSEGV && fault + 65536 > sp && fault < sp + 65536 && fault != 0 && fault != fl_context_pc(uc);
    if (overflow) {
        uintptr_t page = fl_state.page_size ? fl_state.page_size : 4096;
        char above;
        int beside = 0;
        for (uintptr_t p = (fault & ~(page - 1)) + page; !beside && p <= fault + 65536; p += page) beside = fl_safe_copy(&above, p, 1) == 0;
        overflow = beside;
    }

    fl_put(&w, "{\"format\":\"faultline-crash\",\"version\":");
    fl_put_u64(&w, FAULTLINE_CRASH_REPORT_VERSION);
    fl_put(&w, ",\"arch\":\"" FL_ARCH_NAME "\",\"event_id\":");
    fl_put_json_string(&w, fl_state.event_id);
    fl_put(&w, ",\"timestamp\":{\"sec\":");
    fl_put_i64(&w, now.tv_sec);
    fl_put(&w, ",\"nsec\":");
    fl_put_i64(&w, now.tv_nsec);
    fl_put(&w, "},\"process\":{\"pid\":");
    fl_put_i64(&w, getpid());
    fl_put(&w, ",\"executable\":");
    fl_put_json_string(&w, fl_state.executable);
    fl_put(&w, "},\"thread\":{\"tid\":");
    fl_put_i64(&w, tid);
    fl_put(&w, ",\"name\":");
    fl_put_json_string(&w, thread_name);
    fl_put(&w, "},");
    fl_put_thread_trace(&w, tid);
    fl_put(&w, "\"signal\":{\"number\":");
    fl_put_i64(&w, signo);
    fl_put(&w, ",\"name\":");
    fl_put_json_string(&w, fl_signal_name(signo));
    fl_put(&w, ",\"code\":");
    fl_put_i64(&w, info->si_code);
    fl_put(&w, ",\"code_name\":");
    fl_put_json_string(&w, fl_code_name(signo, info->si_code));
    fl_put(&w, ",\"fault_address\":\"");
    fl_put_hex(&w, fault);
    fl_put(&w, "\",\"sender_pid\":");
    fl_put_i64(&w, info->si_code <= 0 ? info->si_pid : 0);
    fl_put(&w, "},");
    fl_put_crash_message(&w);
    fl_put(&w, "\"stack_overflow\":");
    fl_put(&w, overflow ? "true," : "false,");
    fl_put_registers(&w, uc);
    fl_put(&w, ",");
    fl_put_frames(&w, &s->frames);
    fl_put_async_frames(&w);
    fl_put(&w, ",");
    fl_put_modules(&w, s);
    fl_put_threads(&w, tid, thread_name);
    fl_put(&w, ",");
    fl_put_breadcrumbs(&w);
    fl_put(&w, ",");
    if (fl_put_stderr_tail(&w)) fl_put(&w, ",");
    fl_put_session(&w);
    fl_put(&w, "\"context\":");
    uint32_t context_length = 0;
    if (fl_copy_context(s->context_copy, sizeof s->context_copy, &context_length) == 0 && context_length)
        fl_put_bytes(&w, s->context_copy, context_length);
    else fl_put(&w, "{}");
    fl_put(&w, ",\"handler\":{\"unwind_us\":");
    fl_put_u64(&w, s->unwind_ns / 1000);
    fl_put(&w, ",\"modules_us\":");
    fl_put_u64(&w, s->modules_ns / 1000);
    fl_put(&w, ",\"threads_us\":");
    fl_put_u64(&w, s->threads_ns / 1000);
    fl_put(&w, "}");
    fl_put(&w, ",\"end\":true}\n");
    int ok = fl_flush(&w) == 0;
    close(fd);
    if (!ok || rename(temporary, final_path) != 0) {
        unlink(temporary);
        fl_last_report[0] = 0;
        FL_LOG("could not write the crash report");
        return -1;
    }
    return 0;
}
