// Vector routines behind the host kernels, compiled for several instruction-set levels in one
// binary (function target attributes) and chosen once at run time from cpuid, so the shipped
// library runs on any x86-64 yet uses AVX2/AVX-512 and non-temporal stores where present.
//
// Why these routines: a layout-changing copy of a large array is bound by memory traffic, not
// arithmetic. It comes near memcpy speed only if (1) the source is read as a few sequential
// streams (16 rows at a time: 8 or 16 streams read as fast as one sequential stream on the
// 2-core EPYC VM, 32 at 0.6x and 64 at 0.35x of that), (2) every destination cache line is
// written whole by a non-temporal store (no read-for-ownership of the destination), and (3) the
// transposition happens in registers (8x8 blocks of 8-byte items, 16x16 of 4-byte items).
// What remains is the destination's scatter: each step writes one short run (128 bytes for
// float64; 64 for float32, or 128 where its rows alias, see strip_group) per destination row, and
// the memory system takes about 10 ns per run that is not next to the previous one, whatever its
// length up to 128 bytes (write-only test on the VM: 128-byte runs 512 KiB apart reach 0.55x
// sequential non-temporal stores, 64-byte runs 0.3x, 256-byte runs 0.95x). Longer runs need more
// source streams, which cost more than they save. Measured there for 512x512x128, Fortran order ->
// K fastest, one thread, against the same-layout copy: float64 0.6-0.66x, float32 0.35-0.4x
// (0.58-0.65x with 128-byte runs), against 0.05x for an element loop. Those pitches (2 MiB planes,
// 512 KiB destination rows) are multiples of 4 KiB, so all lines of a step share their L1 set: with
// both pitches 192 bytes longer the same float64 kernel runs at 0.99-1.04x of the same-layout copy,
// and between fields created with GTSTORAGE_PITCH_PADDING_AVOID_ALIASING (pitches 64 bytes off 4
// KiB multiples) at 0.95-1.08x, float32 0.87-0.96x (gtstorage-bench copy_f_to_kfirst_*padded_*), so
// at such pitches the scatter costs little and the aliasing is the gap. At GT4Py's pitches the
// stores alone come close to the bound (2-core Zen 5 VM, family 26: 48 KiB 12-way L1, 1 MiB 16-way
// L2): writing just this kernel's 128-byte destination runs, reading nothing, takes as long as the
// whole same-layout copy (0.94-1.01x of its speed, against 1.48-1.60x at padded pitches:
// gtstorage-bench copy_f_to_kfirst_stores_alone_*), so a 0.9x copy would have to hide all its
// reads in 5-10% more time. Write-only probes there, against sequential non-temporal stores:
// runs that all start at the same offset in their 4 KiB page cost about the same per run
// whatever their length (64 bytes 0.27x, 128 bytes 0.50-0.58x, 256 bytes 0.83-0.86x, whole
// 1 KiB K rows 1.0-1.1x) or their spacing (J planes far apart do not help), against 0.6-0.9x
// at pitches 192 bytes longer. Longer runs need more K planes in flight, which the read side
// pays for: two, four or eight strips interleaved in chunks of 4-64 blocks, with or without
// prefetches of the next chunk, 0.44-0.70x of the same-layout copy (this kernel 0.62-0.68x in
// the same runs); source rows skewed by 1-4 lines through an L1 ring, 0.24-0.34x; staging
// tiles of 64x32 to 128x16 items, 0.37-0.56x; 32 source rows per strip, 0.51x; a prefetch on
// every source row, 0.39-0.49x.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "kernels/kernels_internal.hpp"

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's avx512fintrin.h initializes _mm512_undefined_* from themselves, which -Wuninitialized
// reports at every inlined intrinsic (-Wmaybe-uninitialized at -O1, as in the TSan build); the
// values are deliberately undefined there.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GTS_X86_SIMD 1
#include <immintrin.h>
#define GTS_TARGET_AVX2 __attribute__((target("avx2")))
#define GTS_TARGET_AVX512 __attribute__((target("avx512f,avx2")))
#else
#define GTS_X86_SIMD 0
#endif

