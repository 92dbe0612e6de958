// A stack of the handler's own: the crash path never depends on how much stack it was entered on.
//
// The kernel delivers a crash signal onto the thread's alternate stack, and ours are FL_ALTSTACK_SIZE
// (thread_hooks.c, thread_setup.c). But an app (or a language runtime inside it) may install its
// own, much smaller one after start — 4 KiB is common for stack-overflow detection — and a thread
// Faultline never saw may have none, so the handler would run below the frame that overflowed.
// Crash reporting needs tens of kilobytes (libunwind's cursor, the report writer, the thread dump).
// So the handler's first act, before anything that needs more than a few hundred bytes, is to
// check where it is and, unless it is on an alternate stack at least FL_ALTSTACK_SIZE long, to map
// a fresh stack with a raw mmap, make it the thread's alternate stack (a watchdog or a nested
// fault then lands on it too), and continue there. The app's own alternate stack is put back and
// the mapping released if the handler returns (a recovered fault, or a crash ending by the
// default action after the return).
//
// Rules: as handler.c (signal-safety(7)): raw syscalls only, no libc state, errno untouched by
// the caller's measure (the caller saves it before this file runs).
#include "crash_internal.h"

#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FL_GUARD_SIZE 4096

// Runs on a thread in a signal handler; compromised context. fn(argument) on the stack whose top
// is `top` (16-byte aligned); returns when fn returns, on the original stack. The frame pointer is
// saved on the old stack and chained into the new one, so a debugger can still walk across.
#if defined(__x86_64__)
__attribute__((naked, noinline)) static void fl_call_with_stack(void *argument, void (*fn)(void *), void *top) {
    __asm__ volatile(
        "push %rbp\n\t"
        "mov %rsp, %rbp\n\t"
        "mov %rdx, %rsp\n\t"
        "call *%rsi\n\t"
        "mov %rbp, %rsp\n\t"
        "pop %rbp\n\t"
        "ret\n\t");
}
#elif defined(__aarch64__)
__attribute__((naked, noinline)) static void fl_call_with_stack(void *argument, void (*fn)(void *), void *top) {
    __asm__ volatile(
        "stp x29, x30, [sp, #-16]!\n\t"
        "mov x29, sp\n\t"
        "mov sp, x2\n\t"
        "blr x1\n\t"
        "mov sp, x29\n\t"
        "ldp x29, x30, [sp], #16\n\t"
        "ret\n\t");
}
#else
#error "fl_call_with_stack: no stack switch for this architecture"
#endif

// Runs on a thread in a signal handler; compromised context. 1 when the handler already runs on
// an alternate stack with room for the whole crash path.
int fl_on_roomy_stack(void) {
    stack_t current;
    if (syscall(SYS_sigaltstack, NULL, &current) != 0) return 0;
    return (current.ss_flags & SS_ONSTACK) && current.ss_size >= FL_ALTSTACK_SIZE;
}

typedef struct {
    void (*fn)(void *);
    void *argument;
    stack_t fresh;
} fl_fresh_stack_call;

// Runs on the fresh stack; compromised context. Off the entry stack now, so the kernel accepts a
// new alternate stack for this thread (it refuses while the thread runs on the registered one).
static void fl_enter_fresh_stack(void *raw) {
    fl_fresh_stack_call *call = raw;
    syscall(SYS_sigaltstack, &call->fresh, NULL);
    call->fn(call->argument);
}

// Runs on a thread in a signal handler; compromised context. Returns 0 once fn(argument) has run
// on a fresh stack, -1 (fn not run) when none could be mapped.
int fl_run_on_fresh_stack(void (*fn)(void *), void *argument) {
    stack_t entry;
    int have_entry = syscall(SYS_sigaltstack, NULL, &entry) == 0;
    size_t length = FL_HANDLER_STACK_SIZE + FL_GUARD_SIZE;
    long mapped = syscall(SYS_mmap, NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped == -1) return -1;
    char *base = (char *)(uintptr_t)mapped;
    syscall(SYS_mprotect, base, FL_GUARD_SIZE, PROT_NONE);  // an overflow of ours faults, not scribbles
    fl_fresh_stack_call call = {fn, argument, {.ss_sp = base + FL_GUARD_SIZE, .ss_flags = 0, .ss_size = FL_HANDLER_STACK_SIZE}};
    fl_call_with_stack(&call, fl_enter_fresh_stack, base + length);
    if (have_entry) {
        // Back on the entry stack: the app's alternate stack again (rt_sigreturn would restore it
        // too; doing it here lets the mapping go now).
        entry.ss_flags &= ~SS_ONSTACK;
        syscall(SYS_sigaltstack, &entry, NULL);
    }
    syscall(SYS_munmap, base, length);
    return 0;
}
