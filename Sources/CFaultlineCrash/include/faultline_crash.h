// Faultline crash core: the C API the Swift SDK (and the LD_PRELOAD library) drive.
//
// Everything here is called in normal context. Only the signal handler and what it calls
// (handler.c, report_writer.c, module_scan.c, unwind.c, safe_io.c) runs in a crashed process;
// see the design essay at the top of handler.c.
#ifndef FAULTLINE_CRASH_H
#define FAULTLINE_CRASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Version of the crash report JSON this core writes (docs/CRASH-REPORT.md).
#define FAULTLINE_CRASH_REPORT_VERSION 2
/// Breadcrumb ring: the last N breadcrumbs (JSON objects, or the SDK's binary records), each at
/// most this many bytes.
#define FAULTLINE_BREADCRUMB_SLOTS 32
#define FAULTLINE_BREADCRUMB_MAX_BYTES 1024
/// Pre-serialised context (release, environment, …) as one JSON object.
#define FAULTLINE_CONTEXT_MAX_BYTES 8192
/// Why the process crashed, as its runtime said it (report field `message`): longer texts are cut.
#define FAULTLINE_CRASH_MESSAGE_MAX_BYTES 2048
#define FAULTLINE_CRASH_MESSAGE_TYPE_MAX_BYTES 256

/// Prepares everything the handler needs (alternate stack, buffers, pre-warmed unwinder, event id,
/// crash directory) and installs handlers for SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV and SIGTRAP.
/// The crash directory must be a writable directory, or not exist below a writable one: then the
/// background thread creates it (with any missing parents, mode 0700), and a crash that comes
/// first, or finds it removed, creates it itself. Safe to call again: a second call only changes
/// the crash directory.
/// Returns 0, or -1 with a message in `error` (the process keeps running without the handler).
int faultline_crash_start(const char *crash_directory, char *error, size_t error_capacity);

/// `faultline_crash_start` without a thread: the preparation (libunwind's pre-warm, alternate
/// stacks for threads already running, the module table) runs on the calling thread before it
/// returns. For the preload library's constructor: a program that starts single-threaded stays
/// so (a user namespace can only be entered by a single-threaded process: `unshare -r`), and no
/// crash can come before the preparation.
int faultline_crash_start_in_place(const char *crash_directory, char *error, size_t error_capacity);

/// `faultline_crash_start`, then `then(argument)` on start's background thread once that thread's
/// own preparation is done (also when the core was already started). The Swift SDK passes its
/// own start-up work (outbox scan, crash pickup, network set-up), so its start creates one thread.
int faultline_crash_start_then(const char *crash_directory, char *error, size_t error_capacity,
                               void (*then)(void *), void *argument);

/// Start hands three preparations to a background thread so it returns at once: libunwind's
/// pre-warm, alternate stacks for threads that were already running, and the module table a crash
/// report reuses. Waits up to `timeout_ms` for them; returns 1 when done. A crash before then is
/// still reported with libunwind's full walk: a thread that crashes before the background thread
/// has begun the pre-warm does it itself, one that crashes while it is under way waits for it
/// (bounded). Only a crash inside the pre-warm itself, or in a child forked while it was under
/// way, is walked by frame pointers, and the report says why (`unwind.fallback`). Modules are then
/// read from /proc/self/maps, and a stack overflow on a thread that was running before start
/// might not be reported.
int faultline_crash_wait_for_preparation(unsigned timeout_ms);

/// Tests only: the next start's background preparation sleeps this long before it begins, so a
/// test can crash inside the window between start and the pre-warm.
void faultline_crash_delay_preparation_for_testing(unsigned milliseconds);

/// Tests only: the next start's background preparation raises `signo` on its own thread once it
/// has begun the pre-warm, so a test can crash inside the preparation itself.
void faultline_crash_fault_during_preparation_for_testing(int signo);

/// Tests only: the crash handler's watchdog fires after this many milliseconds instead of 5 s, so
/// a test can see what a report cut short by it keeps (0: back to 5 s).
void faultline_crash_set_watchdog_for_testing(unsigned milliseconds);

/// Tests only: the next start's background preparation holds the pre-warm it has begun for this
/// long before doing it, so a test can crash on another thread while the pre-warm is under way.
/// `faultline_crash_unwinder_preparation_held_for_testing` is 1 while it is held.
void faultline_crash_hold_unwinder_preparation_for_testing(unsigned milliseconds);
int faultline_crash_unwinder_preparation_held_for_testing(void);

