// The session a crash ends, as the report names it (session.c).
#ifndef FAULTLINE_SESSION_WRITER_H
#define FAULTLINE_SESSION_WRITER_H
#include "safe_io.h"

#pragma GCC visibility push(hidden)
/// Writes `"session":{"id":…,"started":…,"start_queued":…},` when this process has a session;
/// nothing when the SDK set none (or in a forked child).
void fl_put_session(fl_writer *w);
/// Normal context, in a forked child: the parent's session is not this process's.
void fl_session_after_fork_in_child(void);
#pragma GCC visibility pop
#endif
