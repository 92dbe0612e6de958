// The per-architecture parts of machine_context.h that are not inline: the register names and
// copies, and undoing a call through a bad pointer.
#include "machine_context.h"
#include "crash_internal.h"

#if defined(__x86_64__)
const char *const fl_register_names[FL_REGISTER_COUNT] = {
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9",
    "r10", "r11", "r12", "r13", "r14", "r15", "rip", "eflags",
};
static const int fl_register_index[FL_REGISTER_COUNT] = {
    REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_R8, REG_R9,
    REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP, REG_EFL,
};

// Runs in a signal handler.
void fl_capture_registers(const ucontext_t *uc, fl_registers *out) {
    for (int i = 0; i < FL_REGISTER_COUNT; i++) out->values[i] = (uint64_t)uc->uc_mcontext.gregs[fl_register_index[i]];
}

// Runs on the crashing thread; compromised context. Whether the bytes before `return_address`
// end in a call: `call rel32` (E8 + 4 bytes), or `call r/m64` (FF with a ModRM whose reg field
// is 2, the opcode and its operand 2 to 7 bytes long with a REX prefix, a SIB or a displacement).
static int fl_follows_a_call(uintptr_t return_address) {
    uint8_t before[8];
    if (return_address < sizeof before || fl_safe_copy(before, return_address - sizeof before, sizeof before) != 0) return 0;
    if (before[8 - 5] == 0xE8) return 1;
    for (int length = 2; length <= 7; length++) {
        if (before[8 - length] == 0xFF && ((before[8 - length + 1] >> 3) & 7) == 2) return 1;
    }
    return 0;
}

// Runs on the crashing thread; compromised context.
int fl_context_return_from_bad_call(ucontext_t *uc, int check_call_site) {
    uintptr_t rsp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    uintptr_t return_address = 0;
    if (fl_safe_copy(&return_address, rsp, sizeof return_address) != 0) return -1;
    if (check_call_site && !fl_follows_a_call(return_address)) return -1;
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)return_address;
    uc->uc_mcontext.gregs[REG_RSP] = (greg_t)(rsp + sizeof(uintptr_t));
    return 0;
}

#elif defined(__aarch64__)
const char *const fl_register_names[FL_REGISTER_COUNT] = {
    "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11",
    "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
    "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp", "pc", "pstate",
};

// Runs in a signal handler.
void fl_capture_registers(const ucontext_t *uc, fl_registers *out) {
    for (int i = 0; i < 31; i++) out->values[i] = uc->uc_mcontext.regs[i];
    out->values[31] = uc->uc_mcontext.sp;
    out->values[32] = uc->uc_mcontext.pc;
    out->values[33] = uc->uc_mcontext.pstate;
}

// Runs on the crashing thread; compromised context. Whether the instruction before
// `return_address` is a call: BL, BLR, or one of the pointer-authenticating BLRAA/BLRAB(Z).
static int fl_follows_a_call(uintptr_t return_address) {
    uint32_t insn;
    if (return_address < 4 || fl_safe_copy(&insn, return_address - 4, sizeof insn) != 0) return 0;
    return (insn & 0xFC000000u) == 0x94000000u || (insn & 0xFFFFFC1Fu) == 0xD63F0000u
        || (insn & 0xFEFFF800u) == 0xD63F0800u;
}

// Runs on the crashing thread; compromised context. `blr` left the return address in x30 and
// did not touch the stack.
int fl_context_return_from_bad_call(ucontext_t *uc, int check_call_site) {
    uintptr_t return_address = fl_strip_return_address((uintptr_t)uc->uc_mcontext.regs[30]);
    if (return_address == 0) return -1;
    if (check_call_site && (return_address == (uintptr_t)uc->uc_mcontext.pc || !fl_follows_a_call(return_address))) return -1;
    uc->uc_mcontext.pc = return_address;
    return 0;
}
#endif
