// The library many_libraries.c loads many copies of: plugin_crash writes through a null pointer.
__attribute__((noinline)) void plugin_crash(void) { *(volatile int *)16 = 1; }
