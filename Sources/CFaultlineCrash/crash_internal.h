// State shared between the start path (normal context) and the crash path (signal handler).
// Everything the handler touches is allocated here, before any crash.
#ifndef FAULTLINE_CRASH_INTERNAL_H
#define FAULTLINE_CRASH_INTERNAL_H


#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <ucontext.h>

#include "faultline_crash.h"

// Internal to the crash core: not exported from the preload library or the app.
#pragma GCC visibility push(hidden)

#define FL_SIGNAL_COUNT 6
#define FL_MAX_FRAMES 256          // frames kept in the report
#define FL_OUTER_FRAMES 64         // of those, the outermost ones kept across a deep recursion
#define FL_MAX_UNWIND_STEPS 500000  // a corrupt stack must end well before the 5 s watchdog
#define FL_MAX_MODULES 1024
#define FL_PATH_MAX 1024
#define FL_ALTSTACK_SIZE (128 * 1024)
#define FL_WRITE_BUFFER 8192

extern const int fl_crash_signals[FL_SIGNAL_COUNT];

/// One frame: the address and whether it is the exact faulting PC (only frame 0).
typedef struct {
    uintptr_t address;
    int is_pc;
} fl_frame;

typedef struct {
    fl_frame inner[FL_MAX_FRAMES - FL_OUTER_FRAMES];
    size_t inner_count;
    fl_frame outer_ring[FL_OUTER_FRAMES];  // the last FL_OUTER_FRAMES seen, as a ring
    size_t total_count;                     // frames walked in all
    const char *stopped_by;                 // "end", "limit", "error", "watchdog"
    const char *method;                     // "libunwind" or "frame-pointers"
} fl_frame_buffer;

typedef struct {
    uintptr_t base;
    uintptr_t end;
    char path[FL_PATH_MAX];
    uint8_t build_id[64];
    size_t build_id_length;
} fl_module;

typedef struct {
    _Atomic uint32_t sequence;  // odd while a writer is inside the slot (seqlock)
    uint32_t length;
    char bytes[FAULTLINE_BREADCRUMB_MAX_BYTES];
} fl_breadcrumb_slot;

/// One half of the context double buffer. The sequence is odd while a writer fills it, so the
/// handler can tell a torn copy (context set twice while it was copying) from a whole one.
typedef struct {
    _Atomic uint32_t sequence;
    uint32_t length;
    char bytes[FAULTLINE_CONTEXT_MAX_BYTES];
} fl_context_buffer;

/// Who holds the crash and how far it got (handler.c). A claim moves reporting → chaining →
/// returned; a recovered fault releases it (phase none).
enum { FL_CLAIM_NONE = 0, FL_CLAIM_REPORTING = 1, FL_CLAIM_CHAINING = 2, FL_CLAIM_RETURNED = 3 };

/// Preallocated, page-aligned block holding everything the handler writes into.
typedef struct {
    fl_frame_buffer frames;
    fl_module modules[FL_MAX_MODULES];
    size_t module_count;
    char maps_buffer[16384];        // /proc/self/maps is read in chunks through this
    char write_buffer[FL_WRITE_BUFFER];
    char context_copy[FAULTLINE_CONTEXT_MAX_BYTES];  // the context, copied out under its seqlock
} fl_crash_scratch;

typedef struct {
    // Set at start (normal context), only read by the handler.
    char crash_directory[FL_PATH_MAX];
    char executable[FL_PATH_MAX];
    char event_id[33];
    pid_t pid;
    struct sigaction previous[FL_SIGNAL_COUNT];
    fl_crash_scratch *scratch;

    // Breadcrumb ring and context, written by the SDK in normal context.
    fl_breadcrumb_slot breadcrumbs[FAULTLINE_BREADCRUMB_SLOTS];
    _Atomic uint64_t breadcrumb_next;
    fl_context_buffer context[2];
    _Atomic int context_current;

    // Crash-time coordination (handler.c).
    _Atomic pid_t handling_thread;  // tid of the thread that claimed the crash, 0 if none
    _Atomic int claim_phase;        // FL_CLAIM_*
    _Atomic uint64_t claim_generation;  // bumped by every claim: a waiter's patience restarts
    _Atomic int started;
    int probe_pipe[2];  // fl_safe_copy's fallback when process_vm_readv is filtered (seccomp)
} fl_crash_state;

extern fl_crash_state fl_state;

// crash path (signal-handler context) ---------------------------------------------------------
void fl_unwind(const ucontext_t *uc, fl_frame_buffer *out);
void fl_unwind_frame_pointers(const ucontext_t *uc, fl_frame_buffer *out);
int fl_safe_copy(void *destination, uintptr_t source, size_t length);
void fl_scan_modules(fl_crash_scratch *scratch);
int fl_write_report(int signo, const siginfo_t *info, const ucontext_t *uc, pid_t tid);
void fl_unlink_last_report(void);
void fl_handle_signal(int signo, siginfo_t *info, void *uc);

int fl_copy_context(char *out, size_t capacity, uint32_t *length);
int fl_trace_slot_read(long tid, uint64_t *trace_high, uint64_t *trace_low, uint64_t *span);  // trace_slots.c
typedef int (*fl_sigmask_fn)(int, const sigset_t *, sigset_t *);
extern _Atomic(fl_sigmask_fn) fl_next_pthread_sigmask;  // signal_mask.c, set at start
extern _Atomic(fl_sigmask_fn) fl_next_sigprocmask;

// start path (normal context) ------------------------------------------------------------------
void fl_prewarm_unwinder(void);
void fl_bind_crash_path_symbols(void);
void fl_resolve_sigmask_functions(void);
void fl_generate_event_id(char out[33]);
int fl_install_thread_hooks(void);

#pragma GCC visibility pop
#endif
