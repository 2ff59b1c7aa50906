// The strip drivers of the vector transposes (simd_x86.cpp), shared by the AVX2 and AVX-512
// kernels: each instruction set brings its 8x8 (8-byte) and 16x16 (4-byte) block kernels and its
// streaming line store, and GTS_TRANSPOSES instantiates the same drivers around them. Why they
// walk memory as they do: docs/copy-kernels.md. Included by simd_x86.cpp only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>

#include "kernels/simd_x86.hpp"

namespace gts::kernels::detail {

// Element-wise transposing copy of columns [x0, x1) and rows [y0, y1) of one plane (the edges
// of the vector versions).
template <int Size>
inline void transpose_scalar(std::byte* d, int64_t dsy, const std::byte* s, int64_t ssx, int64_t x0,
                             int64_t x1, int64_t y0, int64_t y1) {
  for (int64_t y = y0; y < y1; ++y) {
    std::byte* dr = d + y * dsy;
    const std::byte* sc = s + y * Size;
    for (int64_t x = x0; x < x1; ++x) std::memcpy(dr + x * Size, sc + x * ssx, Size);
  }
}

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
// 8-byte items: two (128-byte runs, 16 source streams). 4-byte items: one (64-byte runs, 16
// streams), unless the destination rows start at few distinct offsets in their 4 KiB pages (pitch
// modulo 4 KiB a multiple of 512 bytes, as GT4Py's K-fastest rows of 128 or 256 floats are),
// where 64-byte runs cost as much as 128-byte ones and two lines per step pay for reading 32
// source streams (figures: docs/copy-kernels.md).
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
// a whole I-J plane instead of runs of one I row. The hardware prefetchers follow 16 such streams,
// so the strips issue no software prefetches (they were slower: docs/copy-kernels.md).
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

// The six functions of one instruction set: strips, windowed strips and entry point for 8-byte
// items (BLOCK8, 8x8 blocks) and 4-byte items (BLOCK4, 16x16 blocks), named transpose8_ISA and
// transpose4_ISA.
#define GTS_TRANSPOSES(ISA, TARGET, BLOCK8, BLOCK4, STREAM_LINE)             \
  GTS_STRIPS(strips8_##ISA, TARGET, BLOCK8, 8, 8, 8)                         \
  GTS_WINDOWED(windowed8_##ISA, TARGET, BLOCK8, 8, STREAM_LINE)              \
  GTS_TRANSPOSE(transpose8_##ISA, TARGET, strips8_##ISA, windowed8_##ISA, 8) \
  GTS_STRIPS(strips4_##ISA, TARGET, BLOCK4, 4, 16, 16)                       \
  GTS_WINDOWED(windowed4_##ISA, TARGET, BLOCK4, 4, STREAM_LINE)              \
  GTS_TRANSPOSE(transpose4_##ISA, TARGET, strips4_##ISA, windowed4_##ISA, 4)
// NOLINTEND(bugprone-macro-parentheses)

}  // namespace gts::kernels::detail
