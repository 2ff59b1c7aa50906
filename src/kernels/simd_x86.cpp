// The x86 vector kernels of simd_ops: SSE2 (1- and 2-byte transposes), AVX2 and AVX-512
// (streaming copies and fills, 8- and 4-byte transposes over the strip drivers of
// simd_strips.hpp). Compiled with per-function target attributes, so the library runs on any
// x86-64 and simd.cpp chooses the level at run time.
#include "kernels/simd_x86.hpp"

#if GTS_X86_SIMD

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/simd_strips.hpp"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's avx512fintrin.h initializes _mm512_undefined_* from themselves, which -Wuninitialized
// reports at every inlined intrinsic (-Wmaybe-uninitialized at -O1, as in the TSan build); the
// values are deliberately undefined there.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace gts::kernels::detail {
namespace {

// Writes the bytes before the first 64-byte boundary at or after @p p from the pattern (indexed
// by address modulo 64), and advances @p p and @p bytes past them.
inline void pattern_head(unsigned char*& p, std::size_t& bytes, const unsigned char* pat) {
  const std::size_t head = head_bytes(p, bytes);
  const std::size_t mis = reinterpret_cast<uintptr_t>(p) % 64;
  for (std::size_t i = 0; i < head; ++i) p[i] = pat[(mis + i) % 64];
  p += head;
  bytes -= head;
}

// The streaming copy, the pattern fill and the one-line copy (the windowed transposes' line
// store) of one instruction set, over its 64-byte line type line_ISA, load_line_ISA and
// put_line_ISA (a macro, as the strip drivers of simd_strips.hpp: each copy needs its
// function's target attribute to inline the line functions). The bytes before the first line
// boundary and after the last whole line go through memcpy; whole lines are streamed four at a
// time (all four loaded before the first store), then one at a time.
// NOLINTBEGIN(bugprone-macro-parentheses): TARGET is an attribute.
#define GTS_STREAMING(ISA, TARGET)                                                       \
  TARGET inline void copy_line_##ISA(std::byte* d, const std::byte* s) {                 \
    put_line_##ISA<true>(d, load_line_##ISA(s));                                         \
  }                                                                                      \
  TARGET void stream_copy_##ISA(void* dst, const void* src, std::size_t bytes) {         \
    auto* d = static_cast<unsigned char*>(dst);                                          \
    const auto* s = static_cast<const unsigned char*>(src);                              \
    const std::size_t head = head_bytes(d, bytes);                                       \
    std::memcpy(d, s, head);                                                             \
    d += head;                                                                           \
    s += head;                                                                           \
    bytes -= head;                                                                       \
    for (; bytes >= 256; bytes -= 256, d += 256, s += 256) {                             \
      const line_##ISA a = load_line_##ISA(s), b = load_line_##ISA(s + 64);              \
      const line_##ISA c = load_line_##ISA(s + 128), e = load_line_##ISA(s + 192);       \
      put_line_##ISA<true>(d, a);                                                        \
      put_line_##ISA<true>(d + 64, b);                                                   \
      put_line_##ISA<true>(d + 128, c);                                                  \
      put_line_##ISA<true>(d + 192, e);                                                  \
    }                                                                                    \
    for (; bytes >= 64; bytes -= 64, d += 64, s += 64) {                                 \
      put_line_##ISA<true>(d, load_line_##ISA(s));                                       \
    }                                                                                    \
    std::memcpy(d, s, bytes);                                                            \
  }                                                                                      \
  TARGET void pattern_fill_##ISA(void* dst, std::size_t bytes, const unsigned char* pat, \
                                 bool nt) {                                              \
    auto* p = static_cast<unsigned char*>(dst);                                          \
    pattern_head(p, bytes, pat);                                                         \
    const line_##ISA line = load_line_##ISA(pat);                                        \
    if (nt) {                                                                            \
      for (; bytes >= 64; bytes -= 64, p += 64) put_line_##ISA<true>(p, line);           \
    } else {                                                                             \
      for (; bytes >= 64; bytes -= 64, p += 64) put_line_##ISA<false>(p, line);          \
    }                                                                                    \
    std::memcpy(p, pat, bytes);                                                          \
  }
// NOLINTEND(bugprone-macro-parentheses)

