// A process under a seccomp filter that kills it (or traps) for process_vm_readv, as a systemd
// unit's SystemCallFilter= or a sandbox may: the crash handler must not make that call. The filter
// is installed after start (`after-start`), or before an exec of this program (`before-start`:
// systemd installs it before the service's exec), then the main thread writes through a near-null
// pointer.
//
//   seccomp_filtered after-start|before-start kill|trap
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) static void fault_here(volatile int *p) { *p = 42; }

static int filter_process_vm_readv(const char *action) {
    unsigned ret = strcmp(action, "trap") == 0 ? SECCOMP_RET_TRAP : SECCOMP_RET_KILL_PROCESS;
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, ret),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {sizeof code / sizeof code[0], code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
        perror("seccomp");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    if (strcmp(argv[1], "before-start") == 0) {
        if (filter_process_vm_readv(argv[2]) != 0) return 1;
        char *again[] = {argv[0], "filtered", argv[2], NULL};
        execv("/proc/self/exe", again);
        perror("exec");
        return 1;
    }
    if (strcmp(argv[1], "after-start") == 0 && filter_process_vm_readv(argv[2]) != 0) return 1;
    usleep(20 * 1000);  // start's background preparation, which copies memory too, may run meanwhile
    fault_here((volatile int *)(uintptr_t)16);
    return 0;
}
