// The session a crash ends, as the report names it (session.c).
#ifndef FAULTLINE_SESSION_WRITER_H
#define FAULTLINE_SESSION_WRITER_H
#include "safe_io.h"

#pragma GCC visibility push(hidden)
/// Writes `"session":{"id":…,"started":…,"start_queued":…},` when this process has a session;
/// nothing when the SDK set none.
void fl_put_session(fl_writer *w);
#pragma GCC visibility pop
#endif
