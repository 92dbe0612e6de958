#ifndef FAULTLINE_ASYNC_PROBE_H
#define FAULTLINE_ASYNC_PROBE_H
/// Called directly from a Swift async function: corrupts that function's async context (the
/// word at its rbp-8) and then writes through a null pointer (SIGSEGV). how 1: Parent points at
/// unmapped memory; 2: Parent points at the context itself (a loop); 3: the slot at rbp-8 itself
/// holds a misaligned pointer.
int probe_corrupt_async_context(int how);
#endif