// ---------------------------------- SSE2 (every x86-64) -------------------------------------
// 1- and 2-byte transposes in 8x8 blocks. Eight source rows at a time keeps the lines in use
// within one 8-way cache set even when rows are a power of two apart. Ordinary stores: their
// destination rows are 8 or 16 bytes per block, too short for whole-line streaming stores.

// 8x8 block of 2-byte elements from its source rows r (one per register), to the destination
// rows d + k*dsy.
inline void block2_sse2(std::byte* d, int64_t dsy, const __m128i (&r)[8]) {
  const __m128i a0 = _mm_unpacklo_epi16(r[0], r[1]), a1 = _mm_unpackhi_epi16(r[0], r[1]);
  const __m128i a2 = _mm_unpacklo_epi16(r[2], r[3]), a3 = _mm_unpackhi_epi16(r[2], r[3]);
  const __m128i a4 = _mm_unpacklo_epi16(r[4], r[5]), a5 = _mm_unpackhi_epi16(r[4], r[5]);
  const __m128i a6 = _mm_unpacklo_epi16(r[6], r[7]), a7 = _mm_unpackhi_epi16(r[6], r[7]);
  const __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2);
  const __m128i b2 = _mm_unpacklo_epi32(a1, a3), b3 = _mm_unpackhi_epi32(a1, a3);
  const __m128i b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6);
  const __m128i b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
  const __m128i c[8] = {_mm_unpacklo_epi64(b0, b4), _mm_unpackhi_epi64(b0, b4),
                        _mm_unpacklo_epi64(b1, b5), _mm_unpackhi_epi64(b1, b5),
                        _mm_unpacklo_epi64(b2, b6), _mm_unpackhi_epi64(b2, b6),
                        _mm_unpacklo_epi64(b3, b7), _mm_unpackhi_epi64(b3, b7)};
  for (int k = 0; k < 8; ++k) _mm_storeu_si128(reinterpret_cast<__m128i*>(d + k * dsy), c[k]);
}

// 8x8 block of 1-byte elements (source rows in the low halves of r), as block2_sse2.
inline void block1_sse2(std::byte* d, int64_t dsy, const __m128i (&r)[8]) {
  const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpacklo_epi8(r[2], r[3]);
  const __m128i a2 = _mm_unpacklo_epi8(r[4], r[5]), a3 = _mm_unpacklo_epi8(r[6], r[7]);
  const __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);
  const __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);
  // Each c holds two destination rows of 8 bytes.
  const __m128i c[4] = {_mm_unpacklo_epi32(b0, b2), _mm_unpackhi_epi32(b0, b2),
                        _mm_unpacklo_epi32(b1, b3), _mm_unpackhi_epi32(b1, b3)};
  for (int k = 0; k < 4; ++k) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + 2 * k * dsy), c[k]);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + (2 * k + 1) * dsy),
                     _mm_unpackhi_epi64(c[k], c[k]));
  }
}

using block_sse2_fn = void (*)(std::byte*, int64_t, const __m128i (&)[8]);

// The 8 source rows of a block of Size-byte elements, 8 * Size bytes each, from s + k*ssx.
template <int Size>
inline void load_block_rows(__m128i (&r)[8], const std::byte* s, int64_t ssx) {
  for (int k = 0; k < 8; ++k) {
    const auto* row = reinterpret_cast<const __m128i*>(s + k * ssx);
    r[k] = Size == 1 ? _mm_loadl_epi64(row) : _mm_loadu_si128(row);
  }
}

// A transpose of Size-byte elements: each plane in 8x8 blocks (Block), its edges element-wise.
template <int Size, block_sse2_fn Block>
void transpose_sse2(std::byte* d, const std::byte* s, const transpose_geom& g, bool /*nt*/) {
  for (int64_t z = 0; z < g.nz; ++z) {
    std::byte* dz = d + z * g.dsz;
    const std::byte* sz = s + z * g.ssz;
    int64_t x = 0;
    for (; x + 8 <= g.nx; x += 8) {
      const std::byte* sx = sz + x * g.ssx;
      std::byte* dx = dz + x * Size;
      int64_t y = 0;
      for (; y + 8 <= g.ny; y += 8) {
        __m128i r[8];
        load_block_rows<Size>(r, sx + y * Size, g.ssx);
        Block(dx + y * g.dsy, g.dsy, r);
      }
      transpose_scalar<Size>(dz, g.dsy, sz, g.ssx, x, x + 8, y, g.ny);
    }
    transpose_scalar<Size>(dz, g.dsy, sz, g.ssx, x, g.nx, 0, g.ny);
  }
}

