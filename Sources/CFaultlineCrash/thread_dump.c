// Every thread's stack in the crash report (crash path, and each thread's answer handler).
//
// A thread can only be unwound reliably from its own registers, and in-process there is no way to
// read another thread's registers. So the crashing thread asks: it lists /proc/self/task, sends
// each other thread in turn a real-time signal reserved at start (tgkill), and that thread, in its
// handler, unwinds itself with libunwind from the signal's ucontext into its own preallocated
// slot. A few at a time (FL_THREAD_ASKS_IN_FLIGHT): the waits for each thread to be scheduled
// overlap, and libunwind's cache lock and the loader lock, which every unwind takes, see a handful
// of threads queue rather than a thousand. An answered thread then stays parked in its
// handler until the process dies: released, it would go on running application code (its sleep
// cut short by the signal) while the crashing thread finishes — a program could exit cleanly in
// the middle of its own crash. It is asked only once the crash is known to be real (the previous
// handler, if any, did not recover it), so a recovered fault never disturbs other threads; the
// parked threads are released should the process survive after all (fl_release_parked_threads). Why not a forked ptrace helper (Crashpad's way): it needs ptrace permission (often denied
// by Yama or seccomp in containers), a second process image and far more time; the signal answer
// costs tens of microseconds per thread and nothing when no crash happens.
//
// Bounds: at most FL_MAX_THREADS listed (the rest are counted), FL_THREAD_FRAMES frames each, and
// FL_THREAD_DUMP_BUDGET_MS in total for the answers (threads not asked by then are listed without
// frames, and say so). A thread that blocks the signal, is stopped, or is itself stuck (waiting
// for a lock inside libunwind's loader call) does not answer in time and is listed with its name
// and state but no frames. Nothing here allocates or takes a lock the
// crashing thread could wait on; an answering thread may block, but nobody waits for it beyond
// the deadline. Answers are accepted only from our own process and only while collecting.
#include "crash_internal.h"
#include "machine_context.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libunwind.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// Crash path (either side). Sleeps while *word still holds `expected`, until woken, a signal, or
// `timeout` (relative; NULL: no limit). A raw futex: no lock, nothing to bind, and the sleeper
// costs nothing until woken — where polling with a sleep made each answer wait out the sleep, and
// a thousand parked threads waking every millisecond starved the crashing thread of the CPU.
static void fl_futex_wait(_Atomic int *word, int expected, const struct timespec *timeout) {
    syscall(SYS_futex, (int *)word, FUTEX_WAIT_PRIVATE, expected, timeout, NULL, 0);
}

// Crash path (either side). Wakes up to `count` threads sleeping on *word.
static void fl_futex_wake(_Atomic int *word, int count) {
    syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

// Runs on an answering thread, in its signal handler. Unwinds the thread from the interrupted
// context into its slot.
static void fl_unwind_into_slot(fl_thread_slot *slot, ucontext_t *uc) {
    fl_capture_registers(uc, &slot->registers);
    slot->frame_count = 0;
    slot->stopped_by = "end";
    if (!atomic_load(&fl_state.unwinder_ready)) {  // libunwind not pre-warmed yet (start.c)
        uintptr_t fp = fl_context_frame_pointer(uc), sp = fl_context_sp(uc), ret;
        slot->frames[slot->frame_count++] = fl_context_pc(uc);
        while (slot->frame_count < FL_THREAD_FRAMES && fl_frame_pointer_step(&fp, &sp, &ret)) slot->frames[slot->frame_count++] = ret;
        if (slot->frame_count == FL_THREAD_FRAMES) slot->stopped_by = "limit";
        return;
    }
    unw_cursor_t cursor;
    if (unw_init_local2(&cursor, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0) {
        slot->frames[slot->frame_count++] = fl_context_pc(uc);
        slot->stopped_by = "error";
        return;
    }
    for (;;) {
        unw_word_t ip = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) return;
        slot->frames[slot->frame_count] = slot->frame_count ? fl_strip_return_address((uintptr_t)ip) : (uintptr_t)ip;
        slot->frame_count++;
        if (slot->frame_count == FL_THREAD_FRAMES) {
            slot->stopped_by = "limit";
            return;
        }
        int step = unw_step(&cursor);
        if (step == 0) return;
        if (step < 0) {
            slot->stopped_by = "error";
            return;
        }
    }
}

// Runs anywhere, also in a signal handler: the disposition the dump signal is given at start and
// put back at a crash (fl_collect_threads).
void fl_dump_signal_action(struct sigaction *ours) {
    memset(ours, 0, sizeof *ours);
    ours->sa_sigaction = fl_answer_dump_request;
    ours->sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&ours->sa_mask);
}

