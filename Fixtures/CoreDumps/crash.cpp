// Crashes the way argv[1] says, for the core-file tests: null, abort, overflow, thread.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>
#include <vector>

namespace crashing {
struct Widget {
    int value;
};

// volatile: a read with no side effect would be dropped where its result is unused (the thread).
__attribute__((noinline)) int readWidget(const volatile Widget *w) { return w->value + 1; }

__attribute__((noinline)) int nullDereference() {
    const volatile Widget *nothing = nullptr;
    return readWidget(nothing) * 2;
}

__attribute__((noinline)) void giveUp() { std::abort(); }

__attribute__((noinline)) int recurse(int depth) {
    volatile char frame[128];
    std::memset(const_cast<char *>(frame), depth & 0xff, sizeof frame);
    return recurse(depth + 1) + frame[depth % 128];
}

__attribute__((noinline)) void crashOnSecondThread() {
    std::thread t([] { nullDereference(); });
    t.join();
}
}  // namespace crashing

int main(int argc, char **argv) {
    std::string how = argc > 1 ? argv[1] : "";
    if (how == "null") return crashing::nullDereference();
    if (how == "abort") crashing::giveUp();
    if (how == "overflow") return crashing::recurse(0);
    if (how == "thread") crashing::crashOnSecondThread();
    std::cerr << "usage: crash null|abort|overflow|thread\n";
    return 2;
}
