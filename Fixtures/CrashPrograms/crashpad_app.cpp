// A C++ program that ships Crashpad the way apps do, without linking it: at a crash it starts
// Crashpad's own handler, as CrashpadClient::StartHandlerAtCrash does — the signal handler fills
// an ExceptionInformation {siginfo, ucontext, thread id}, forks, lets the child trace it
// (PR_SET_PTRACER), and the child execs
//   crashpad_handler --database=DIR --url=URL --trace-parent-with-exception=<address> --no-rate-limit
// which writes a minidump and uploads it (uploads are enabled in DIR/settings.dat, as
// crashpad::Settings::SetUploadsEnabled writes it). Two worker threads wait in known functions,
// so the dump holds three threads. The crash is a null write two calls below main. With `-` for
// URL the handler only writes the dump (DATABASE/completed or pending/*.dmp). Up to six further
// arguments go to the handler as they are (sentry-native passes `--attachment=FILE` for its scope
// files; the handler uploads each file as a part named by the file's name).
//   crashpad_app HANDLER DATABASE URL|- [HANDLER-ARGUMENT…]
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

// crashpad/util/linux/exception_information.h
struct ExceptionInformation {
    uint64_t siginfo_address;
    uint64_t context_address;
    pid_t thread_id;
};

const char *handler_path;
bool uploads;
char database_argument[4096], url_argument[4096], address_argument[64];
// Six at most: main's argument count must stay at most 10 (see the shelf in main).
constexpr int max_extra = 6;
char **extra_arguments;
int extra_count;
ExceptionInformation info;
volatile int workers_waiting;

// crashpad/client/settings.cc: magic 'CPds', version 1, options (bit 0: uploads enabled),
// padding, last upload attempt time, client id (a UUID).
void enable_uploads(const char *database) {
    mkdir(database, 0700);
    char path[4200];
    snprintf(path, sizeof path, "%s/settings.dat", database);
    struct {
        uint32_t magic, version, options, padding;
        int64_t last_upload_attempt_time;
        uint8_t client_id[16];
    } settings = {0x43506473, 1, 1, 0, 0, {0}};
    for (int i = 0; i < 16; i++) settings.client_id[i] = (uint8_t)(getpid() * 31 + i * 17);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(&settings, sizeof settings, 1, f) != 1) { perror(path); exit(2); }
    fclose(f);
}

// Runs in the crashed process's signal handler: only fork, pipe, prctl, execv, waitpid, signal.
void at_crash(int signo, siginfo_t *siginfo, void *context) {
    info.siginfo_address = (uint64_t)(uintptr_t)siginfo;
    info.context_address = (uint64_t)(uintptr_t)context;
    info.thread_id = (pid_t)syscall(SYS_gettid);
    int go[2];
    if (pipe(go) != 0) _exit(120);
    pid_t child = fork();
    if (child == 0) {
        // Becomes the handler only once the parent has let it trace the crashed process.
        char byte;
        close(go[1]);
        if (read(go[0], &byte, 1) != 1) _exit(121);
        char *argv[5 + max_extra + 1] = {(char *)handler_path, database_argument, address_argument, (char *)"--no-rate-limit"};
        int n = 4;
        if (uploads) argv[n++] = url_argument;
        for (int i = 0; i < extra_count; i++) argv[n++] = extra_arguments[i];
        argv[n] = nullptr;
        execv(handler_path, argv);
        _exit(122);
    }
    close(go[0]);
    prctl(PR_SET_PTRACER, child, 0, 0, 0);
    (void)!write(go[1], "g", 1);
    close(go[1]);
    int status;
    while (waitpid(child, &status, 0) < 0) {}
    // The default action next: returning re-executes the faulting write.
    signal(signo, SIG_DFL);
}

__attribute__((noinline)) void wait_for_orders() {
    __atomic_add_fetch(&workers_waiting, 1, __ATOMIC_SEQ_CST);
    for (;;) pause();
}

void *worker(void *) {
    wait_for_orders();
    return nullptr;
}

}  // namespace

namespace inventory {
struct Shelf {
    int *slots;
    __attribute__((noinline)) void restock(int count);
};

__attribute__((noinline)) void Shelf::restock(int count) {
    slots[count] = count;  // slots is null: the crash
    asm volatile("" ::: "memory");
}

__attribute__((noinline)) void nightly_restock(Shelf &shelf, int count) {
    shelf.restock(count * 2);
    asm volatile("" ::: "memory");
}
}  // namespace inventory

int main(int argc, char **argv) {
    if (argc < 4 || argc > 4 + max_extra) {
        fprintf(stderr, "usage: crashpad_app HANDLER DATABASE URL|- [HANDLER-ARGUMENT…] (at most %d)\n", max_extra);
        return 2;
    }
    extra_arguments = argv + 4;
    extra_count = argc - 4;
    handler_path = argv[1];
    snprintf(database_argument, sizeof database_argument, "--database=%s", argv[2]);
    uploads = strcmp(argv[3], "-") != 0;
    snprintf(url_argument, sizeof url_argument, "--url=%s", argv[3]);
    snprintf(address_argument, sizeof address_argument, "--trace-parent-with-exception=%llu",
             (unsigned long long)(uintptr_t)&info);
    if (uploads) enable_uploads(argv[2]);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = at_crash;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, nullptr);
    pthread_t threads[2];
    for (pthread_t &t : threads) pthread_create(&t, nullptr, worker, nullptr);
    while (__atomic_load_n(&workers_waiting, __ATOMIC_SEQ_CST) < 2) usleep(1000);
    inventory::Shelf shelf = {argc > 10 ? new int[64] : nullptr};
    inventory::nightly_restock(shelf, argc);
    return 0;
}