constexpr auto transpose2_sse2 = &transpose_sse2<2, block2_sse2>;
constexpr auto transpose1_sse2 = &transpose_sse2<1, block1_sse2>;

// ---------------------------------- AVX2 ---------------------------------------------------

// A 64-byte line in two ymm registers.
struct line_avx2 {
  __m256i lo, hi;
};
GTS_TARGET_AVX2 inline line_avx2 load_line_avx2(const void* s) {
  const auto* v = static_cast<const __m256i*>(s);
  return {_mm256_loadu_si256(v), _mm256_loadu_si256(v + 1)};
}
// A line to d: streamed (NT, d on a line boundary) or stored (any alignment).
template <bool NT>
GTS_TARGET_AVX2 inline void put_line_avx2(void* d, line_avx2 line) {
  auto* v = static_cast<__m256i*>(d);
  if (NT) {
    _mm256_stream_si256(v, line.lo);
    _mm256_stream_si256(v + 1, line.hi);
  } else {
    _mm256_storeu_si256(v, line.lo);
    _mm256_storeu_si256(v + 1, line.hi);
  }
}

GTS_STREAMING(avx2, GTS_TARGET_AVX2)

// 4x4 transpose of doubles held in r0..r3 (rows) into o0..o3 (columns).
GTS_TARGET_AVX2 inline void tr4x4_pd(__m256d r0, __m256d r1, __m256d r2, __m256d r3, __m256d& o0,
                                     __m256d& o1, __m256d& o2, __m256d& o3) {
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1);  // a00 a10 a02 a12
  const __m256d t1 = _mm256_unpackhi_pd(r0, r1);  // a01 a11 a03 a13
  const __m256d t2 = _mm256_unpacklo_pd(r2, r3);  // a20 a30 a22 a32
  const __m256d t3 = _mm256_unpackhi_pd(r2, r3);  // a21 a31 a23 a33
  o0 = _mm256_permute2f128_pd(t0, t2, 0x20);
  o1 = _mm256_permute2f128_pd(t1, t3, 0x20);
  o2 = _mm256_permute2f128_pd(t0, t2, 0x31);
  o3 = _mm256_permute2f128_pd(t1, t3, 0x31);
}

template <bool NT>
GTS_TARGET_AVX2 inline void store_line_pd(std::byte* p, __m256d lo, __m256d hi) {
  put_line_avx2<NT>(p, {_mm256_castpd_si256(lo), _mm256_castpd_si256(hi)});
}

// 8x8 block of doubles: source rows x0..x0+7 at s (stride ssx), destination rows y0..y0+7 at d.
// Source rows from @p rows on repeat row rows-1 (see source_row).
template <bool NT>
GTS_TARGET_AVX2 inline void block8_pd_avx2(std::byte* d, int64_t dsy, const std::byte* s,
                                           int64_t ssx, int64_t rows) {
  for (int h = 0; h < 2; ++h) {
    const std::byte* sh = s + h * 32;
    __m256d r[8];
    for (int k = 0; k < 8; ++k)
      r[k] = _mm256_loadu_pd(reinterpret_cast<const double*>(source_row(sh, k, rows, ssx)));
    __m256d a0, a1, a2, a3, b0, b1, b2, b3;
    tr4x4_pd(r[0], r[1], r[2], r[3], a0, a1, a2, a3);
    tr4x4_pd(r[4], r[5], r[6], r[7], b0, b1, b2, b3);
    std::byte* dh = d + (4 * h) * dsy;
    store_line_pd<NT>(dh, a0, b0);
    store_line_pd<NT>(dh + dsy, a1, b1);
    store_line_pd<NT>(dh + 2 * dsy, a2, b2);
    store_line_pd<NT>(dh + 3 * dsy, a3, b3);
  }
}

// 8x8 transpose of floats in r[0..7] (rows) into r[0..7] (columns).
GTS_TARGET_AVX2 inline void tr8x8_ps(__m256* r) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]);
  const __m256 t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]);
  const __m256 t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]);
  const __m256 t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]);
  const __m256 t7 = _mm256_unpackhi_ps(r[6], r[7]);
  __m256 u[8];
  u[0] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  u[1] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  u[2] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  u[3] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  u[4] = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  u[5] = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  u[6] = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  u[7] = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  // Lower 128-bit lanes of u[k] and u[k + 4] make row k, upper ones row k + 4.
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
    r[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
  }
}

