/* Second compile unit of the ELF fuzz target's two-unit seed (tools/fuzz links it with small.c):
   a partial build of this unit reads it through a view of .debug_info that starts there. */
struct pair { int a; long b; };
static inline long fold(const struct pair *p, int k) { return p->a * (long)k + p->b; }
__attribute__((noinline)) long second_unit_sum(const struct pair *p, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) s += fold(&p[i], i);
    return s;
}
