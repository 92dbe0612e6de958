// An uncaught C++ exception, for the crash-message tests.
#include <stdexcept>
#include <string>

extern "C" __attribute__((noinline, used)) void probe_throw_cxx(void) {
    throw std::out_of_range("cache miss: zz");
}

extern "C" __attribute__((noinline, used)) void probe_throw_cxx_long(void) {
    throw std::runtime_error(std::string(5000, 'x'));
}
