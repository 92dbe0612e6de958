// The crash message in the report (message_writer.c): why it crashed, as the runtime said it.
#ifndef FAULTLINE_MESSAGE_WRITER_H
#define FAULTLINE_MESSAGE_WRITER_H
#include "safe_io.h"

#pragma GCC visibility push(hidden)
/// Writes `"message":{"source":…,"type":…,"text":…},` when a runtime left one; nothing otherwise.
void fl_put_crash_message(fl_writer *w);
#pragma GCC visibility pop
#endif
