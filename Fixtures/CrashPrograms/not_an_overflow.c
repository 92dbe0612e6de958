// Faults near the stack pointer that are no stack overflow: the stack pointer set to an address
// where nothing is mapped, then a push (`bad-sp`), and a call into bytes on the stack, which is
// not executable (`stack-code`). Both fault within a few pages of the stack pointer; neither is
// beside a stack's guard page.
//
//   not_an_overflow bad-sp|stack-code        (x86_64)
#include <stdint.h>
#include <string.h>

__attribute__((noinline)) static void push_with_a_wild_stack_pointer(void) {
    __asm__ volatile("movabs $0xdeadbeef000, %%rsp\n\tpushq $1" ::: "memory");
}

__attribute__((noinline)) static void call_stack_bytes(void) {
    volatile unsigned char code[16] = {0xc3};  // ret, never run: the stack is not executable
    void (*f)(void) = (void (*)(void))(uintptr_t)code;
    f();
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "bad-sp") == 0) push_with_a_wild_stack_pointer();
    if (argc > 1 && strcmp(argv[1], "stack-code") == 0) call_stack_bytes();
    return 2;
}
