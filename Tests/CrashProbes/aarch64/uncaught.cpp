// An unmodified C++ program that dies of an uncaught exception, built for aarch64 at test time
// (Aarch64CrashTests): the preload library's C++ terminate handler records its type and what().
#include <stdexcept>

__attribute__((noinline)) void throw_from_here(int depth) {
    if (depth > 0) throw std::runtime_error("thrown on aarch64");
}

int main(int argc, char **) {
    throw_from_here(argc);
    return 0;
}
