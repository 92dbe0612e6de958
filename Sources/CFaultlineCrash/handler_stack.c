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
// Until it is off the entry stack, no other signal may be delivered to the thread: the kernel
// puts a nested signal's frame (several kilobytes with the FPU state) on the stack the thread is
// running on, the small alternate stack, whether or not that handler asked for one; the frame
// does not fit and the kernel kills the process before any handler runs. It can come as soon as
// the crash frame is pushed (the kernel delivers every pending signal on the same return) or at
// any of the entry's system calls: an app's SIGUSR1 or profiler tick, or a real-time signal of
// Faultline's own background preparation. So the crash signals' handler is installed with every
// other signal in its mask (fl_crash_entry_mask), and once on a roomy stack the handler opens
// only Faultline's thread-dump signal (a crash on another thread still gets this thread's stack in
// its report): the app's signals stay blocked as on the ordinary path, which is entered on a roomy
// stack with the same sa_mask; it closes the mask again before it goes back.
//
// Rules: as handler.c (signal-safety(7)): system calls made inline only, no libc state, errno
// untouched.
#include "crash_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>
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
// GCC has no naked functions on aarch64 (its prologue would run before the switch), so the
// function is written whole in assembly.
void fl_call_with_stack(void *argument, void (*fn)(void *), void *top) __attribute__((visibility("hidden")));
__asm__(
    ".text\n\t"
    ".p2align 2\n\t"
    ".type fl_call_with_stack, %function\n"
    "fl_call_with_stack:\n\t"
    "stp x29, x30, [sp, #-16]!\n\t"
    "mov x29, sp\n\t"
    "mov sp, x2\n\t"
    "blr x1\n\t"
    "mov sp, x29\n\t"
    "ldp x29, x30, [sp], #16\n\t"
    "ret\n\t"
    ".size fl_call_with_stack, .-fl_call_with_stack\n");
#else
#error "fl_call_with_stack: no stack switch for this architecture"
#endif

// Runs in a signal handler; compromised context. A system call made inline, without libc's
// syscall() (whose frame and stack-passed sixth argument cost the entry stack bytes it may not
// have) and without touching errno. Returns the kernel's answer: -errno on failure.
__attribute__((always_inline)) static inline long fl_entry_syscall(long number, long a, long b, long c, long d, long e, long f) {
#if defined(__x86_64__)
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long result;
    __asm__ volatile("syscall" : "=a"(result) : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
    return result;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = number;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
    return x0;
#endif
}

static sigset_t fl_entry_mask;

// Normal context (start, before the handlers are installed). Every signal, glibc's internal ones
// too (they wait the few system calls until the mask opens), but the crash signals: a fault with
// its signal blocked kills the process outright, and a fault inside the handler must reach it
// (handler.c, fl_claim). Plain bit operations, as in signal_mask.c: this file is crash-path code
// and imports no libc function.
void fl_prepare_crash_entry_mask(void) {
    unsigned long *words = (unsigned long *)(void *)&fl_entry_mask;
    const int bits = 8 * (int)sizeof(unsigned long);
    for (size_t i = 0; i < sizeof fl_entry_mask / sizeof *words; i++) words[i] = ~0UL;
    for (int i = 0; i < FL_SIGNAL_COUNT; i++)
        words[(fl_crash_signals[i] - 1) / bits] &= ~(1UL << ((fl_crash_signals[i] - 1) % bits));
}

// Runs anywhere, also in a signal handler: the sa_mask for the crash signals' handler.
const sigset_t *fl_crash_entry_mask(void) { return &fl_entry_mask; }

// Runs on a thread in a signal handler; compromised context; on a roomy stack. fn with the
// thread-dump signal opened; the mask it was entered with is put back before returning, still on
// this stack, since the way back (a recovered fault, a crash that ends by returning to its
// faulting instruction) may lead onto a small one again.
static void fl_run_with_handler_mask(fl_signal_entry fn, int signo, siginfo_t *info, void *context) {
    // The kernel's sigset: one bit per signal, in the first word of glibc's larger sigset_t.
    // Only Faultline's thread-dump signal is opened: the app's signals stay blocked as on the
    // handler's ordinary path (its sa_mask), where a storm of them (a profiler's ticks, an app
    // signalling as fast as it can) would otherwise run between each of the handler's steps and
    // starve the walk until the watchdog.
    unsigned long entered = 0, opened = 0;
    int dump = atomic_load(&fl_state.dump_signal);
    if (dump > 0 && dump <= 64) opened = 1UL << (dump - 1);
    fl_entry_syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&opened, (long)&entered, sizeof opened, 0, 0);
    fn(signo, info, context);
    fl_entry_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long)&entered, 0, sizeof entered, 0, 0);
}

