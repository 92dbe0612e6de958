/* A shared library whose function faults, for Aarch64CrashTests: the crash lands in its module, called from the executable. */
__attribute__((noinline)) void library_fault(volatile int *where) { *where = 7; }
