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

// ---------------------------------- SSE2 (every x86-64) -------------------------------------
// 1- and 2-byte transposes in 8x8 blocks. Eight source rows at a time keeps the lines in use
// within one 8-way cache set even when rows are a power of two apart. Ordinary stores: their
// destination rows are 8 or 16 bytes per block, too short for whole-line streaming stores.

void plane2_sse2(std::byte* d, int64_t dsy, const std::byte* s, int64_t ssx, int64_t nx,
                 int64_t ny) {
  int64_t x = 0;
  for (; x + 8 <= nx; x += 8) {
    const std::byte* sx = s + x * ssx;
    std::byte* dx = d + x * 2;
    int64_t y = 0;
    for (; y + 8 <= ny; y += 8) {
      __m128i r[8];
      for (int k = 0; k < 8; ++k) {
        r[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sx + k * ssx + y * 2));
      }
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
      for (int k = 0; k < 8; ++k) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dx + (y + k) * dsy), c[k]);
      }
    }
    transpose_scalar<2>(d, dsy, s, ssx, x, x + 8, y, ny);
  }
  transpose_scalar<2>(d, dsy, s, ssx, x, nx, 0, ny);
}

void plane1_sse2(std::byte* d, int64_t dsy, const std::byte* s, int64_t ssx, int64_t nx,
                 int64_t ny) {
  int64_t x = 0;
  for (; x + 8 <= nx; x += 8) {
    const std::byte* sx = s + x * ssx;
    std::byte* dx = d + x;
    int64_t y = 0;
    for (; y + 8 <= ny; y += 8) {
      __m128i r[8];
      for (int k = 0; k < 8; ++k) {
        r[k] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(sx + k * ssx + y));
      }
      const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpacklo_epi8(r[2], r[3]);
      const __m128i a2 = _mm_unpacklo_epi8(r[4], r[5]), a3 = _mm_unpacklo_epi8(r[6], r[7]);
      const __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);
      const __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);
      // Each c holds two destination rows of 8 bytes.
      const __m128i c[4] = {_mm_unpacklo_epi32(b0, b2), _mm_unpackhi_epi32(b0, b2),
                            _mm_unpacklo_epi32(b1, b3), _mm_unpackhi_epi32(b1, b3)};
      for (int k = 0; k < 4; ++k) {
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dx + (y + 2 * k) * dsy), c[k]);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dx + (y + 2 * k + 1) * dsy),
                         _mm_unpackhi_epi64(c[k], c[k]));
      }
    }
    transpose_scalar<1>(d, dsy, s, ssx, x, x + 8, y, ny);
  }
  transpose_scalar<1>(d, dsy, s, ssx, x, nx, 0, ny);
}

void transpose2_sse2(std::byte* d, const std::byte* s, const transpose_geom& g, bool /*nt*/) {
  for (int64_t z = 0; z < g.nz; ++z)
    plane2_sse2(d + z * g.dsz, g.dsy, s + z * g.ssz, g.ssx, g.nx, g.ny);
}

void transpose1_sse2(std::byte* d, const std::byte* s, const transpose_geom& g, bool /*nt*/) {
  for (int64_t z = 0; z < g.nz; ++z)
    plane1_sse2(d + z * g.dsz, g.dsy, s + z * g.ssz, g.ssx, g.nx, g.ny);
}

// ---------------------------------- AVX2 ---------------------------------------------------

GTS_TARGET_AVX2 void stream_copy_avx2(void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const std::size_t head = head_bytes(d, bytes);
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  for (; bytes >= 128; bytes -= 128, d += 128, s += 128) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 64));
    const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 96), e);
  }
  std::memcpy(d, s, bytes);
}

GTS_TARGET_AVX2 void pattern_fill_avx2(void* dst, std::size_t bytes, const unsigned char* pat,
                                       bool nt) {
  auto* p = static_cast<unsigned char*>(dst);
  pattern_head(p, bytes, pat);
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pat));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pat + 32));
  if (nt) {
    for (; bytes >= 64; bytes -= 64, p += 64) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p), lo);
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p + 32), hi);
    }
  } else {
    for (; bytes >= 64; bytes -= 64, p += 64) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(p), lo);
      _mm256_store_si256(reinterpret_cast<__m256i*>(p + 32), hi);
    }
  }
  std::memcpy(p, pat, bytes);
}