// Runs on an answering thread, in its signal handler (async-signal-safe, no lock).
void fl_answer_dump_request(int signo, siginfo_t *info, void *context) {
    (void)signo;
    int saved_errno = errno;
    fl_thread_table *table = fl_state.threads;
    if (table && atomic_load(&table->collecting) && info->si_pid == getpid()) {
        pid_t self = (pid_t)syscall(SYS_gettid);
        for (size_t i = 0; i < table->count; i++) {
            fl_thread_slot *slot = &table->slots[i];
            int requested = FL_SLOT_REQUESTED;
            if (slot->tid == self && atomic_compare_exchange_strong(&slot->state, &requested, FL_SLOT_WORKING)) {
                fl_begin_stack_walk();
                fl_unwind_into_slot(slot, context);
                fl_end_stack_walk();
                atomic_store(&slot->state, FL_SLOT_DONE);
                fl_futex_wake(&slot->state, 1);  // the crashing thread waits on it
                while (!atomic_load(&table->release)) fl_futex_wait(&table->release, 0, NULL);
                break;
            }
        }
    }
    errno = saved_errno;
}

static _Atomic unsigned fl_thread_dump_budget_ms = FL_THREAD_DUMP_BUDGET_MS;  // tests may shorten it

void faultline_crash_set_thread_dump_budget_for_testing(unsigned milliseconds) { atomic_store(&fl_thread_dump_budget_ms, milliseconds); }

// Runs on the crashing thread; compromised context. Decimal digits of a pid into out (no NUL).
static size_t fl_put_pid(char *out, pid_t value) {
    char digits[12];
    size_t n = 0;
    do { digits[n++] = (char)('0' + value % 10); value /= 10; } while (value > 0 && n < sizeof digits);
    for (size_t i = 0; i < n; i++) out[i] = digits[n - 1 - i];
    return n;
}

// Runs on the crashing thread; compromised context. Reads /proc/self/task/<tid>/<file> into out.
static ssize_t fl_read_task_file(pid_t tid, const char *file, char *out, size_t capacity) {
    char path[64] = "/proc/self/task/";
    size_t n = 16;
    n += fl_put_pid(path + n, tid);
    path[n++] = '/';
    for (size_t i = 0; file[i] && n < sizeof path - 1; i++) path[n++] = file[i];
    path[n] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t got = read(fd, out, capacity);
    close(fd);
    return got;
}

// Runs on the crashing thread; compromised context. A thread's name (comm).
static void fl_read_thread_name(fl_thread_slot *slot) {
    char buffer[sizeof slot->name];
    ssize_t got = fl_read_task_file(slot->tid, "comm", buffer, sizeof buffer);
    size_t length = got > 0 ? (size_t)got : 0;
    if (length && buffer[length - 1] == '\n') length--;
    if (length == sizeof slot->name) length--;
    for (size_t i = 0; i < length; i++) slot->name[i] = buffer[i];
    slot->name[length] = 0;
}

