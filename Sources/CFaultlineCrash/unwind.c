// Walks the crashing thread's stack with libunwind into the preallocated frame buffer.
//
// We link the architecture's generic libunwind without UNW_LOCAL_ONLY (see Package.swift and
// tools/build-preload): its `_U<arch>_*` entry points leave `_Unwind_*` to libgcc_s, which C++ exceptions and the Swift
// runtime rely on. libunwind is not fully async-signal-safe: its first use takes a mutex (hence
// fl_prewarm_unwinder at start) and unw_step calls dl_iterate_phdr, which takes the loader lock;
// the watchdog in handler.c bounds the damage if that lock is never released.
#include "crash_internal.h"
#include "async_unwind.h"
#include "machine_context.h"

#include <libunwind.h>
#include <stdatomic.h>
#include <string.h>
#include <ucontext.h>

const char fl_method_libunwind[] = "libunwind";

// Runs on the crashing thread; compromised context. A return address is kept without its
// pointer-authentication signature (machine_context.h), the form a symbolicator can look up.
static void fl_push_frame(fl_frame_buffer *out, uintptr_t address, int is_pc) {
    fl_frame f = {is_pc ? address : fl_strip_return_address(address), is_pc};
    const size_t inner_capacity = FL_MAX_FRAMES - FL_OUTER_FRAMES;
    if (out->inner_count < inner_capacity) {
        out->inner[out->inner_count] = f;
        // The watchdog (a signal on this thread) keeps the frames walked so far: it must only
        // ever count a frame that is whole.
        atomic_signal_fence(memory_order_release);
        out->inner_count++;
    } else {
        // Deep recursion: keep the outermost frames too (they say how the recursion began).
        out->outer_ring[(out->total_count - inner_capacity) % FL_OUTER_FRAMES] = f;
        atomic_signal_fence(memory_order_release);
    }
    out->total_count++;
}

// Runs on the crashing thread; compromised context.
static int fl_walk(unw_cursor_t *cursor, fl_frame_buffer *out, int first_is_pc) {
    int is_pc = first_is_pc;
    // The Swift async search (async_unwind.c) looks at the same frames, on the same cursor, only
    // on the walk from the signal frame.
    int async_search = first_is_pc;
    for (;;) {
        unw_word_t ip = 0;
        if (unw_get_reg(cursor, UNW_REG_IP, &ip) < 0 || ip == 0) return 0;
        if (async_search && fl_async_consider(cursor, out->total_count, (uintptr_t)ip)) async_search = 0;
        fl_push_frame(out, (uintptr_t)ip, is_pc);
        // Above a signal frame (the kernel's sigreturn trampoline) is the instruction the signal
        // interrupted, not a return address: a crash in a signal handler, or a handler another
        // handler called (handler.c). Its address is looked up as it is, not one byte back.
        // libunwind's test reads the code at ip unchecked (a local cursor does not validate
        // until unw_step), so it is asked only where unwind info was found: ip is then inside a
        // loaded module's code, as every sigreturn trampoline is (glibc describes it in CFI),
        // never a wild jump's target.
        unw_proc_info_t info;
        is_pc = unw_get_proc_info(cursor, &info) == 0 && unw_is_signal_frame(cursor) > 0;
        if (out->total_count >= FL_MAX_UNWIND_STEPS) {
            out->stopped_by = "limit";
            return 0;
        }
        int step = unw_step(cursor);
        if (step == 0) return 0;
        if (step < 0) {
            out->stopped_by = "error";
            return step;
        }
    }
}

// Runs on the crashing thread; compromised context. The ucontext copy lives on the alternate
// stack: a call through a bad pointer — null, unmapped, or to memory that is not code — leaves
// the pc where no unwind information is, and libunwind cannot step from there (a null pc stops it,
// any other loses the frame that made the call), so we start again from the caller, as if the
// call had returned (machine_context.c). `pc_is_no_code`: the fault was the instruction fetch
// itself (handler.c decides).
void fl_unwind(const ucontext_t *uc, fl_frame_buffer *out, int pc_is_no_code) {
    out->inner_count = 0;
    out->total_count = 0;
    out->stopped_by = "end";
    out->method = fl_method_libunwind;
    out->fallback = NULL;
    fl_async_reset();

    uintptr_t pc = fl_context_pc(uc);
    if (pc == 0 || pc_is_no_code) {
        // A null pc always came from a call or a jump to 0; any other is taken for a call only
        // when the return address the caller would have left follows a call instruction.
        ucontext_t caller;
        memcpy(&caller, uc, sizeof caller);
        if (fl_context_return_from_bad_call(&caller, pc != 0) == 0) {
            fl_push_frame(out, pc, 1);
            unw_cursor_t cursor;
            if (unw_init_local2(&cursor, (unw_context_t *)&caller, 0) < 0) {
                out->stopped_by = "error";
                return;
            }
            fl_walk(&cursor, out, 0);
            return;
        }
        if (pc == 0) {
            fl_push_frame(out, 0, 1);
            out->stopped_by = "error";
            return;
        }
    }

    unw_cursor_t cursor;
    if (unw_init_local2(&cursor, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0) {
        fl_push_frame(out, pc, 1);
        out->stopped_by = "error";
        return;
    }
    fl_walk(&cursor, out, 1);
}

// Runs on a thread in a signal handler; compromised context. One step up the saved frame-pointer
// chain: the return address of the frame at *fp, then *fp and *sp move to the caller's frame.
// Every stack read goes through fl_safe_copy, and the chain must move strictly up the stack, so a
// corrupt stack ends the walk (returns 0) instead of faulting.
int fl_frame_pointer_step(uintptr_t *fp, uintptr_t *sp, uintptr_t *return_address) {
    if (*fp < *sp || (*fp & 7) != 0) return 0;
    uintptr_t pair[2];  // [saved frame pointer, return address]: the frame record of x86_64 and aarch64 alike
    if (fl_safe_copy(pair, *fp, sizeof pair) != 0 || pair[1] == 0) return 0;
    *return_address = fl_strip_return_address(pair[1]);
    if (pair[0] <= *fp) {
        *sp = *fp = UINTPTR_MAX;  // the return address counts; the chain ends here
        return 1;
    }
    *sp = *fp;
    *fp = pair[0];
    return 1;
}

// Runs on the crashing thread; compromised context. Follows the saved frame-pointer chain from
// the signal's frame pointer: the fallback when libunwind cannot finish (the watchdog fired) or must not be
// entered (a crash inside its own pre-warm, handler.c fl_ready_unwinder). Swift keeps frame pointers; C built with -fomit-frame-pointer yields fewer frames.
void fl_unwind_frame_pointers(const ucontext_t *uc, fl_frame_buffer *out) {
    out->inner_count = 0;
    out->total_count = 0;
    out->method = "frame-pointers";
    out->fallback = NULL;
    out->stopped_by = "end";
    fl_push_frame(out, fl_context_pc(uc), 1);
    uintptr_t fp = fl_context_frame_pointer(uc);
    uintptr_t sp = fl_context_sp(uc);
    uintptr_t return_address;
    while (fl_frame_pointer_step(&fp, &sp, &return_address)) {
        if (out->total_count >= FL_MAX_UNWIND_STEPS) {
            out->stopped_by = "limit";
            return;
        }
        fl_push_frame(out, return_address, 0);
    }
}
