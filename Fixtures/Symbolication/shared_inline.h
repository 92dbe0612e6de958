/* Inline functions shared by dwz_a.c and dwz_b.c: their abstract DIEs are identical in both
   programs, so `dwz -m` moves them into the common supplementary file, and the inlined frames of
   each program name them through DW_FORM_GNU_ref_alt / DW_FORM_ref_sup. */
struct fl_pair { int a; int b; };
extern volatile int fl_sink;

static inline __attribute__((always_inline)) int fl_shared_leaf(int x) {
  fl_sink = x;
  return fl_sink * 7;
}

static inline __attribute__((always_inline)) int fl_shared_mul(int x, int y) {
  struct fl_pair p = { x, y };
  fl_sink = p.a;
  return fl_shared_leaf(p.a * p.b) + fl_sink;
}
