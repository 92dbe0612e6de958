// Fixture: C++ templates, namespaces and a lambda, inlined into one out-of-line function.
#include <cstdio>

volatile int sink;

namespace geo {
template <typename T>
struct Box {
    T v;
    __attribute__((always_inline)) inline T scaled(T k) const {
        __asm__ volatile("fl_marker_cxx_scaled: nop"); // LINE:cxx_scaled
        return v * k;
    }
};
} // namespace geo

namespace app {
__attribute__((noinline)) int entry_cxx(int x) {
    geo::Box<int> b{x};
    auto lam = [&](int k) __attribute__((always_inline)) {
        return b.scaled(k) + 1; // LINE:cxx_call_scaled
    };
    sink = lam(3); // LINE:cxx_call_lambda
    return sink;
}
} // namespace app

int main(int argc, char **) {
    std::printf("%d\n", app::entry_cxx(argc));
    return 0;
}