// 16x16 block of 4-byte elements: each group of 8 source rows is loaded as whole lines (two
// loads per row, back to back, so a line is used up before rows a power of two apart can evict
// it), transposed as two 8x8 blocks into a 1 KiB stack tile, and the tile's 16 rows leave as
// whole lines.
template <bool NT>
GTS_TARGET_AVX2 inline void block16_ps_avx2(std::byte* d, int64_t dsy, const std::byte* s,
                                            int64_t ssx, int64_t rows) {
  alignas(64) float tile[16][16];
  for (int g = 0; g < 2; ++g) {
    __m256 a[8], b[8];
    for (int k = 0; k < 8; ++k) {
      const auto* row = reinterpret_cast<const float*>(source_row(s, 8 * g + k, rows, ssx));
      a[k] = _mm256_loadu_ps(row);
      b[k] = _mm256_loadu_ps(row + 8);
    }
    tr8x8_ps(a);
    tr8x8_ps(b);
    for (int k = 0; k < 8; ++k) {
      _mm256_store_ps(&tile[k][8 * g], a[k]);
      _mm256_store_ps(&tile[8 + k][8 * g], b[k]);
    }
  }
  for (int y = 0; y < 16; ++y) put_line_avx2<NT>(d + y * dsy, load_line_avx2(tile[y]));
}

GTS_TRANSPOSES(avx2, GTS_TARGET_AVX2, block8_pd_avx2, block16_ps_avx2, copy_line_avx2)

void fence_x86() {
  _mm_sfence();
}

// --------------------------------- AVX-512 -------------------------------------------------

// A 64-byte line in one zmm register.
using line_avx512 = __m512i;
GTS_TARGET_AVX512 inline line_avx512 load_line_avx512(const void* s) {
  return _mm512_loadu_si512(s);
}
// A line to d: streamed (NT, d on a line boundary) or stored (any alignment).
template <bool NT>
GTS_TARGET_AVX512 inline void put_line_avx512(void* d, line_avx512 line) {
  if (NT) {
    _mm512_stream_si512(static_cast<__m512i*>(d), line);
  } else {
    _mm512_storeu_si512(d, line);
  }
}

GTS_STREAMING(avx512, GTS_TARGET_AVX512)

// 8x8 block of doubles in zmm registers: 8 loads, 24 shuffles, 8 full-line stores.
template <bool NT>
GTS_TARGET_AVX512 inline void block8_pd_avx512(std::byte* d, int64_t dsy, const std::byte* s,
                                               int64_t ssx, int64_t rows) {
  // (No lambda here: lambdas do not inherit the function's target attribute.)
  const __m512d r0 = _mm512_loadu_pd(reinterpret_cast<const double*>(source_row(s, 0, rows, ssx)));
  const __m512d r1 = _mm512_loadu_pd(reinterpret_cast<const double*>(source_row(s, 1, rows, ssx)));
  const __m512d r2 = _mm512_loadu_pd(reinterpret_cast<const double*>(source_row(s, 2, rows, ssx)));
  const __m512d r3 = _mm512_loadu_pd(reinterpret_cast<const double*>(source_row(s, 3, rows, ssx)));
  const __m512d r4 = _mm512_loadu_pd(reinterpret_cast<const double*>(source_row(s, 4, rows, ssx)));
  const __m512d r5 = _mm512_loadu_pd(reinterpret_cast<const double*>(source_row(s, 5, rows, ssx)));
  const __m512d r6 = _mm512_loadu_pd(reinterpret_cast<const double*>(source_row(s, 6, rows, ssx)));
  const __m512d r7 = _mm512_loadu_pd(reinterpret_cast<const double*>(source_row(s, 7, rows, ssx)));
  // Pairs of rows interleaved: t0 = (a00 a10)(a02 a12)(a04 a14)(a06 a16) …
  const __m512d t0 = _mm512_unpacklo_pd(r0, r1), t1 = _mm512_unpackhi_pd(r0, r1);
  const __m512d t2 = _mm512_unpacklo_pd(r2, r3), t3 = _mm512_unpackhi_pd(r2, r3);
  const __m512d t4 = _mm512_unpacklo_pd(r4, r5), t5 = _mm512_unpackhi_pd(r4, r5);
  const __m512d t6 = _mm512_unpacklo_pd(r6, r7), t7 = _mm512_unpackhi_pd(r6, r7);
  // 128-bit lanes: even lanes (0x88) and odd lanes (0xDD) of two sources.
  const __m512d u0 = _mm512_shuffle_f64x2(t0, t2, 0x88), u1 = _mm512_shuffle_f64x2(t0, t2, 0xDD);
  const __m512d u2 = _mm512_shuffle_f64x2(t1, t3, 0x88), u3 = _mm512_shuffle_f64x2(t1, t3, 0xDD);
  const __m512d u4 = _mm512_shuffle_f64x2(t4, t6, 0x88), u5 = _mm512_shuffle_f64x2(t4, t6, 0xDD);
  const __m512d u6 = _mm512_shuffle_f64x2(t5, t7, 0x88), u7 = _mm512_shuffle_f64x2(t5, t7, 0xDD);
  __m512d o[8];
  o[0] = _mm512_shuffle_f64x2(u0, u4, 0x88);
  o[4] = _mm512_shuffle_f64x2(u0, u4, 0xDD);
  o[2] = _mm512_shuffle_f64x2(u1, u5, 0x88);
  o[6] = _mm512_shuffle_f64x2(u1, u5, 0xDD);
  o[1] = _mm512_shuffle_f64x2(u2, u6, 0x88);
  o[5] = _mm512_shuffle_f64x2(u2, u6, 0xDD);
  o[3] = _mm512_shuffle_f64x2(u3, u7, 0x88);
  o[7] = _mm512_shuffle_f64x2(u3, u7, 0xDD);
  for (int k = 0; k < 8; ++k) put_line_avx512<NT>(d + k * dsy, _mm512_castpd_si512(o[k]));
}

