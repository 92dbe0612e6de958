// Ways to crash a process on purpose, for the test crasher. Each never returns normally.
#pragma once
#include <stddef.h>

void probe_segv(void);
void probe_bus(const char *scratch_file);
void probe_fpe(void);
void probe_ill(void);
void probe_trap(void);
void probe_abort(void);
void probe_double_free(void);
void probe_c_stack_overflow(void);
void probe_segv_on_pthread(int stack_overflow);
void probe_segv_on_threads(int count);
void probe_dlopen_and_crash(const char *library_path);
void probe_call_null(void);
void probe_call_unmapped(void);
void probe_jump_unmapped(void);
void probe_call_data(void);
void probe_vfork_child_then_parent(void);
/// Installs a SA_SIGINFO handler for the six crash signals that writes `marker_path` and returns;
/// models an application's or runtime's own handler installed before Faultline.
void probe_install_previous_handler(const char *marker_path);
/// Recurses `depth` frames, prints CLOCK_REALTIME in ns on stdout, then faults.
void probe_recurse_then_segv(int depth);
/// Another thread takes the dynamic loader's lock (inside a dl_iterate_phdr callback) and never
/// lets go; then this thread faults. Unwinders that ask the loader (libunwind does) block.
void probe_segv_while_loader_lock_held(void);
/// Names the thread with bytes that are not UTF-8 (as the kernel's 15-byte cut of a UTF-8 name can), then faults.
void probe_segv_with_invalid_utf8_thread_name(void);
/// Installs a SIGSEGV handler that, like a JIT or a GC barrier, fixes faults on its own guard
/// page and resumes; any other fault it hands to the default action. Call before Faultline starts.
void probe_install_recovering_handler(void);
/// Touches the guard page (recovered by the handler above), prints "recovered", and returns.
void probe_touch_guard_page(void);
/// `count` threads (at most 15) start together, thread i waits i * stagger_us, then each touches
/// its own guard page (thread 0 after a 2,000-frame recursion); prints "recovered R of N". With
/// `real_crash`, the last thread dereferences a bad pointer instead (a crash nobody recovers).
void probe_recover_on_threads(int count, int stagger_us, int real_crash);
/// Writes "faultline-test: faulting now" to stderr with one write(2), then faults.
void probe_segv_after_marker(void);
/// Another thread sets the crash context in a tight loop (two objects, 5,999 and ~22 bytes) while
/// this one faults.
void probe_segv_while_context_changes(void);
/// Writes text to stderr through C stdio (stderr-capture tests).
void probe_stderr_printf(const char *text);
/// assert(value > 5): glibc prints and keeps "…: Assertion `value > 5' failed." and aborts.
void probe_assert(int value);
/// Throws std::out_of_range("cache miss: zz") through a C++ frame nobody catches in.
void probe_throw_cxx(void);
/// Throws std::runtime_error with a what() of 5,000 'x' characters, uncaught.
void probe_throw_cxx_long(void);
/// Creates a thread before Faultline starts (raw_clone: with clone(2), bypassing pthread_create)
/// that waits for probe_release_pre_start_thread_and_wait, then overflows its stack.
void probe_spawn_thread_before_start(int raw_clone);
void probe_release_pre_start_thread_and_wait(void);
/// Starts `count` threads parked in different ways (the first eight: sleep, condition wait, pipe
/// read, poll, busy loop, mutex, pause, all signals blocked; named park-*), then faults on the
/// calling thread.
void probe_crash_with_parked_threads(int count);
/// Has another thread send the calling thread SIGUSR1 (counted by a handler) as fast as it can,
/// for the rest of the process's life; returns once 100 have arrived.
void probe_start_signal_storm(void);
/// Gives the calling thread an alternate signal stack of the app's own (`size` bytes), replacing
/// Faultline's: its crash handler then moves to a stack of its own.
void probe_use_own_alternate_stack(size_t size);
