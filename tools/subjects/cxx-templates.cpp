// A C++ symbolication subject for tools/measure-symbolicate-cpu --cxx: the standard library's
// templates (containers, regex, streams, std::function, variant) instantiated 270 times, so most
// frames have long mangled names, lambdas and inlined calls, as in a C++-heavy program. Built at
// measurement time with g++ -O1 -g; it is measured, never run.
#include <map>
#include <unordered_map>
#include <vector>
#include <string>
#include <regex>
#include <sstream>
#include <iostream>
#include <functional>
#include <memory>
#include <algorithm>
#include <set>
#include <tuple>
#include <variant>
#include <optional>
template <int N, typename T> struct Work {
  std::map<std::string, std::vector<T>> m;
  std::unordered_map<int, std::function<T(T)>> f;
  std::regex re{"a+b*" + std::to_string(N)};
  T run(const std::string& s, T v) {
    m[s].push_back(v);
    f[N] = [](T x) { return x + N; };
    std::ostringstream os; os << s << v;
    std::set<std::tuple<int, std::string>> st; st.insert({N, os.str()});
    std::variant<int, std::string, T> var = v;
    std::optional<T> o = std::get<T>(var);
    std::sort(m[s].begin(), m[s].end());
    return f[N](*o) + (std::regex_search(os.str(), re) ? 1 : 0) + st.size();
  }
};
#define W(n) { Work<n, double> a; t += a.run("x", t); Work<n, long> b; t += b.run("y", (long)t); Work<n, float> c; t += c.run("z", (float)t); }
#define W10(n) W(n##0) W(n##1) W(n##2) W(n##3) W(n##4) W(n##5) W(n##6) W(n##7) W(n##8) W(n##9)
int main(int argc, char**) { double t = argc;
W10(1) W10(2) W10(3) W10(4) W10(5) W10(6) W10(7) W10(8) W10(9)
std::cout << t << "\n"; }
