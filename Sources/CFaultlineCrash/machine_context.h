// The interrupted thread's registers, per architecture: the one place where the crash core knows
// how a ucontext_t is laid out on x86_64 and on aarch64, how a return address becomes a call
// site, and how a call through a null pointer is undone. Everything else asks here.
// Rules: as handler.c (signal-safety(7)); every function below runs in a signal handler.
#ifndef FAULTLINE_MACHINE_CONTEXT_H
#define FAULTLINE_MACHINE_CONTEXT_H

#include <stdint.h>
#include <ucontext.h>
#include <libunwind.h>

#pragma GCC visibility push(hidden)

#if defined(__x86_64__)
#define FL_ARCH_NAME "x86_64"
// rax … r15, rip, eflags: the general registers in the order debuggers print them.
#define FL_REGISTER_COUNT 18
// libunwind's number for the frame pointer (async_unwind.c reads the Swift context below it).
#define FL_UNW_FRAME_POINTER UNW_X86_64_RBP
#elif defined(__aarch64__)
#define FL_ARCH_NAME "aarch64"
// x0 … x30 (x29 is the frame pointer, x30 the link register), sp, pc, pstate.
#define FL_REGISTER_COUNT 34
#define FL_UNW_FRAME_POINTER UNW_AARCH64_X29
#else
#error "machine_context.h: the crash core knows x86_64 and aarch64 only"
#endif

/// A register snapshot in the order of fl_register_names.
typedef struct {
    uint64_t values[FL_REGISTER_COUNT];
} fl_registers;

/// The names the report gives each register (docs/CRASH-REPORT.md, `registers`).
extern const char *const fl_register_names[FL_REGISTER_COUNT];

/// Runs in a signal handler. Copies the interrupted registers out of the ucontext.
void fl_capture_registers(const ucontext_t *uc, fl_registers *out);

/// Runs in a signal handler. The interrupted program counter, stack pointer and frame pointer.
static inline uintptr_t fl_context_pc(const ucontext_t *uc) {
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#else
    return (uintptr_t)uc->uc_mcontext.pc;
#endif
}

static inline uintptr_t fl_context_sp(const ucontext_t *uc) {
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#else
    return (uintptr_t)uc->uc_mcontext.sp;
#endif
}

static inline uintptr_t fl_context_frame_pointer(const ucontext_t *uc) {
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
#else
    return (uintptr_t)uc->uc_mcontext.regs[29];
#endif
}

/// Runs in a signal handler. A return address as it can be looked up: on aarch64 with pointer
/// authentication the upper bits hold a signature, which `xpaclri` removes. It is encoded in the
/// HINT space, so a CPU without pointer authentication executes it as a NOP and the address is
/// unchanged — no mask is guessed (the signature's width depends on the virtual address size).
static inline uintptr_t fl_strip_return_address(uintptr_t address) {
#if defined(__aarch64__)
    register uintptr_t x30 __asm__("x30") = address;
    __asm__("hint #7" : "+r"(x30));  // xpaclri
    return x30;
#else
    return address;
#endif
}

/// Bytes between a return address and the call instruction's last byte that is still inside
/// it: a lookup at `return address - FL_CALL_SITE_BACKSTEP` names the caller's line, not the next
/// one's. aarch64 instructions are four bytes and aligned; x86_64's vary, so one byte back is the
/// only step that stays inside the call.
#if defined(__aarch64__)
#define FL_CALL_SITE_BACKSTEP 4
#else
#define FL_CALL_SITE_BACKSTEP 1
#endif

/// Runs in a signal handler. A call through a bad pointer (null, unmapped, not code) leaves the pc
/// where no unwinder can step; this turns the context into the caller's, as if the call had returned: on x86_64
/// the call pushed its return address (read with fl_safe_copy: the stack pointer may be garbage
/// too), on aarch64 it is in the link register. Returns 0, or -1 when it cannot be read. With
/// `check_call_site`, also -1 unless the instruction before that address is a call: a `ret` or
/// `jmp` to a bad address, or a code page that cannot be read mid-function, leaves no return
/// address there, and the ordinary walk does better.
int fl_context_return_from_bad_call(ucontext_t *uc, int check_call_site);

#pragma GCC visibility pop
#endif