// 16x16 block of 4-byte elements in zmm registers: 16 whole-line loads, 64 shuffles, 16
// whole-line stores.
template <bool NT>
GTS_TARGET_AVX512 inline void block16_ps_avx512(std::byte* d, int64_t dsy, const std::byte* s,
                                                int64_t ssx, int64_t rows) {
  __m512 r[16], t[16];
  for (int k = 0; k < 16; ++k) {
    r[k] = _mm512_loadu_ps(reinterpret_cast<const float*>(source_row(s, k, rows, ssx)));
  }
  // Per 128-bit lane: t[2i] = (a0 b0 a1 b1), t[2i+1] = (a2 b2 a3 b3) for rows a = 2i, b = 2i+1.
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // Per lane: r[4i+j] = column j of the lane from rows 4i..4i+3.
  for (int i = 0; i < 4; ++i) {
    r[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  // Gather lane L of the four row groups: destination row 4L + j.
  for (int j = 0; j < 4; ++j) {
    const __m512 w0 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x44);
    const __m512 w1 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xEE);
    const __m512 w2 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x44);
    const __m512 w3 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xEE);
    t[0 + j] = _mm512_shuffle_f32x4(w0, w2, 0x88);
    t[4 + j] = _mm512_shuffle_f32x4(w0, w2, 0xDD);
    t[8 + j] = _mm512_shuffle_f32x4(w1, w3, 0x88);
    t[12 + j] = _mm512_shuffle_f32x4(w1, w3, 0xDD);
  }
  for (int k = 0; k < 16; ++k) put_line_avx512<NT>(d + k * dsy, _mm512_castps_si512(t[k]));
}

GTS_TRANSPOSES(avx512, GTS_TARGET_AVX512, block8_pd_avx512, block16_ps_avx512, copy_line_avx512)

}  // namespace

const simd_ops sse2_ops{"sse2",  &stream_copy_generic, &pattern_fill_generic, nullptr,
                        nullptr, transpose2_sse2,      transpose1_sse2,       &fence_generic};
const simd_ops avx2_ops{"avx2",           &stream_copy_avx2, &pattern_fill_avx2, &transpose8_avx2,
                        &transpose4_avx2, transpose2_sse2,   transpose1_sse2,    &fence_x86};
const simd_ops avx512_ops{"avx512",           &stream_copy_avx512, &pattern_fill_avx512,
                          &transpose8_avx512, &transpose4_avx512,  transpose2_sse2,
                          transpose1_sse2,    &fence_x86};

}  // namespace gts::kernels::detail

#endif  // GTS_X86_SIMD
