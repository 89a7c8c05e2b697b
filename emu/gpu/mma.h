/* emu/gpu/mma.h - nvcuda::wmma for the emulator (pp_emu.h).

   CUDA leaves a WMMA fragment's layout opaque: which lane holds which
   element is unspecified, so any assignment is faithful. Here lane L holds
   elements 8L..8L+7 of the 16 x 16 tile in row-major (row, col) order: A as
   (m, k), B as (k, n), the accumulator as (m, n). Loads and stores are done
   by each lane for its own elements (so the checkers see which lane touched
   what); mma_sync is a warp collective in pp_emu.cpp (fp32 accumulation of
   exact bf16 products, in double, rounded once). Only the 16x16x16 shape
   with __nv_bfloat16 inputs and float accumulators is provided. */
#ifndef PP_EMU_MMA_H
#define PP_EMU_MMA_H
#include "pp_emu.h"

namespace nvcuda {
namespace wmma {
struct row_major {};
struct col_major {};
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
    static_assert(M == 16 && N == 16 && K == 16, "pp_emu: only WMMA 16x16x16 is emulated");
    enum { num_elements = 8 };
    T x[8];
};

/* element e (0..255) of the tile: its address for a layout */
static inline size_t pp_emu_wmma_at(int e, bool row_major_, unsigned ldm) {
    int r = e >> 4, c = e & 15;
    return row_major_ ? (size_t)r * ldm + c : (size_t)c * ldm + r;
}
void pp_emu_wmma_mma(float d[8], const __nv_bfloat16 a[8], const __nv_bfloat16 b[8], const float c[8], const char *file,
                     int line);
unsigned pp_emu_lane(void);

template <class Use, class T, class L> static inline void pp_emu_wmma_load(fragment<Use, 16, 16, 16, T, L> &f, const T *p, unsigned ldm) {
    /* A (m,k) row_major: p[m*ldm + k]; B (k,n) row_major: p[k*ldm + n]; col_major swaps */
    bool rm = std::is_same<L, row_major>::value;
    unsigned lane = pp_emu_lane();
    for (int i = 0; i < 8; i++) f.x[i] = p[pp_emu_wmma_at((int)lane * 8 + i, rm, ldm)];
}
template <class Use, class T, class L>
static inline void load_matrix_sync(fragment<Use, 16, 16, 16, T, L> &f, const T *p, unsigned ldm) {
    pp_emu_wmma_load(f, p, ldm);
}
template <class T> static inline void fill_fragment(fragment<accumulator, 16, 16, 16, T> &f, T v) {
    for (int i = 0; i < 8; i++) f.x[i] = v;
}
template <class T>
static inline void store_matrix_sync(T *p, const fragment<accumulator, 16, 16, 16, T> &f, unsigned ldm, layout_t l) {
    unsigned lane = pp_emu_lane();
    for (int i = 0; i < 8; i++) p[pp_emu_wmma_at((int)lane * 8 + i, l == mem_row_major, ldm)] = f.x[i];
}
template <class LA, class LB>
static inline void pp_emu_mma_sync_at(fragment<accumulator, 16, 16, 16, float> &d,
                                      const fragment<matrix_a, 16, 16, 16, __nv_bfloat16, LA> &a,
                                      const fragment<matrix_b, 16, 16, 16, __nv_bfloat16, LB> &b,
                                      const fragment<accumulator, 16, 16, 16, float> &c, const char *file, int line) {
    pp_emu_wmma_mma(d.x, a.x, b.x, c.x, file, line);
}
#define mma_sync(d, a, b, c) pp_emu_mma_sync_at(d, a, b, c, __FILE__, __LINE__)
} // namespace wmma
} // namespace nvcuda
#endif