namespace gts::kernels::detail {
namespace {

// ------------------------------------------------------------------------------------------
// Portable versions (also the edges of the vector versions).

template <int Size>
inline void transpose_scalar(std::byte* d, int64_t dsy, const std::byte* s, int64_t ssx, int64_t x0,
                             int64_t x1, int64_t y0, int64_t y1) {
  for (int64_t y = y0; y < y1; ++y) {
    std::byte* dr = d + y * dsy;
    const std::byte* sc = s + y * Size;
    for (int64_t x = x0; x < x1; ++x) std::memcpy(dr + x * Size, sc + x * ssx, Size);
  }
}

void stream_copy_generic(void* dst, const void* src, std::size_t bytes) {
  std::memcpy(dst, src, bytes);
}

void pattern_fill_generic(void* dst, std::size_t bytes, const unsigned char* pat, bool /*nt*/) {
  auto* p = static_cast<unsigned char*>(dst);
  const std::size_t mis = reinterpret_cast<uintptr_t>(p) % 64;
  std::size_t head = std::min(bytes, (64 - mis) % 64);
  for (std::size_t i = 0; i < head; ++i) p[i] = pat[(mis + i) % 64];
  p += head;
  bytes -= head;
  for (; bytes >= 64; bytes -= 64, p += 64) std::memcpy(p, pat, 64);
  std::memcpy(p, pat, bytes);
}

void fence_generic() {}

// No portable transposes: the kernels' generic tile path (host_kernels.cpp) covers them.
const simd_ops generic_ops{
    "generic", &stream_copy_generic, &pattern_fill_generic, nullptr, nullptr, nullptr,
    nullptr,   &fence_generic};

#if GTS_X86_SIMD

// Bytes before the first 64-byte boundary at or after p (capped by n).
inline std::size_t head_bytes(const void* p, std::size_t n) {
  return std::min(n, (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64);
}

// Elements to peel off the start of x so that destination rows start on a cache line, or -1 if
// no peel makes every row aligned (rows not a multiple of 64 bytes apart, element misaligned).
inline int64_t nt_peel(const std::byte* d, const transpose_geom& g, int64_t size) {
  const auto a = static_cast<int64_t>(reinterpret_cast<uintptr_t>(d) % 64);
  if (g.dsy % 64 != 0 || (g.nz > 1 && g.dsz % 64 != 0) || a % size != 0) return -1;
  return std::min(g.nx, ((64 - a) % 64) / size);
}

// Source row k of a block whose rows are ssx bytes apart, where only @p rows rows exist: rows
// past the last repeat it, so that a block at the end of x reads nothing outside the array.
inline const std::byte* source_row(const std::byte* s, int64_t k, int64_t rows, int64_t ssx) {
  return s + std::min(k, rows - 1) * ssx;
}

// For destination rows that do not all start at the same offset in a cache line (nt_peel gives
// -1): the largest number of leading elements any row has before its first line boundary, or -1
// if the windowed transpose cannot run (elements not aligned to their size, or fewer than two
// blocks of columns or one block of rows). Row starts are d + z*dsz + y*dsy, so modulo 64 they
// lie in d + multiples of q = gcd(dsy, dsz, 64); the bound covers every such phase.
inline int64_t window_need(const std::byte* d, const transpose_geom& g, int64_t size) {
  const int64_t cols = 64 / size;
  const auto a = static_cast<int64_t>(reinterpret_cast<uintptr_t>(d) % 64);
  if (a % size != 0 || g.dsy % size != 0 || (g.nz > 1 && g.dsz % size != 0) || g.nx < 2 * cols ||
      g.ny < cols) {
    return -1;
  }
  int64_t q = std::gcd(g.dsy % 64, int64_t(64));
  if (g.nz > 1) q = std::gcd(q, g.dsz % 64);
  int64_t need = 0;
  for (int64_t p = a % q; p < 64; p += q) need = std::max(need, ((64 - p) % 64) / size);
  return need;
}

// Blocks of BX columns side by side per strip step (strip_group): every destination row gets
// that many adjacent lines per step, and the strip reads that many times BX source rows.
// 8-byte items: two (128-byte runs, 16 source streams), which measured 1.5x one line (8
// streams) and 1.8x four lines (32 streams). 4-byte items: one (64-byte runs, 16 streams),
// unless the destination rows start at few distinct offsets in their 4 KiB pages (pitch modulo
// 4 KiB a multiple of 512 bytes, as GT4Py's K-fastest rows of 128 or 256 floats are): such runs
// cost as much as 128-byte ones (see the header), so two lines per step then pay for reading 32
// source streams. float32 F -> K at 512x512x128, one thread, against the same-layout copy on
// the 2-core Zen 5 VM (source pitch 1 MiB or 1 MiB + 64): destination pitch 256 KiB + 0, 512,
// 1 KiB, 2 KiB or 4 KiB: one line 0.35-0.45x, two 0.58-0.65x; + 64, 128, 192, 256, 320 or 448
// bytes: one line 0.72-0.95x, two 0.57-0.66x.
inline int64_t strip_group(const transpose_geom& g, int64_t size) {
  if (size != 4) return 2;
  const int64_t page_offsets = 4096 / std::gcd(g.dsy % 4096, int64_t(4096));
  return page_offsets < 16 ? 2 : 1;
}

// Strip driver shared by the vector transposes (a macro because each copy needs its function's
// target attribute to inline the block kernel). x advances in strips of `group` blocks of BX
// columns (strip_group; the last columns in strips of one block); for each strip, z and then y
// advance in blocks of BY.
// z is inside the strip so that the source rows are read as long streams: when a row continues
// in memory with the next z (F order -> K fastest: I then J), the strip reads 16 (or 32) runs of
// a whole I-J plane instead of runs of one I row. The hardware prefetchers follow 16 such streams:
// software prefetches into L2 (or L1) ahead of them measured 4-8% slower for 8-byte items and
// no faster for 4-byte ones.
// NOLINTBEGIN(bugprone-macro-parentheses): BLOCK and STRIPS are template names (BLOCK<NT>).
#define GTS_STRIPS(NAME, TARGET, BLOCK, SIZE, BX, BY)                                       \
  template <bool NT>                                                                        \
  TARGET void NAME(std::byte* d, const std::byte* s, const transpose_geom& g, int64_t x) {  \
    const int64_t ye = g.ny / (BY) * (BY);                                                  \
    for (int64_t group = strip_group(g, SIZE); group >= 1; group = group > 1 ? 1 : 0) {     \
      const int64_t wide = int64_t(BX) * group;                                             \
      for (; x + wide <= g.nx; x += wide) {                                                 \
        for (int64_t z = 0; z < g.nz; ++z) {                                                \
          const std::byte* sz = s + z * g.ssz;                                              \
          std::byte* dz = d + z * g.dsz;                                                    \
          const std::byte* sx = sz + x * g.ssx;                                             \
          std::byte* dx = dz + x * (SIZE);                                                  \
          for (int64_t y = 0; y < ye; y += (BY)) {                                          \
            for (int64_t b = 0; b < group; ++b) {                                           \
              BLOCK<NT>(dx + b * (BX) * (SIZE) + y * g.dsy, g.dsy,                          \
                        sx + b * (BX)*g.ssx + y * (SIZE), g.ssx, BX);                       \
            }                                                                               \
          }                                                                                 \
          transpose_scalar<SIZE>(dz, g.dsy, sz, g.ssx, x, x + wide, ye, g.ny);              \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
    for (int64_t z = 0; z < g.nz; ++z) {                                                    \
      transpose_scalar<SIZE>(d + z * g.dsz, g.dsy, s + z * g.ssz, g.ssx, x, g.nx, 0, g.ny); \
    }                                                                                       \
  }

// Windowed strip driver, for streaming stores into destination rows that start at different
// offsets in a cache line (rows of 136 float32: 544 bytes apart, every other row starts
// mid-line). A strip of BX = 64/SIZE columns no longer covers whole lines of every row, and
// ordinary stores cost 3-4x (each line read for ownership, half-written, evicted, and read again
// by the next strip: float32 F -> K at 512x512x136 ran at 0.18x of the same-layout copy). So each
// strip transposes its own BX source rows and the next `need` ones (the largest head of any row,
// see window_need) into a tile of two lines per destination row, and every row takes from it the
// one whole line that starts at its own line boundary: x + h .. x + h + BX - 1 for a row with h
// leading elements. The first strip also writes each row's head and the last its tail with
// ordinary stores. The extra source rows are read again by the next strip (up to 2x the source
// reads at worst, 1.5x for the 544-byte rows), which costs far less than the ordinary stores.
#define GTS_WINDOWED(NAME, TARGET, BLOCK, SIZE, STREAM_LINE)                                      \
  TARGET void NAME(std::byte* d, const std::byte* s, const transpose_geom& g, int64_t need) {     \
    constexpr int64_t cols = 64 / (SIZE);                                                         \
    constexpr int64_t ld = 128; /* tile row: two lines */                                         \
    alignas(64) std::byte tile[cols * ld];                                                        \
    const int64_t ye = g.ny / cols * cols;                                                        \
    for (int64_t x = 0; x + cols <= g.nx; x += cols) {                                            \
      const bool last = x + 2 * cols > g.nx;                                                      \
      const int64_t more = last ? g.nx - x - cols : need;                                         \
      const int64_t xe = last ? g.nx : x + cols;                                                  \
      for (int64_t z = 0; z < g.nz; ++z) {                                                        \
        const std::byte* sx = s + z * g.ssz + x * g.ssx;                                          \
        std::byte* dz = d + z * g.dsz;                                                            \
        for (int64_t y = 0; y < ye; y += cols) {                                                  \
          BLOCK<false>(tile, ld, sx + y * (SIZE), g.ssx, cols);                                   \
          if (more > 0) BLOCK<false>(tile + 64, ld, sx + cols * g.ssx + y * (SIZE), g.ssx, more); \
          for (int64_t k = 0; k < cols; ++k) {                                                    \
            std::byte* row = dz + (y + k) * g.dsy;                                                \
            const std::byte* t = tile + k * ld;                                                   \
            const auto h = static_cast<int64_t>(head_bytes(row, 64)) / (SIZE);                    \
            if (x == 0) std::memcpy(row, t, static_cast<std::size_t>(h * (SIZE)));                \
            int64_t done = x + h; /* elements of this row written so far */                       \
            if (done + cols <= g.nx) {                                                            \
              STREAM_LINE(row + done * (SIZE), t + h * (SIZE));                                   \
              done += cols;                                                                       \
            }                                                                                     \
            if (last) {                                                                           \
              std::memcpy(row + done * (SIZE), t + (done - x) * (SIZE),                           \
                          static_cast<std::size_t>((g.nx - done) * (SIZE)));                      \
            }                                                                                     \
          }                                                                                       \
        }                                                                                         \
        transpose_scalar<SIZE>(dz, g.dsy, s + z * g.ssz, g.ssx, x, xe, ye, g.ny);                 \
      }                                                                                           \
    }                                                                                             \
  }

// Entry point of a vector transpose: streaming stores need destination rows on line
// boundaries, so a few leading columns are peeled off when that aligns every row; rows at
// different offsets in their lines take the windowed driver.
#define GTS_TRANSPOSE(NAME, TARGET, STRIPS, WINDOWED, SIZE)                                 \
  TARGET void NAME(std::byte* d, const std::byte* s, const transpose_geom& g, bool nt) {    \
    const int64_t peel = nt ? nt_peel(d, g, SIZE) : -1;                                     \
    if (peel < 0) {                                                                         \
      const int64_t need = nt ? window_need(d, g, SIZE) : -1;                               \
      if (need >= 0) {                                                                      \
        WINDOWED(d, s, g, need);                                                            \
        return;                                                                             \
      }                                                                                     \
      STRIPS<false>(d, s, g, 0);                                                            \
      return;                                                                               \
    }                                                                                       \
    for (int64_t z = 0; z < g.nz; ++z) {                                                    \
      transpose_scalar<SIZE>(d + z * g.dsz, g.dsy, s + z * g.ssz, g.ssx, 0, peel, 0, g.ny); \
    }                                                                                       \
    STRIPS<true>(d, s, g, peel);                                                            \
  }
// NOLINTEND(bugprone-macro-parentheses)

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

const simd_ops sse2_ops{"sse2",  &stream_copy_generic, &pattern_fill_generic, nullptr,
                        nullptr, &transpose2_sse2,     &transpose1_sse2,      &fence_generic};

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
  const std::size_t head = head_bytes(p, bytes);
  const std::size_t mis = reinterpret_cast<uintptr_t>(p) % 64;
  for (std::size_t i = 0; i < head; ++i) p[i] = pat[(mis + i) % 64];
  p += head;
  bytes -= head;
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

GTS_STRIPS(strips8_avx2, GTS_TARGET_AVX2, block8_pd_avx2, 8, 8, 8)
GTS_WINDOWED(windowed8_avx2, GTS_TARGET_AVX2, block8_pd_avx2, 8, stream_line_avx2)
GTS_TRANSPOSE(transpose8_avx2, GTS_TARGET_AVX2, strips8_avx2, windowed8_avx2, 8)

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

GTS_STRIPS(strips4_avx2, GTS_TARGET_AVX2, block16_ps_avx2, 4, 16, 16)
GTS_WINDOWED(windowed4_avx2, GTS_TARGET_AVX2, block16_ps_avx2, 4, stream_line_avx2)
GTS_TRANSPOSE(transpose4_avx2, GTS_TARGET_AVX2, strips4_avx2, windowed4_avx2, 4)

void fence_x86() {
  _mm_sfence();
}

const simd_ops avx2_ops{"avx2",           &stream_copy_avx2, &pattern_fill_avx2, &transpose8_avx2,
                        &transpose4_avx2, &transpose2_sse2,  &transpose1_sse2,   &fence_x86};

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
  const std::size_t head = head_bytes(p, bytes);
  const std::size_t mis = reinterpret_cast<uintptr_t>(p) % 64;
  for (std::size_t i = 0; i < head; ++i) p[i] = pat[(mis + i) % 64];
  p += head;
  bytes -= head;
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

GTS_STRIPS(strips8_avx512, GTS_TARGET_AVX512, block8_pd_avx512, 8, 8, 8)
GTS_WINDOWED(windowed8_avx512, GTS_TARGET_AVX512, block8_pd_avx512, 8, stream_line_avx512)
GTS_TRANSPOSE(transpose8_avx512, GTS_TARGET_AVX512, strips8_avx512, windowed8_avx512, 8)

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

GTS_STRIPS(strips4_avx512, GTS_TARGET_AVX512, block16_ps_avx512, 4, 16, 16)
GTS_WINDOWED(windowed4_avx512, GTS_TARGET_AVX512, block16_ps_avx512, 4, stream_line_avx512)
GTS_TRANSPOSE(transpose4_avx512, GTS_TARGET_AVX512, strips4_avx512, windowed4_avx512, 4)

const simd_ops avx512_ops{"avx512",           &stream_copy_avx512, &pattern_fill_avx512,
                          &transpose8_avx512, &transpose4_avx512,  &transpose2_sse2,
                          &transpose1_sse2,   &fence_x86};

#endif  // GTS_X86_SIMD

simd_level best_level() {
#if GTS_X86_SIMD
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2")) {
    return simd_level::avx512;
  }
  if (__builtin_cpu_supports("avx2")) return simd_level::avx2;
  return simd_level::sse2;  // part of x86-64
#endif
  return simd_level::generic;
}

const simd_ops* table_of(simd_level level) {
  switch (level) {
#if GTS_X86_SIMD
    case simd_level::avx512:
      return &avx512_ops;
    case simd_level::avx2:
      return &avx2_ops;
#endif
#if GTS_X86_SIMD
    case simd_level::sse2:
      return &sse2_ops;
#endif
    case simd_level::generic:
      return &generic_ops;
    default:
      return nullptr;
  }
}

const simd_ops* detect() {
  simd_level level = best_level();
  // GTSTORAGE_SIMD caps the level (for testing the fallbacks, or to avoid AVX-512 clocks).
  if (const char* env = std::getenv("GTSTORAGE_SIMD")) {
    const std::string v(env);
    simd_level cap = level;
    if (v == "generic" || v == "none") cap = simd_level::generic;
    if (v == "sse2") cap = simd_level::sse2;
    if (v == "avx2") cap = simd_level::avx2;
    if (static_cast<int>(cap) < static_cast<int>(level)) level = cap;
  }
  return table_of(level);
}

std::atomic<const simd_ops*> current_ops{nullptr};

// Size in bytes of the last-level cache that cpu0 uses, from sysfs ("32768K"); 0 if unknown.
int64_t sysfs_llc_bytes() {
  int64_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    int level = 0;
    char size_text[32] = {0};
    if (FILE* f = std::fopen((dir + "level").c_str(), "r")) {
      if (std::fscanf(f, "%d", &level) != 1) level = 0;
      std::fclose(f);
    }
    if (FILE* f = std::fopen((dir + "size").c_str(), "r")) {
      if (std::fscanf(f, "%31s", size_text) != 1) size_text[0] = '\0';
      std::fclose(f);
    }
    char* end = nullptr;
    const long long v = std::strtoll(size_text, &end, 10);
    if (level <= 0 || v <= 0 || end == size_text) continue;
    int64_t bytes = v;
    if (*end == 'K') bytes = v << 10;
    if (*end == 'M') bytes = v << 20;
    if (level > best_level) {
      best_level = level;
      best = bytes;
    }
  }
  return best;
}

int64_t default_streaming_threshold() {
  // Half the last-level cache: below it a copy's result is likely still cached when it is used,
  // above it ordinary stores only add read-for-ownership traffic. sysfs describes the cache this
  // core shares; sysconf may report the whole package (320 MiB on the 2-core EPYC VM, where the
  // core's L3 is 32 MiB), so its value is capped.
  int64_t llc = sysfs_llc_bytes();
  if (llc <= 0) {
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    llc = l3 > 0 ? l3 : l2;
    if (llc <= 0) llc = int64_t(32) << 20;
    llc = std::min<int64_t>(llc, int64_t(64) << 20);
  }
  return std::max<int64_t>(int64_t(1) << 20, llc / 2);
}

std::atomic<int64_t> streaming_override{-1};

}  // namespace

const simd_ops& simd() {
  const simd_ops* ops = current_ops.load(std::memory_order_acquire);
  if (ops == nullptr) {
    ops = detect();
    current_ops.store(ops, std::memory_order_release);
  }
  return *ops;
}

const simd_ops* simd_for(simd_level level) {
  if (static_cast<int>(level) > static_cast<int>(best_level())) return nullptr;
  return table_of(level);
}

bool set_simd_level(simd_level level) {
  const simd_ops* ops = simd_for(level);
  if (ops == nullptr) return false;
  current_ops.store(ops, std::memory_order_release);
  return true;
}

int64_t streaming_threshold() {
  const int64_t o = streaming_override.load(std::memory_order_relaxed);
  if (o >= 0) return o;
  static const int64_t value = default_streaming_threshold();
  return value;
}

void set_streaming_threshold(int64_t bytes) {
  streaming_override.store(bytes < 0 ? -1 : bytes, std::memory_order_relaxed);
}

}  // namespace gts::kernels::detail