// Runs on the crashing thread; compromised context. The value after "<key>:" and its blanks in a
// /proc status text, or NULL.
static const char *fl_status_field(const char *text, ssize_t length, const char *key, ssize_t *at) {
    size_t key_length = 0;
    while (key[key_length]) key_length++;
    for (ssize_t i = 0; i + (ssize_t)key_length < length; i++) {
        if (i > 0 && text[i - 1] != '\n') continue;
        size_t k = 0;
        while (k < key_length && text[i + (ssize_t)k] == key[k]) k++;
        if (k < key_length || text[i + (ssize_t)k] != ':') continue;
        ssize_t p = i + (ssize_t)k + 1;
        while (p < length && (text[p] == ' ' || text[p] == '\t')) p++;
        *at = p;
        return text + p;
    }
    return NULL;
}

// Runs on the crashing thread; compromised context. What is read of a thread before it is asked
// for its stack, from one read of /proc/self/task/<tid>/status: its run state (the answer parks
// it, so afterwards it would read "sleeping") and whether it blocks the request's signal (SigBlk,
// a hex mask with bit signo-1: its answer would only come once it unblocks, so it is not waited
// for). Its name is read later, while the answers come in.
static void fl_describe_for_request(fl_thread_slot *slot, int dump_signal) {
    char buffer[2048];
    slot->run_state = 0;
    slot->blocks_request = 0;
    slot->faultline_own = 0;
    ssize_t got = fl_read_task_file(slot->tid, "status", buffer, sizeof buffer - 1);
    if (got <= 0) return;
    ssize_t at = 0;
    const char *name = fl_status_field(buffer, got, "Name", &at);
    if (name) {
        static const char own[] = FL_START_THREAD_NAME;
        size_t n = 0;
        while (n < sizeof own - 1 && at + (ssize_t)n < got && name[n] == own[n]) n++;
        slot->faultline_own = n == sizeof own - 1 && at + (ssize_t)n < got && name[n] == '\n';
    }
    const char *state = fl_status_field(buffer, got, "State", &at);
    if (state && at < got) slot->run_state = *state;
    const char *blocked = fl_status_field(buffer, got, "SigBlk", &at);
    if (!blocked) return;
    uint64_t mask = 0;
    for (int d = 0; d < 16 && at < got; d++, at++) {
        char c = buffer[at];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0) break;
        mask = mask << 4 | (uint64_t)v;
    }
    slot->blocks_request = dump_signal > 0 && ((mask >> (dump_signal - 1)) & 1);
}

// Runs on the crashing thread; compromised context. Lists the other threads (getdents64 on
// /proc/self/task) into the table's slots.
static void fl_list_threads(fl_thread_table *table, pid_t self, char *buffer, size_t capacity) {
    table->count = 0;
    table->total = 0;
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    for (;;) {
        long got = syscall(SYS_getdents64, fd, buffer, capacity);
        if (got <= 0) break;
        for (long offset = 0; offset < got;) {
            // struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }
            unsigned short record = (unsigned short)((unsigned char)buffer[offset + 16] | (unsigned char)buffer[offset + 17] << 8);
            const char *name = buffer + offset + 19;
            pid_t tid = 0;
            for (size_t i = 0; name[i] >= '0' && name[i] <= '9'; i++) tid = tid * 10 + (name[i] - '0');
            if (tid > 0 && tid != self) {
                table->total++;
                if (table->count < FL_MAX_THREADS) {
                    fl_thread_slot *slot = &table->slots[table->count++];
                    slot->tid = tid;
                    slot->frame_count = 0;
                    slot->name[0] = 0;
                    slot->faultline_own = 0;
                    slot->asked = 0;
                    atomic_store(&slot->state, FL_SLOT_REQUESTED);
                }
            }
            if (record == 0) break;
            offset += record;
        }
    }
    close(fd);
}

// Runs on the crashing thread; compromised context. Waits (bounded by FL_THREAD_ANSWER_WAIT_MS
// and the deadline) for an asked thread's answer.
static void fl_wait_for_answer(fl_thread_slot *slot, int64_t deadline) {
    if (!slot->asked) return;
    int64_t now = fl_monotonic_ms();
    int64_t until = now + FL_THREAD_ANSWER_WAIT_MS < deadline ? now + FL_THREAD_ANSWER_WAIT_MS : deadline;
    for (int state; (state = atomic_load(&slot->state)) < FL_SLOT_DONE && (now = fl_monotonic_ms()) < until;) {
        struct timespec rest = {(until - now) / 1000, (long)((until - now) % 1000) * 1000000L};
        fl_futex_wait(&slot->state, state, &rest);  // woken by the answer (or a change of state)
    }
}

