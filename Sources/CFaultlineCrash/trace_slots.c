// Per-thread trace context for crash reports: which trace and span each thread was running when
// it crashed.
//
// A fixed table, allocated with the program (no malloc), keyed by kernel thread id. Only the
// owning thread writes its entry, from the span API in normal context; the crash handler reads
// the crashing thread's entry. Writer and reader agree through a per-entry sequence number (a
// seqlock): the writer makes it odd, copies the ids, makes it even; the reader copies and checks
// the number did not move. No locks anywhere, so a thread that crashes in the middle of an update
// cannot deadlock the handler: it finds an odd sequence and reports no span.
//
// An entry is claimed by compare-and-swap on its tid (open addressing from a hash of the tid) and
// released when its thread leaves the last span. A thread that exits inside a span leaves its
// entry behind; the kernel reuses tids, and a reused tid simply takes over the entry. When the
// table is full the span is not recorded for crashes (counted), never blocked on.
#include "crash_internal.h"
#include "faultline_crash.h"

#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FL_TRACE_SLOTS 512

typedef struct {
    _Atomic long tid;            // 0: free
    _Atomic uint32_t sequence;   // odd while the owner writes
    uint64_t trace_high, trace_low, span;
} fl_trace_slot;

static fl_trace_slot fl_trace_table[FL_TRACE_SLOTS];
static _Atomic uint64_t fl_trace_table_full;

// initial-exec: a plain %fs-relative load, never a call to __tls_get_addr (which may allocate).
static __thread __attribute__((tls_model("initial-exec"))) long fl_slot_tid;
static __thread __attribute__((tls_model("initial-exec"))) int fl_slot_index = -1;

// Normal context.
static int fl_trace_slot_claim(void) {
    if (fl_slot_index >= 0) return fl_slot_index;
    if (!fl_slot_tid) fl_slot_tid = syscall(SYS_gettid);
    long tid = fl_slot_tid;
    unsigned start = (unsigned)((unsigned long)tid * 2654435761u) % FL_TRACE_SLOTS;
    for (unsigned k = 0; k < FL_TRACE_SLOTS; k++) {
        unsigned i = (start + k) % FL_TRACE_SLOTS;
        long expected = atomic_load(&fl_trace_table[i].tid);
        if (expected == tid) { fl_slot_index = (int)i; return fl_slot_index; }  // left by a dead thread with our tid
        expected = 0;
        if (atomic_compare_exchange_strong(&fl_trace_table[i].tid, &expected, tid)) {
            fl_slot_index = (int)i;
            return fl_slot_index;
        }
    }
    atomic_fetch_add(&fl_trace_table_full, 1);
    return -1;
}

// Normal context, on the thread whose span this is.
void faultline_trace_slot_set(uint64_t trace_high, uint64_t trace_low, uint64_t span) {
    if (trace_high == 0 && trace_low == 0) { faultline_trace_slot_clear(); return; }
    int i = fl_trace_slot_claim();
    if (i < 0) return;
    fl_trace_slot *s = &fl_trace_table[i];
    atomic_fetch_add(&s->sequence, 1);
    s->trace_high = trace_high;
    s->trace_low = trace_low;
    s->span = span;
    atomic_fetch_add(&s->sequence, 1);
}

// Normal context: the calling thread is in no span any more; its entry is freed for others.
void faultline_trace_slot_clear(void) {
    int i = fl_slot_index;
    if (i < 0) return;
    fl_trace_slot *s = &fl_trace_table[i];
    atomic_fetch_add(&s->sequence, 1);
    s->trace_high = s->trace_low = s->span = 0;
    atomic_fetch_add(&s->sequence, 1);
    fl_slot_index = -1;
    atomic_store(&s->tid, 0);
}

uint64_t faultline_trace_slots_unrecorded(void) { return atomic_load(&fl_trace_table_full); }

// Normal context (tests): what the handler would read for the calling thread.
int faultline_trace_slot_get(uint64_t *trace_high, uint64_t *trace_low, uint64_t *span) {
    if (!fl_slot_tid) fl_slot_tid = syscall(SYS_gettid);
    return fl_trace_slot_read(fl_slot_tid, trace_high, trace_low, span);
}

// Runs on the crashing thread; compromised context. Finds `tid`'s entry and copies it out under
// its seqlock. Returns 0 with the ids, or -1 (no entry, no span, or torn by a crash mid-write).
int fl_trace_slot_read(long tid, uint64_t *trace_high, uint64_t *trace_low, uint64_t *span) {
    unsigned start = (unsigned)((unsigned long)tid * 2654435761u) % FL_TRACE_SLOTS;
    for (unsigned k = 0; k < FL_TRACE_SLOTS; k++) {
        fl_trace_slot *s = &fl_trace_table[(start + k) % FL_TRACE_SLOTS];
        if (atomic_load(&s->tid) != tid) continue;
        for (int attempt = 0; attempt < 4; attempt++) {
            uint32_t before = atomic_load(&s->sequence);
            if (before & 1u) continue;
            uint64_t h = s->trace_high, l = s->trace_low, p = s->span;
            atomic_thread_fence(memory_order_acquire);  // the reads are done before the re-check (seqlock)
            if (atomic_load(&s->sequence) != before) continue;
            if (h == 0 && l == 0) return -1;
            *trace_high = h; *trace_low = l; *span = p;
            return 0;
        }
        return -1;
    }
    return -1;
}
