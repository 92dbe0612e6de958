// State shared between the start path (normal context) and the crash path (signal handler).
// Everything the handler touches is allocated here, before any crash.
#ifndef FAULTLINE_CRASH_INTERNAL_H
#define FAULTLINE_CRASH_INTERNAL_H


#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <ucontext.h>

#include "faultline_crash.h"
#include "machine_context.h"

// Internal to the crash core: not exported from the preload library or the app.
#pragma GCC visibility push(hidden)

#define FL_SIGNAL_COUNT 6
#define FL_MAX_FRAMES 256          // frames kept in the report
#define FL_OUTER_FRAMES 64         // of those, the outermost ones kept across a deep recursion
#define FL_MAX_UNWIND_STEPS 500000  // a corrupt stack must end well before the 5 s watchdog
#define FL_MAX_MODULES 1024
// Past this many modules a crash's scan keeps only the ones that hold a frame of the crashing
// thread (the rest are counted in the report's `modules_omitted`).
#define FL_MODULES_TAKEN_AS_THEY_COME (FL_MAX_MODULES - 64)
#define FL_PATH_MAX 1024
#define FL_ALTSTACK_SIZE (128 * 1024)
#define FL_WRITE_BUFFER 8192
// A crash handler entered on a stack it did not set up (an app's own small sigaltstack, or a
// thread with none) moves to a fresh mapping of this size before doing anything else.
#define FL_HANDLER_STACK_SIZE (256 * 1024)
// The forked child of a process whose pre-warm was under way: libunwind's lock may be held by a
// thread that does not exist there, so that child never enters libunwind.
#define FL_UNWINDER_ABANDONED (-1)

// Code of ours that can appear in a reported stack (the thread-start wrapper, the signal handler,
// the C++ terminate handler) lives in one section, so the report can mark those frames as
// Faultline's own by address, before any symbolication (report_writer.c).
#define FL_OWN_CODE_SECTION "faultline_own_code"
#define FL_OWN_CODE __attribute__((section(FL_OWN_CODE_SECTION), noinline))

// The monotonic clock (monotonic_clock.c): bounded waits in the handler are measured by it, never
// by counting naps, which the app's signals cut short.
uint64_t fl_monotonic_ns(void);
int64_t fl_monotonic_ms(void);

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
    const char *fallback;                   // why frame pointers were walked instead of libunwind
    int prewarmed_by_crash;                 // the crashing thread pre-warmed libunwind itself
} fl_frame_buffer;

// fl_frame_buffer.method of a libunwind walk (unwind.c): compared by address, as the crash path
// calls no string comparison.
extern const char fl_method_libunwind[];

typedef struct {
    uintptr_t base;
    uintptr_t end;
    char path[FL_PATH_MAX];
    uint8_t build_id[64];
    size_t build_id_length;
} fl_module;

/// The first byte of a slot holding the SDK's binary breadcrumb record (FaultlineProtocol's
/// BreadcrumbRecord.magic) rather than JSON: never the first byte of UTF-8 text.
#define FL_BREADCRUMB_RECORD_MAGIC 0xFBu

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

/// A crash message recorded in normal context (faultline_crash_set_message), read by the handler
/// under its sequence count like the context.
typedef struct {
    _Atomic uint32_t sequence;
    char source[16];
    char type[FAULTLINE_CRASH_MESSAGE_TYPE_MAX_BYTES];
    char text[FAULTLINE_CRASH_MESSAGE_MAX_BYTES];
} fl_message_slot;

/// Every other thread's stack at crash time (thread_dump.c): one slot per thread, filled by the
/// thread itself in its answer to the dump signal.
#define FL_MAX_THREADS 1024        // threads listed in a report; more are counted, not listed
#define FL_THREAD_FRAMES 64        // frames kept per thread (the crashing thread keeps FL_MAX_FRAMES)
// Every other thread's stack gets this long in all, from the first request: a process with a
// thousand threads still dies within half a second of its fault (each answer needs its thread
// scheduled, which on a loaded machine takes a good part of a millisecond). The threads not asked
// by then are listed with their names and states and an error that says why they have no frames.
#define FL_THREAD_DUMP_BUDGET_MS 300
// The name of the thread start makes for its preparation: given at its creation (it inherits
// the creator's), so a crash before it first runs already tells it from the app's threads.
#define FL_START_THREAD_NAME "faultline.start"
#define FL_THREAD_ANSWER_WAIT_MS 100  // wait for one thread's answer before giving up on it
// Requests outstanding at once: each answer needs its thread scheduled, and on a busy machine a
// woken thread may wait for a CPU; asked a few at a time, those waits overlap instead of adding
// up, while a thousand threads are not all woken to queue on libunwind's and the loader's locks.
#define FL_THREAD_ASKS_IN_FLIGHT 16
// A slot moves requested → working → done in its own thread's answer; the crashing thread marks
// it gone (exited before it could be asked) or silent (no answer by the deadline).
enum { FL_SLOT_EMPTY = 0, FL_SLOT_REQUESTED, FL_SLOT_WORKING, FL_SLOT_DONE, FL_SLOT_GONE, FL_SLOT_SILENT };
typedef struct {
    _Atomic int state;     // FL_SLOT_*
    pid_t tid;
    char name[16];
    char run_state;        // from /proc/self/task/<tid>/stat: R, S, D, T, t, Z, …
    int blocks_request;    // its SigBlk has the dump signal: not waited for
    int faultline_own;     // Faultline's start thread (FL_START_THREAD_NAME): left out of the report
    int asked;             // the dump signal was sent to it (not: blocked, gone, or out of time)
    fl_registers registers;
    uint32_t frame_count;
    const char *stopped_by;  // "end", "limit", "error"
    uintptr_t frames[FL_THREAD_FRAMES];  // frame 0 the interrupted pc, then return addresses
} fl_thread_slot;
typedef struct {
    _Atomic int collecting;  // answers are accepted only while the holder collects
    _Atomic int release;     // answered threads stay parked in their handler until this is set
    int collected;           // the table describes this crash (the report lists it)
    size_t count;            // slots in use
    size_t total;            // threads seen (may exceed FL_MAX_THREADS)
    fl_thread_slot slots[FL_MAX_THREADS];
} fl_thread_table;

