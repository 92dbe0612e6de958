// Writes the crash message into the report (crash path). Each source's memory is read through
// fl_safe_copy, a page at a time: a runtime's pointer may be stale or the heap corrupt (a double
// free is one of the crashes that leave a message), and that must not fault the handler.
#include "message_writer.h"

#include "crash_internal.h"

// Runs on the crashing thread; compromised context. A text cut at `length` bytes may end inside
// a UTF-8 sequence: drop that partial sequence, so the report shows no broken character.
static size_t fl_utf8_complete_prefix(const char *text, size_t length) {
    size_t start = length;
    while (start > 0 && length - start < 4 && ((unsigned char)text[start - 1] & 0xC0) == 0x80) start--;
    if (start == 0) return length;
    unsigned char lead = (unsigned char)text[start - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return length - (start - 1) < need ? start - 1 : length;
}

// Runs on the crashing thread; compromised context. Copies a NUL-terminated string from
// `source` into out (at most capacity-1 bytes, always terminated); returns its length, or -1 if
// the first byte cannot be read.
static long fl_copy_foreign_string(char *out, size_t capacity, uintptr_t source) {
    size_t n = 0;
    while (n + 1 < capacity) {
        size_t to_page_end = 4096 - ((source + n) & 4095);
        size_t chunk = capacity - 1 - n < to_page_end ? capacity - 1 - n : to_page_end;
        if (fl_safe_copy(out + n, source + n, chunk) != 0) {
            if (n == 0) return -1;
            break;
        }
        for (size_t i = 0; i < chunk; i++) {
            if (out[n + i] == 0) {
                out[n + i] = 0;
                return (long)(n + i);
            }
        }
        n += chunk;
    }
    n = fl_utf8_complete_prefix(out, n);  // cut at the capacity
    out[n] = 0;
    return (long)n;
}

// Runs on the crashing thread; compromised context.
static void fl_put_message_fields(fl_writer *w, const char *source, const char *type, const char *text) {
    fl_put(w, "\"message\":{\"source\":");
    fl_put_json_string(w, source);
    fl_put(w, ",\"type\":");
    fl_put_json_string(w, type);
    fl_put(w, ",\"text\":");
    fl_put_json_string(w, text);
    fl_put(w, "},");
}

// Runs on the crashing thread; compromised context. Copies the recorded message under its
// sequence count; 0 if a whole one was had.
static int fl_copy_recorded_message(fl_message_slot *out) {
    fl_message_slot *slot = &fl_state.message;
    for (int attempt = 0; attempt < 8; attempt++) {
        uint32_t before = atomic_load(&slot->sequence);
        if (before == 0) return -1;  // never set
        if (before & 1u) continue;
        for (size_t i = 0; i < sizeof slot->source; i++) out->source[i] = slot->source[i];
        for (size_t i = 0; i < sizeof slot->type; i++) out->type[i] = slot->type[i];
        for (size_t i = 0; i < sizeof slot->text; i++) out->text[i] = slot->text[i];
        atomic_thread_fence(memory_order_acquire);  // the copy is done before the re-check (seqlock)
        if (atomic_load(&slot->sequence) == before) return 0;
    }
    return -1;
}

// Runs on the crashing thread; compromised context. The recorded message (C++) wins: it is only
// set on the way to the abort it explains. Then Swift's, then glibc's; each is present only
// when that runtime is about to end the process.
void fl_put_crash_message(fl_writer *w) {
    fl_message_slot *copy = &fl_state.scratch->message_copy;
    if (fl_copy_recorded_message(copy) == 0) {
        copy->source[sizeof copy->source - 1] = 0;
        copy->type[sizeof copy->type - 1] = 0;
        copy->text[sizeof copy->text - 1] = 0;
        fl_put_message_fields(w, copy->source, copy->type, copy->text);
        return;
    }
    uintptr_t text = 0;
    if (fl_state.swift_fatal_message &&
        fl_safe_copy(&text, (uintptr_t)fl_state.swift_fatal_message, sizeof text) == 0 && text &&
        fl_copy_foreign_string(copy->text, sizeof copy->text, text) > 0) {
        fl_put_message_fields(w, "swift", "", copy->text);
        return;
    }
    uintptr_t abort_message = 0;
    // struct abort_msg_s { unsigned int size; char msg[]; }: the text starts after the size.
    if (fl_state.glibc_abort_message &&
        fl_safe_copy(&abort_message, (uintptr_t)fl_state.glibc_abort_message, sizeof abort_message) == 0 && abort_message &&
        fl_copy_foreign_string(copy->text, sizeof copy->text, abort_message + sizeof(unsigned int)) > 0) {
        fl_put_message_fields(w, "glibc", "", copy->text);
    }
}