/// Tests only: every other thread's stack gets this many milliseconds in all instead of the
/// usual budget, so a test can see what the report says of the threads not asked in time.
void faultline_crash_set_thread_dump_budget_for_testing(unsigned milliseconds);

/// 1 after a successful start.
int faultline_crash_is_started(void);


/// Copies one breadcrumb (a complete JSON object) into the ring; longer ones, and bytes that
/// begin as the SDK's binary records do (0xFB, never UTF-8), are rejected (-1).
int faultline_crash_add_breadcrumb(const char *json, size_t length);

/// A breadcrumb written in place (the SDK's log path: a binary record, no copy, no allocation;
/// the report carries it as hex, see FaultlineProtocol/BreadcrumbRecord.swift): reserve returns the
/// next slot's buffer (FAULTLINE_BREADCRUMB_MAX_BYTES) and holds the ring's writer lock until
/// commit. Commit with the length written; 0 leaves the slot empty and adds nothing.
char *faultline_crash_reserve_breadcrumb(void);
void faultline_crash_commit_breadcrumb(size_t length);

/// Copies the breadcrumb `age` places back from the newest (0) into `out` (normal context, for
/// events); returns its length, 0 when there is none that old or it does not fit.
size_t faultline_crash_copy_breadcrumb(size_t age, char *out, size_t capacity);

/// Replaces the context object the next report will carry. Returns -1 if too long.
int faultline_crash_set_context(const char *json, size_t length);

/// Records why the process is about to crash, for the report the handler writes next: called in
/// normal context by the C++ terminate handler (`source` "c++", the exception's demangled type and
/// `what()`), or by a runtime hook of an application. Texts longer than the limits above are cut
/// at a UTF-8 boundary. A later call replaces an earlier one. Returns 0.
int faultline_crash_set_message(const char *source, const char *type, const char *text);

/// The session a crash of this process ends (report field `session`): its id (at most 32 bytes)
/// and when it began (RFC 3339, at most 63 bytes). A forked child forgets it: its crash ends none
/// of its parent's sessions. Returns -1 if a string is too long.
int faultline_crash_set_session(const char *session_id, const char *started);

/// The session's opening update (`init: true`) is durably queued: a report written from now on
/// says so (`start_queued`), and the next launch does not count the session's start again.
void faultline_crash_session_start_queued(void);

/// One more error captured in the session (a report written from now on carries the count in
/// `session.errors`, and the crashed session's update counts them with the crash).
void faultline_crash_session_error_captured(void);

/// The event id (32 lowercase hex) the next crash report will carry; `out` needs 33 bytes.
void faultline_crash_current_event_id(char *out);

/// Maps an alternate signal stack (with guard pages) for the calling thread, if it has none of
/// ours. Threads created through pthread_create after start get one automatically.
int faultline_crash_install_alternate_stack(void);

/// Whether the calling thread runs on a Faultline alternate stack when a signal arrives.
int faultline_crash_thread_has_alternate_stack(void);

/// Size in bytes of everything the handler reserves up front (for the measurements script).
size_t faultline_crash_reserved_bytes(void);

/// The kernel thread id of the caller (what crash reports record as `thread.tid`).
long faultline_current_thread_id(void);

/// One loaded module, for events captured in normal context (not used by the crash path).
typedef struct {
    uintptr_t base;        // lowest mapped address (Sentry image_addr)
    uintptr_t size;        // bytes from base to the end of the last PT_LOAD segment
    char path[1024];
    uint8_t build_id[64];
    size_t build_id_length;
} faultline_module_info;

/// Lists loaded modules with dl_iterate_phdr (normal context only: it takes the loader lock).
/// Returns how many were found (may exceed capacity; only `capacity` are written).
size_t faultline_list_modules(faultline_module_info *out, size_t capacity);

/// The calling thread's current trace and span (trace_slots.c), what a crash report on this
/// thread names. Only the owning thread writes its entry; lock-free, no allocation.
/// A zero trace id clears it.
void faultline_trace_slot_set(uint64_t trace_high, uint64_t trace_low, uint64_t span);
/// The calling thread is in no span any more.
void faultline_trace_slot_clear(void);
/// Reads the calling thread's entry as the handler would (tests). 0 with the ids, -1 if none.
int faultline_trace_slot_get(uint64_t *trace_high, uint64_t *trace_low, uint64_t *span);
/// Span updates not recorded because the table was full.
uint64_t faultline_trace_slots_unrecorded(void);

#ifdef __cplusplus
}
#endif
#endif