/// Who holds the crash and how far it got (handler.c). A claim moves reporting → chaining →
/// returned; a recovered fault releases it (phase none).
enum { FL_CLAIM_NONE = 0, FL_CLAIM_REPORTING = 1, FL_CLAIM_CHAINING = 2, FL_CLAIM_RETURNED = 3 };

/// The module table as read at start (module_scan.c), reused by the crash path while the
/// loader's list of objects is unchanged.
#define FL_MAX_LOADED_OBJECTS 512  // loader list entries checked in one read; more: always rescan
typedef struct {
    uintptr_t addr, name, ld, next;  // the public head of glibc's struct link_map
} fl_link_map_head;
typedef struct {
    _Atomic int ready;
    uintptr_t first_object;                       // r_debug.r_map when cached
    size_t object_count;
    uintptr_t objects[FL_MAX_LOADED_OBJECTS];     // each link_map's address
    fl_link_map_head heads[FL_MAX_LOADED_OBJECTS];  // and what it held
    size_t count;
    size_t omitted;  // modules past FL_MAX_MODULES at start: a crash then scans for itself
    fl_module modules[FL_MAX_MODULES];
    char maps_buffer[16384];
} fl_module_cache;

/// Preallocated, page-aligned block holding everything the handler writes into.
typedef struct {
    fl_frame_buffer frames;
    fl_module modules[FL_MAX_MODULES];
    size_t module_count;
    size_t modules_omitted;  // ELF modules a full table left out (report field `modules_omitted`)
    // What the report lists: `modules` above after a fresh scan, or the start-time cache when
    // nothing was loaded since (no copy: the cache is final once ready).
    const fl_module *report_modules;
    size_t report_module_count;
    char maps_buffer[16384];        // /proc/self/maps is read in chunks through this
    char write_buffer[FL_WRITE_BUFFER];
    char context_copy[FAULTLINE_CONTEXT_MAX_BYTES];  // the context, copied out under its seqlock
    // The loader list re-read in one process_vm_readv (module_scan.c).
    struct iovec loader_remote[FL_MAX_LOADED_OBJECTS];
    fl_link_map_head loader_heads[FL_MAX_LOADED_OBJECTS];
    // Where the handler's time went (report field `handler`), in nanoseconds.
    uint64_t unwind_ns, modules_ns, threads_ns;
    fl_message_slot message_copy;                     // the crash message, copied out likewise
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

    // Why it crashed, where runtimes keep it (crash_message.c finds them at start).
    char *const *swift_fatal_message;  // swift_getFatalErrorMessageBuffer(); NULL without Swift
    void *const *glibc_abort_message;  // &__abort_msg (a struct abort_msg_s *); NULL if absent
    fl_message_slot message;           // faultline_crash_set_message (the C++ terminate handler)

    // Modules (module_scan.c): glibc's r_debug (the loader's list of objects) and the module
    // table cached at start.
    void *loader_debug;
    fl_module_cache *module_cache;

    // All threads (thread_dump.c): the table (mapped at start) and the signal that asks each
    // thread for its stack (a real-time signal nobody else handled at start; 0 or -1 if none).
    fl_thread_table *threads;
    _Atomic int dump_signal;

    // Crash-time coordination (handler.c).
    _Atomic pid_t handling_thread;  // tid of the thread that claimed the crash, 0 if none
    _Atomic pid_t claim_pid;        // the process of that thread (a vfork child shares this memory)
    _Atomic int claim_phase;        // FL_CLAIM_*
    _Atomic uint64_t claim_generation;  // bumped by every claim: a waiter's patience restarts
    _Atomic int started;
    // Set once libunwind has been pre-warmed (its lazy initialisation takes a mutex and parses
    // every object's unwind tables). Whoever begins the pre-warm first owns it (unwinder_owner:
    // its thread id): start's background thread normally, or a thread that crashes before that
    // thread has begun, which then does it itself (handler.c, fl_ready_unwinder).
    _Atomic int unwinder_ready;
    _Atomic int unwinder_owner;  // 0: not begun; a tid: that thread is pre-warming; or FL_UNWINDER_ABANDONED
    // Swift's runtime backtracer (installed before main) is chained to only when the user asked
    // for it with SWIFT_BACKTRACE: otherwise, once our report is written, the crash ends as if the
    // previous action were the default one (docs/CRASH-HANDLER.md, "Swift's backtracer").
    int previous_is_swift_backtracer[FL_SIGNAL_COUNT];
    int chain_to_swift_backtracer;
    int probe_pipe[2];  // fl_safe_copy's fallback when process_vm_readv is filtered (seccomp)
    ino_t probe_pipe_inode;  // the pipe's, so an fd the app closed and reused is never written to
    size_t page_size;
    // Set while a seccomp filter is on (fl_note_syscall_filter): it may kill the process for a
    // call it does not allow, so process_vm_readv is not risked (the pipe copies instead).
    _Atomic int syscalls_filtered;
    // The return address of a handler the kernel calls: glibc's signal trampoline, read back
    // after installing ours (NULL where the kernel provides it: aarch64's vDSO).
    void *kernel_restorer;
} fl_crash_state;

