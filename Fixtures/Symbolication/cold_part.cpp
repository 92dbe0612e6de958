// A C++ program whose g++ -O2 build splits main into main and main.cold, where main.cold's first
// instructions have no line-table row (the outside tester's reproducer; see SymbolTableFileTests).
#include <functional>
#include <vector>
#include <map>
#include <string>
#include <memory>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
namespace {
  struct Anon { int v; Anon(int x):v(x){} ~Anon(){ if(v==42) std::puts("x"); } int get() const { return v*3; } };
  int anonFunc(int x){ Anon a(x); return a.get(); }
}
namespace ns { namespace inner {
template<typename T, int N> struct Box { T data[N]; T sum() const { T s{}; for (int i=0;i<N;i++) s+=data[i]; return s; }
  Box operator+(const Box& o) const { Box r; for(int i=0;i<N;i++) r.data[i]=data[i]+o.data[i]; return r; }
  bool operator==(const Box& o) const { for(int i=0;i<N;i++) if(data[i]!=o.data[i]) return false; return true; }
  T& operator[](int i){ return data[i]; } };
}}
struct Base { virtual ~Base(){} virtual int f(int x){ return x+1; } };
struct Mid1 : virtual Base { int f(int x) override { return x*2; } };
struct Mid2 : virtual Base { virtual int g(){ return 7; } };
struct Derived : Mid1, Mid2 { int f(int x) override { return x*5+g(); } int g() override { return 9; } ~Derived() override {} };
__attribute__((always_inline)) static inline int leaf(int x){ return x*x + (x>>3); }
__attribute__((always_inline)) static inline int mid(int x){ return leaf(x+1) - leaf(x-1); }
__attribute__((always_inline)) static inline int top(int x){ return mid(x*2) + mid(x+7); }
__attribute__((noinline)) int chain(int x){ return top(x) + top(x^5); }
static int staticFn(int x){ volatile int y=x; return y+1; }
template<typename F> __attribute__((noinline)) int apply(F f, int x){ return f(x); }
template<typename... Ts> __attribute__((noinline)) int variadic(Ts... ts){ return (ts + ... + 0); }
struct Op { int v; Op operator*(const Op& o) const { return {v*o.v}; } Op& operator++(){ ++v; return *this; } operator bool() const { return v!=0; } bool operator<(const Op&o)const{return v<o.v;} };
__attribute__((noinline)) int useOps(int a){ Op x{a}, y{a+1}; ++x; Op z=x*y; return z ? z.v : 0; }
int (*fp)(int) = staticFn;
int main(int argc, char** argv){
  int acc=0;
  acc += anonFunc(argc);
  ns::inner::Box<int,4> b{{1,2,3,argc}}, c{{4,5,6,7}};
  auto d=b+c; acc+=d.sum(); acc += (b==c); acc+=d[2];
  ns::inner::Box<double,3> e{{1.5,2.5,(double)argc}}; acc += (int)(e+e).sum();
  Derived dd; Base* bp=&dd; acc+=bp->f(argc); Mid2* m2=&dd; acc+=m2->g();
  acc+=chain(argc);
  acc+=fp(argc);
  auto lam=[acc](int x){ return x+acc; };
  acc+=apply(lam,argc);
  auto glam=[](auto x, auto y){ return x*y; };
  acc+=apply([&](int x){ return glam(x,2)+glam(x,3L); }, argc);
  std::function<int(int)> sf=[&](int z){ return z+acc+1; };
  acc+=sf(argc);
  acc+=variadic(1,2L,3,argc);
  acc+=useOps(argc);
  std::vector<std::string> vs{"b","a","c"}; std::sort(vs.begin(),vs.end());
  std::map<std::string,std::vector<int>> mm; mm["x"].push_back(acc);
  auto up=std::make_unique<Derived>(); acc+=up->f(1);
  std::vector<std::function<int(int)>> fv; fv.push_back(lam); fv.push_back(sf); for(auto&f:fv) acc+=f(1);
  std::printf("%d %zu\n", acc, mm.size()+vs.size());
  return acc & 1;
}
