// C++ names whose printing differs between libstdc++'s demangler and llvm-symbolizer's
// (LLVMAgreementTests.testCxxNamesMatchLLVMSymbolizer): nested templates, lambdas (one and
// several in a function, converted to function pointers inside a function template), an unnamed
// type as a template argument, std::nullptr_t, a templated operator<, and GCC's .cold, .constprop
// and .isra clones.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

template <typename T> struct Box { T value; };

template <typename T> __attribute__((noinline)) bool operator<(Box<T> a, Box<T> b) { return a.value < b.value; }

__attribute__((noinline)) int nested(const std::vector<std::vector<int>> &v, std::map<std::string, std::vector<int>> &m) {
    int n = 0;
    for (auto &row : v) n += (int)row.size();
    m["rows"].push_back(n);
    return n;
}

__attribute__((noinline)) int takes_null(std::nullptr_t, int x) { return x * 3; }

int (*volatile escaped)(int);

template <typename F> __attribute__((noinline)) int run_twice(F f, int x) {
    int (*plain)(int) = [](int y) { return y + 1; };
    int (*other)(int) = [](int y) { return y * 2; };
    escaped = plain;  // an out-of-line `_FUN` inside the template's abstract instance
    int r = f(escaped(x));
    escaped = other;
    return r + escaped(x);
}

struct Holder { struct { int x; } member; };
static Holder holder = {{7}};
template <typename T> __attribute__((noinline)) int use_unnamed(T *t) { return t->x + escaped(1); }

__attribute__((noreturn, noinline, cold)) static void fail(const char *what) {
    std::fprintf(stderr, "%s\n", what);
    std::abort();
}

__attribute__((noinline)) int checked(int x) {
    if (__builtin_expect(x < 0, 0)) {
        std::fprintf(stderr, "negative %d\n", x);
        fail("checked");
    }
    return x * 5;
}

static __attribute__((noinline)) int scaled(int x, int factor) { return x * factor + (x >> 3); }

struct Big { long a[8]; };
static __attribute__((noinline)) long sum_big(Big b) { return b.a[0] + b.a[7]; }

int main(int argc, char **argv) {
    std::vector<std::vector<int>> v{{1, 2}, {3}};
    std::map<std::string, std::vector<int>> m;
    int total = nested(v, m) + takes_null(nullptr, argc);
    auto first = [argc](int y) { return y + argc; };
    auto second = [&total](int y) { return y - total; };
    std::function<int(int)> keep = second;
    total += run_twice(first, argc) + run_twice(second, 2) + keep(3);
    total += use_unnamed(&holder.member) + checked(argc) + scaled(argc, 4) + scaled(total, 4);
    Big b{};
    b.a[0] = argc;
    total += (int)sum_big(b);
    total += (Box<int>{argc} < Box<int>{total}) ? 1 : 0;
    std::printf("%d %s\n", total, argv[0]);
    return 0;
}
