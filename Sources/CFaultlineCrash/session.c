// The session a crash ends, and whether its opening update was queued before the crash: the next
// launch sends the crash's session update with `init: true` when it was not, so the server counts
// the session's start exactly once. Kept here rather than in the SDK's context bytes so that a
// forked child, a new process with no session of its own, forgets its parent's in the after-fork
// hook: its crash is then an event that ends no session (the parent's may well exit cleanly).
#include "session_writer.h"

#include "crash_internal.h"

#include <string.h>

enum {
    FL_SESSION_NONE = 0,
    FL_SESSION_BEGUN = 1,         // the opening update (`init: true`) may not be queued yet
    FL_SESSION_START_QUEUED = 2,  // the opening update is durably in the outbox
};

// The strings are written while the phase is NONE and only read when it is not (release/acquire):
// a crash never sees half an id.
static char fl_session_id[33];
static char fl_session_started[64];
static _Atomic int fl_session_phase;
static _Atomic unsigned fl_session_errors;  // errors captured in the session, the crash not counted

int faultline_crash_set_session(const char *session_id, const char *started) {
    if (!session_id || strlen(session_id) >= sizeof fl_session_id) return -1;
    if (!started || strlen(started) >= sizeof fl_session_started) return -1;
    atomic_store(&fl_session_phase, FL_SESSION_NONE);
    atomic_store(&fl_session_errors, 0);
    fl_copy_string(fl_session_id, sizeof fl_session_id, session_id);
    fl_copy_string(fl_session_started, sizeof fl_session_started, started);
    atomic_store(&fl_session_phase, FL_SESSION_BEGUN);
    return 0;
}

void faultline_crash_session_start_queued(void) {
    int begun = FL_SESSION_BEGUN;
    atomic_compare_exchange_strong(&fl_session_phase, &begun, FL_SESSION_START_QUEUED);
}

void faultline_crash_session_error_captured(void) { atomic_fetch_add(&fl_session_errors, 1); }

void fl_session_after_fork_in_child(void) { atomic_store(&fl_session_phase, FL_SESSION_NONE); }

// Runs on the crashing thread; compromised context.
void fl_put_session(fl_writer *w) {
    int phase = atomic_load(&fl_session_phase);
    if (phase == FL_SESSION_NONE) return;
    fl_put(w, "\"session\":{\"id\":");
    fl_put_json_string(w, fl_session_id);
    fl_put(w, ",\"started\":");
    fl_put_json_string(w, fl_session_started);
    unsigned errors = atomic_load(&fl_session_errors);
    if (errors) {
        fl_put(w, ",\"errors\":");
        fl_put_u64(w, errors);
    }
    fl_put(w, phase == FL_SESSION_START_QUEUED ? ",\"start_queued\":true}," : ",\"start_queued\":false},");
}
