// The Swift async chain of the crashing thread: the task's logical callers.
//
// When a Swift task suspends and resumes, its callers are no longer on the thread's stack: below
// the resumed function come the executor's frames (swift_job_run, libdispatch, the thread's
// start). The callers live in the task's async contexts instead. The rules, from the Swift ABI
// and the runtime's own backtracer (stdlib/public/RuntimeModule/FramePointerUnwinder.swift):
//
//   * An async function (and each of its resume partial functions, `…TY<n>_`, `…TQ<n>_`) is
//     entered with its context in r14 and builds an extended frame record:
//       push %rbp; push %r14; lea 0x8(%rsp),%rbp
//     so the context is stored at rbp-8, right below the saved rbp. Resume functions then write
//     their own context (the callee's Parent) into that slot before any call.
//   * Every async context starts with two words: Parent (the caller's context, 0 at the task's
//     outermost function) and ResumeParent (where the caller resumes: a resume partial function,
//     or the runtime's task-completion function at the end). No pointer authentication on x86_64.
//   * On Darwin bit 60 of the saved rbp marks async frames. On Linux it is NOT set (the compiler
//     emits `btr $60,%rbp` in epilogues but no `bts` in prologues; checked against Swift 6.3's
//     output), and Swift's backtracer recognises async frames by their mangled symbol name. A
//     symbol table lookup is out of reach in a signal handler, so we recognise the prologue
//     instead: libunwind already knows each frame's function start (from .eh_frame), and the
//     first bytes there are the extended-frame prologue above (after an optional endbr64).
//
// The walk: a second libunwind walk from the same signal context (the same frames, in the same
// order, as unwind.c's) until the first frame whose function starts with that prologue; its rbp
// (from libunwind, so frames without a frame pointer in between do not matter) gives the context.
// Then Parent/ResumeParent pairs are followed, each read with fl_safe_copy, at most
// FL_MAX_ASYNC_FRAMES of them, ending with a reason: "end" (Parent 0), "limit", "unreadable
// context", "misaligned context", "loop" (a context seen before), "no resume function".
// The frames are recorded as async: their address is the resume function itself (an exact code
// address, not a return address).
//
// x86_64 only: the prologue recognised is x86_64 machine code. On aarch64 Swift's async frames
// differ (context in x22, a signed frame record), and Swift on aarch64 is not among the programs
// Faultline's aarch64 build is tested with (C and C++ under the preload library), so there the
// search finds no async frame and the report has no `async_frames`.
#include "async_unwind.h"
#include "crash_internal.h"
#include "machine_context.h"

#include <libunwind.h>
#include <string.h>
#include <time.h>

typedef struct {
    uintptr_t resume[FL_MAX_ASYNC_FRAMES];
    uintptr_t context[FL_MAX_ASYNC_FRAMES];  // the context each resume address was read from
    size_t count;
    int found;              // an async frame was found on the physical stack
    size_t after;           // its index in the physical frames (the report's `frames`)
    uintptr_t frame_pointer;
    uintptr_t first_context;
    const char *stopped_by;
    uint64_t walk_ns;
} fl_async_chain;

static fl_async_chain fl_async;  // preallocated (bss); one crash at a time holds the claim

// Runs on the crashing thread; compromised context. True if the code at `start` begins with the
// Swift async extended-frame prologue; *length gets the prologue's size.
// A deep recursion repeats one function hundreds of times: its verdict is remembered (per crash)
// so its code is read once, not once per frame.
#define FL_PROLOGUE_MEMO 64
static struct { uintptr_t start; int is_async; size_t length; } fl_prologue_memo[FL_PROLOGUE_MEMO];

static int fl_read_async_prologue(uintptr_t start, size_t *length) {
#if !defined(__x86_64__)
    (void)start;
    (void)length;
    return 0;  // see the file's comment: the prologue is recognised on x86_64 only
#else
    static const unsigned char endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
    // push %rbp; push %r14; lea 0x8(%rsp),%rbp
    static const unsigned char prologue[8] = {0x55, 0x41, 0x56, 0x48, 0x8d, 0x6c, 0x24, 0x08};
    unsigned char code[12];
    if (start == 0 || fl_safe_copy(code, start, sizeof code) != 0) return 0;
    size_t skip = memcmp(code, endbr64, sizeof endbr64) == 0 ? sizeof endbr64 : 0;
    if (memcmp(code + skip, prologue, sizeof prologue) != 0) return 0;
    *length = skip + sizeof prologue;
    return 1;
#endif
}

// Runs on the crashing thread; compromised context. fl_read_async_prologue, memoised.
static int fl_is_async_prologue(uintptr_t start, size_t *length) {
    size_t slot = (start >> 4) % FL_PROLOGUE_MEMO;
    if (fl_prologue_memo[slot].start == start && start != 0) {
        *length = fl_prologue_memo[slot].length;
        return fl_prologue_memo[slot].is_async;
    }
    size_t found = 0;
    int is_async = fl_read_async_prologue(start, &found);
    fl_prologue_memo[slot].start = start;
    fl_prologue_memo[slot].is_async = is_async;
    fl_prologue_memo[slot].length = found;
    *length = found;
    return is_async;
}