extern fl_crash_state fl_state;

// normal context, forked child (start.c) ---------------------------------------------------------
void fl_breadcrumb_ring_after_fork(void);

// crash path (signal-handler context) ---------------------------------------------------------
void fl_unwind(const ucontext_t *uc, fl_frame_buffer *out, int pc_is_no_code);
void fl_unwind_frame_pointers(const ucontext_t *uc, fl_frame_buffer *out);
int fl_frame_pointer_step(uintptr_t *fp, uintptr_t *sp, uintptr_t *return_address);
int fl_safe_copy(void *destination, uintptr_t source, size_t length);
void fl_note_syscall_filter(char *buffer, size_t capacity);  // module_scan.c: sets syscalls_filtered
void fl_scan_modules(fl_crash_scratch *scratch);
void fl_fill_module_cache(fl_module_cache *cache);
int fl_write_report(int signo, const siginfo_t *info, const ucontext_t *uc, pid_t tid);
void fl_unlink_last_report(void);
void fl_handle_signal(int signo, siginfo_t *info, void *uc);
typedef void (*fl_signal_entry)(int signo, siginfo_t *info, void *context);
void fl_run_on_roomy_stack(fl_signal_entry fn, int signo, siginfo_t *info, void *context);  // handler_stack.c
// handler_stack.c: whether a handler's arguments are the kernel's (readable, and the siginfo names
// this signal); not when another program's handler called ours as a plain function, f(signo).
int fl_signal_details_usable(int signo, const siginfo_t *info, const void *context, const void *caller);
// The si_code of the siginfo that stands in for missing details (handler.c): above every code the
// kernel uses, so it reads as no sender and no fault address.
#define FL_SI_NO_DETAILS 0x7fff
const sigset_t *fl_crash_entry_mask(void);  // handler_stack.c: the crash handler's sa_mask

int fl_copy_context(char *out, size_t capacity, uint32_t *length);
int fl_trace_slot_read(long tid, uint64_t *trace_high, uint64_t *trace_low, uint64_t *span);  // trace_slots.c
typedef int (*fl_sigmask_fn)(int, const sigset_t *, sigset_t *);
extern _Atomic(fl_sigmask_fn) fl_next_pthread_sigmask;  // signal_mask.c, set at start
extern _Atomic(fl_sigmask_fn) fl_next_sigprocmask;

// start path (normal context) ------------------------------------------------------------------
void fl_prepare_crash_entry_mask(void);  // handler_stack.c
void fl_note_thread_started_after_start(void);  // thread_setup.c
void fl_prewarm_unwinder(void);
void fl_bind_crash_path_symbols(void);
void fl_find_crash_message_sources(void);
int fl_cover_existing_threads(pid_t except);  // thread_setup.c: answers received, or -1
int fl_prepare_thread_dump(void);      // thread_setup.c (start): table and signal
void fl_confirm_dump_signal(void);    // thread_setup.c (background): the signal can be sent
void fl_collect_threads(pid_t crashing_thread);  // thread_dump.c (crash path)
void fl_answer_dump_request(int signo, siginfo_t *info, void *context);  // thread_dump.c
void fl_dump_signal_action(struct sigaction *ours);  // thread_dump.c: the dump signal's disposition
void fl_release_parked_threads(void);  // thread_dump.c: the crash was no crash after all
void fl_begin_stack_walk(void);  // signal_mask.c: libunwind's masking is answered without syscalls
void fl_end_stack_walk(void);
void fl_resolve_sigmask_functions(void);
void fl_generate_event_id(char out[33]);
/// Whether the thread holding the crash claim is gone (handler.c).
int fl_claim_holder_is_gone(pid_t holder);
void fl_hold_exit_while_crashing(void);  // handler.c: exit() waits for a crash being reported
int fl_install_thread_hooks(void);

#pragma GCC visibility pop
#endif