// One 64-byte line from s (any alignment) to the line at d with non-temporal stores.
GTS_TARGET_AVX2 inline void stream_line_avx2(std::byte* d, const std::byte* s) {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32));
  _mm256_stream_si256(reinterpret_cast<__m256i*>(d), lo);
  _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 32), hi);
}

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
  auto* q = reinterpret_cast<double*>(p);
  if (NT) {
    _mm256_stream_pd(q, lo);
    _mm256_stream_pd(q + 4, hi);
  } else {
    _mm256_storeu_pd(q, lo);
    _mm256_storeu_pd(q + 4, hi);
  }
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
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
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
  for (int y = 0; y < 16; ++y) {
    auto* q = reinterpret_cast<float*>(d + y * dsy);
    const __m256 lo = _mm256_load_ps(&tile[y][0]);
    const __m256 hi = _mm256_load_ps(&tile[y][8]);
    if (NT) {
      _mm256_stream_ps(q, lo);
      _mm256_stream_ps(q + 8, hi);
    } else {
      _mm256_storeu_ps(q, lo);
      _mm256_storeu_ps(q + 8, hi);
    }
  }
}

GTS_TRANSPOSES(avx2, GTS_TARGET_AVX2, block8_pd_avx2, block16_ps_avx2, stream_line_avx2)

void fence_x86() {
  _mm_sfence();
}

// --------------------------------- AVX-512 -------------------------------------------------

GTS_TARGET_AVX512 void stream_copy_avx512(void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const std::size_t head = head_bytes(d, bytes);
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  for (; bytes >= 256; bytes -= 256, d += 256, s += 256) {
    const __m512i a = _mm512_loadu_si512(s);
    const __m512i b = _mm512_loadu_si512(s + 64);
    const __m512i c = _mm512_loadu_si512(s + 128);
    const __m512i e = _mm512_loadu_si512(s + 192);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d), a);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + 64), b);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + 128), c);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + 192), e);
  }
  for (; bytes >= 64; bytes -= 64, d += 64, s += 64) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d), _mm512_loadu_si512(s));
  }
  std::memcpy(d, s, bytes);
}

GTS_TARGET_AVX512 void pattern_fill_avx512(void* dst, std::size_t bytes, const unsigned char* pat,
                                           bool nt) {
  auto* p = static_cast<unsigned char*>(dst);
  pattern_head(p, bytes, pat);
  const __m512i v = _mm512_loadu_si512(pat);
  if (nt) {
    for (; bytes >= 64; bytes -= 64, p += 64) _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v);
  } else {
    for (; bytes >= 64; bytes -= 64, p += 64) _mm512_store_si512(p, v);
  }
  std::memcpy(p, pat, bytes);
}

GTS_TARGET_AVX512 inline void stream_line_avx512(std::byte* d, const std::byte* s) {
  _mm512_stream_si512(reinterpret_cast<__m512i*>(d), _mm512_loadu_si512(s));
}

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
  for (int k = 0; k < 8; ++k) {
    auto* q = reinterpret_cast<double*>(d + k * dsy);
    if (NT) {
      _mm512_stream_pd(q, o[k]);
    } else {
      _mm512_storeu_pd(q, o[k]);
    }
  }
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
  for (int k = 0; k < 16; ++k) {
    auto* q = reinterpret_cast<float*>(d + k * dsy);
    if (NT) {
      _mm512_stream_ps(q, t[k]);
    } else {
      _mm512_storeu_ps(q, t[k]);
    }
  }
}

GTS_TRANSPOSES(avx512, GTS_TARGET_AVX512, block8_pd_avx512, block16_ps_avx512, stream_line_avx512)

}  // namespace

const simd_ops sse2_ops{"sse2",  &stream_copy_generic, &pattern_fill_generic, nullptr,
                        nullptr, &transpose2_sse2,     &transpose1_sse2,      &fence_generic};
const simd_ops avx2_ops{"avx2",           &stream_copy_avx2, &pattern_fill_avx2, &transpose8_avx2,
                        &transpose4_avx2, &transpose2_sse2,  &transpose1_sse2,   &fence_x86};
const simd_ops avx512_ops{"avx512",           &stream_copy_avx512, &pattern_fill_avx512,
                          &transpose8_avx512, &transpose4_avx512,  &transpose2_sse2,
                          &transpose1_sse2,   &fence_x86};

}  // namespace gts::kernels::detail

#endif  // GTS_X86_SIMD