// Runs on a thread in a signal handler, on the entry stack; compromised context. The kernel
// passes a SA_SIGINFO handler its siginfo and context; a handler another program installed after
// ours may call ours as the handler it replaced, but as a plain function (Ruby does, after
// printing its own report: f(signo)), and the other two arguments are then whatever the
// registers held. Usable only when both lie in readable memory (the first and last byte of what
// is read of each: neither spans more than two pages) and the siginfo names this signal. Of the
// context, what the handler reads: the registers and the first word of the signal mask, the
// kernel's own fixed part (glibc's ucontext_t is longer: a kernel context near the top of an
// alternate stack may end before it). When the kernel refuses the read itself (seccomp),
// alignment and a non-null page are all that is checked.
int fl_signal_details_usable(int signo, const siginfo_t *info, const void *context, const void *caller) {
    // Called by the kernel (it returns to the signal trampoline): its details are the kernel's.
    // The common case asks the kernel for nothing, which also matters under a seccomp filter that
    // kills for process_vm_readv.
    if (caller && caller == fl_state.kernel_restorer) return 1;
    uintptr_t i = (uintptr_t)info, c = (uintptr_t)context;
    if (i < 4096 || c < 4096 || (i & 7) || (c & 7)) return 0;
    if (atomic_load(&fl_state.syscalls_filtered)) return info->si_signo == signo;  // as when the kernel refuses the read
#if defined(__aarch64__)
    // aarch64 lays the registers out after the mask; the state records beyond pstate are not read.
    const uintptr_t context_read = offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, __reserved);
#else
    const uintptr_t context_read = offsetof(ucontext_t, uc_sigmask) + sizeof(unsigned long);
#endif
    char probe[4];
    struct iovec local = {probe, sizeof probe};
    struct iovec remote[4] = {
        {(void *)i, 1}, {(void *)(i + sizeof(siginfo_t) - 1), 1}, {(void *)c, 1}, {(void *)(c + context_read - 1), 1}};
    long pid = fl_entry_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0);
    long read = fl_entry_syscall(SYS_process_vm_readv, pid, (long)&local, 1, (long)remote, 4, 0);
    if (read == -EFAULT || (read >= 0 && read != (long)sizeof probe)) return 0;
    return info->si_signo == signo;
}

// What the fresh stack's first frame needs; it lives at the top of the fresh mapping itself, so
// the entry stack holds none of it.
typedef struct {
    fl_signal_entry fn;
    int signo;
    siginfo_t *info;
    void *context;
    stack_t fresh;
} fl_fresh_stack_call;

// Runs on the fresh stack; compromised context. Off the entry stack now, so the kernel accepts a
// new alternate stack for this thread (it refuses while the thread runs on the registered one).
static void fl_enter_fresh_stack(void *raw) {
    fl_fresh_stack_call *call = raw;
    fl_entry_syscall(SYS_sigaltstack, (long)&call->fresh, 0, 0, 0, 0, 0);
    fl_run_with_handler_mask(call->fn, call->signo, call->info, call->context);
}

// Runs on a thread in a signal handler; compromised context. Calls fn(signo, info, context) on a
// stack with room for the whole crash path: the alternate stack it was entered on when that is
// at least FL_ALTSTACK_SIZE long, else a freshly mapped one (or, when none can be mapped, the
// entry stack after all). Its own frame on the entry stack is a few dozen bytes: one stack_t and
// the registers it saves (the test of this is AppAlternateStackTests).
void fl_run_on_roomy_stack(fl_signal_entry fn, int signo, siginfo_t *info, void *context) {
    stack_t entry;
    int have_entry = fl_entry_syscall(SYS_sigaltstack, 0, (long)&entry, 0, 0, 0, 0) == 0;
    if (have_entry && (entry.ss_flags & SS_ONSTACK) && entry.ss_size >= FL_ALTSTACK_SIZE) {
        fl_run_with_handler_mask(fn, signo, info, context);
        return;
    }
    size_t length = FL_HANDLER_STACK_SIZE + FL_GUARD_SIZE;
    long mapped = fl_entry_syscall(SYS_mmap, 0, (long)length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped < 0 && mapped > -4096) {
        fl_run_with_handler_mask(fn, signo, info, context);
        return;
    }
    char *base = (char *)(uintptr_t)mapped;
    fl_entry_syscall(SYS_mprotect, (long)base, FL_GUARD_SIZE, PROT_NONE, 0, 0, 0);  // an overflow of ours faults, not scribbles
    fl_fresh_stack_call *call = (fl_fresh_stack_call *)(base + length - ((sizeof(fl_fresh_stack_call) + 63) & ~(size_t)63));
    call->fn = fn;
    call->signo = signo;
    call->info = info;
    call->context = context;
    call->fresh = (stack_t){.ss_sp = base + FL_GUARD_SIZE, .ss_flags = 0, .ss_size = FL_HANDLER_STACK_SIZE - (base + length - (char *)call)};
    fl_call_with_stack(call, fl_enter_fresh_stack, call);
    if (have_entry) {
        // Back on the entry stack: the app's alternate stack again (rt_sigreturn would restore it
        // too; doing it here lets the mapping go now).
        entry.ss_flags &= ~SS_ONSTACK;
        fl_entry_syscall(SYS_sigaltstack, (long)&entry, 0, 0, 0, 0, 0);
    }
    fl_entry_syscall(SYS_munmap, (long)base, (long)length, 0, 0, 0, 0);
}