// Runs on the crashing thread; compromised context. Follows the context chain from `context`.
static void fl_follow_chain(uintptr_t context) {
    fl_async.first_context = context;
    fl_async.stopped_by = "end";
    while (context != 0) {
        if (fl_async.count >= FL_MAX_ASYNC_FRAMES) {
            fl_async.stopped_by = "limit";
            return;
        }
        if (context & 7) {
            fl_async.stopped_by = "misaligned context";
            return;
        }
        for (size_t i = 0; i < fl_async.count; i++) {
            if (fl_async.context[i] == context) {
                fl_async.stopped_by = "loop";
                return;
            }
        }
        uintptr_t words[2];  // Parent, ResumeParent
        if (fl_safe_copy(words, context, sizeof words) != 0) {
            fl_async.stopped_by = "unreadable context";
            return;
        }
        if (words[1] == 0) {
            fl_async.stopped_by = "no resume function";
            return;
        }
        unsigned char probe;
        if (fl_safe_copy(&probe, words[1], 1) != 0) {
            fl_async.stopped_by = "resume function unreadable";
            return;
        }
        fl_async.context[fl_async.count] = context;
        fl_async.resume[fl_async.count] = words[1];
        fl_async.count++;
        context = words[0];
    }
}

static int fl_async_search_over;
// Return addresses already found not to be in an async function: a deep recursion repeats one
// address hundreds of times, and each unw_get_proc_info is a lookup of its own.
#define FL_IP_MEMO 64
static uintptr_t fl_not_async_ip[FL_IP_MEMO];

// Runs on the crashing thread; compromised context. Before the physical walk.
void fl_async_reset(void) {
    fl_async.count = 0;
    fl_async.found = 0;
    fl_async.after = 0;
    fl_async.frame_pointer = 0;
    fl_async.first_context = 0;
    fl_async.walk_ns = 0;
    fl_async.stopped_by = "no async frame";
    for (size_t i = 0; i < FL_PROLOGUE_MEMO; i++) fl_prologue_memo[i].start = 0;
    for (size_t i = 0; i < FL_IP_MEMO; i++) fl_not_async_ip[i] = 0;
    fl_async_search_over = 0;
}

// Runs on the crashing thread; compromised context. Called by the physical walk (unwind.c) for
// each frame it records, innermost first, so the search costs no second walk: is this frame the
// innermost async one? Then its context chain is followed. Returns 1 once the search is over.
int fl_async_consider(unw_cursor_t *cursor, size_t index, uintptr_t ip) {
    if (fl_async_search_over || index >= FL_ASYNC_SEARCH_FRAMES) return 1;
    size_t slot = (ip >> 2) % FL_IP_MEMO;
    if (fl_not_async_ip[slot] == ip) return 0;
    uint64_t t0 = fl_monotonic_ns();
    unw_proc_info_t info;
    size_t prologue = 0;
    if (unw_get_proc_info(cursor, &info) == 0 && fl_is_async_prologue((uintptr_t)info.start_ip, &prologue)) {
        // Frame 0 may have stopped inside the prologue, before rbp was set: not usable.
        // Every outer frame is a return address, past the prologue by construction.
        if (index > 0 || ip >= info.start_ip + prologue) {
            unw_word_t frame_pointer = 0;
            uintptr_t context = 0;
            if (unw_get_reg(cursor, FL_UNW_FRAME_POINTER, &frame_pointer) == 0 && frame_pointer > 8 && (frame_pointer & 7) == 0) {
                fl_async.found = 1;
                fl_async.after = index;
                fl_async.frame_pointer = (uintptr_t)frame_pointer;
                if (fl_safe_copy(&context, (uintptr_t)frame_pointer - 8, sizeof context) != 0) fl_async.stopped_by = "unreadable frame";
                else fl_follow_chain(context);
                fl_async_search_over = 1;
            }
        }
    }
    if (!fl_async_search_over && index > 0) fl_not_async_ip[slot] = ip;  // frame 0's verdict depends on the pc
    fl_async.walk_ns += fl_monotonic_ns() - t0;
    return fl_async_search_over;
}

// Runs on the crashing thread; compromised context.
void fl_put_async_frames(fl_writer *w) {
    if (!fl_async.found) return;
    fl_put(w, ",\"async_frames\":[");
    for (size_t i = 0; i < fl_async.count; i++) {
        fl_put(w, i ? ",{\"address\":\"" : "{\"address\":\"");
        fl_put_hex(w, fl_async.resume[i]);
        fl_put(w, "\",\"kind\":\"async\",\"context\":\"");
        fl_put_hex(w, fl_async.context[i]);
        fl_put(w, "\"}");
    }
    fl_put(w, "],\"async_unwind\":{\"after\":");
    fl_put_u64(w, fl_async.after);
    fl_put(w, ",\"frame_pointer\":\"");
    fl_put_hex(w, fl_async.frame_pointer);
    fl_put(w, "\",\"context\":\"");
    fl_put_hex(w, fl_async.first_context);
    fl_put(w, "\",\"stopped_by\":");
    fl_put_json_string(w, fl_async.stopped_by);
    fl_put(w, ",\"walk_us\":");
    fl_put_u64(w, fl_async.walk_ns / 1000);
    fl_put(w, "}");
}