// Runs on the crashing thread; compromised context. Asks every other thread for its stack and
// waits (bounded) for the answers. Up to FL_THREAD_ASKS_IN_FLIGHT requests are outstanding: slot
// i is asked once slot i - FL_THREAD_ASKS_IN_FLIGHT has answered (or was given up on). Each
// thread's status is read just before it is asked, while the earlier ones unwind.
void fl_collect_threads(pid_t crashing_thread) {
    fl_thread_table *table = fl_state.threads;
    int signo = atomic_load(&fl_state.dump_signal);  // one value for the whole collection
    if (!table || signo <= 0) return;
    table->collected = 0;
    atomic_store(&table->release, 0);
    // A runtime that installs handlers for every signal after start (Go's does) takes the dump
    // signal too and ignores the requests: every thread would be "no answer" and the crash
    // would wait out the whole budget. Ours is put back for the collection, theirs after it.
    struct sigaction ours, theirs;
    fl_dump_signal_action(&ours);
    int taken = sigaction(signo, NULL, &theirs) == 0 && theirs.sa_sigaction != fl_answer_dump_request;
    if (taken) sigaction(signo, &ours, NULL);
    fl_list_threads(table, crashing_thread, fl_state.scratch->maps_buffer, sizeof fl_state.scratch->maps_buffer);
    atomic_store(&table->collecting, 1);
    pid_t pid = getpid();
    int64_t deadline = fl_monotonic_ms() + atomic_load(&fl_thread_dump_budget_ms);
    size_t asked = 0;  // slots [0, asked) have been dealt with: asked, gone, or blocking the signal
    while (asked < table->count && fl_monotonic_ms() < deadline) {
        if (asked >= FL_THREAD_ASKS_IN_FLIGHT) fl_wait_for_answer(&table->slots[asked - FL_THREAD_ASKS_IN_FLIGHT], deadline);
        fl_thread_slot *slot = &table->slots[asked++];
        fl_describe_for_request(slot, signo);
        // A thread that blocks the signal would answer only once it unblocks; Faultline's own
        // start thread is not the app's and is left out.
        int ask = !slot->blocks_request && !slot->faultline_own;
        if (ask && syscall(SYS_tgkill, pid, slot->tid, signo) != 0) {
            atomic_store(&slot->state, FL_SLOT_GONE);  // exited meanwhile
            ask = 0;
        }
        slot->asked = ask;
    }
    // Names, while the last answers come in; then those answers.
    for (size_t i = 0; i < table->count; i++) fl_read_thread_name(&table->slots[i]);
    for (size_t i = asked > FL_THREAD_ASKS_IN_FLIGHT ? asked - FL_THREAD_ASKS_IN_FLIGHT : 0; i < asked; i++)
        fl_wait_for_answer(&table->slots[i], deadline);
    // From here no new answer starts; one still working is reported without frames.
    atomic_store(&table->collecting, 0);
    for (size_t i = asked; i < table->count; i++) fl_describe_for_request(&table->slots[i], signo);  // not reached by the deadline
    for (size_t i = 0; i < table->count; i++) {
        int requested = FL_SLOT_REQUESTED;
        atomic_compare_exchange_strong(&table->slots[i].state, &requested, FL_SLOT_SILENT);
    }
    table->collected = 1;
    if (taken) sigaction(signo, &theirs, NULL);
}

// Runs on the crashing thread; compromised context. The process goes on (the fault was recovered
// or the claim is taken over): parked threads return to what they were doing.
void fl_release_parked_threads(void) {
    if (!fl_state.threads) return;
    atomic_store(&fl_state.threads->release, 1);
    fl_futex_wake(&fl_state.threads->release, INT_MAX);
}
