// The Swift async chain of the crashing thread (async_unwind.c): its logical callers, which the
// physical stack no longer holds once a task has suspended and resumed on an executor.
#ifndef FAULTLINE_ASYNC_UNWIND_H
#define FAULTLINE_ASYNC_UNWIND_H

#include <stdint.h>
#include <ucontext.h>
#include <libunwind.h>

#include "safe_io.h"

#pragma GCC visibility push(hidden)

#define FL_MAX_ASYNC_FRAMES 128      // async frames kept (a deeper chain ends with "limit")
#define FL_ASYNC_SEARCH_FRAMES 256   // physical frames searched for the innermost async frame (the report keeps 256)

/// Crash path. The search for the innermost Swift async frame rides on the physical walk
/// (unwind.c): reset before it, then each recorded frame is considered until one is async, whose
/// context chain is followed into preallocated storage. Bounded; never faults (every read of the
/// chain goes through fl_safe_copy). A walk that starts from a synthesised frame (a call through
/// a null pointer) is not searched.
void fl_async_reset(void);
int fl_async_consider(unw_cursor_t *cursor, size_t index, uintptr_t ip);
/// Crash path. Writes `,"async_frames":[…],"async_unwind":{…}` when an async frame was found.
void fl_put_async_frames(fl_writer *w);

#pragma GCC visibility pop
#endif
