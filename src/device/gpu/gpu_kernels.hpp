// Device kernels of the CUDA/HIP backends, written as per-thread "step" functions that the
// __global__ wrappers in gpu_backend.inl loop over. Kept free of runtime types and callable
// from host code (GTS_HD is empty for a host compiler), so the internal test runs every index
// computation on the host by simulating blocks and threads: the kernels are checked on
// machines without a GPU, which is where CI runs.
//
// GTS_GPU_NS names the namespace (cuda_impl, hip_impl or emulated_impl from the runtime's names
// header, or the test's own namespace, defined before including this), so the CUDA, HIP and host
// builds of these inline functions never meet as one ODR entity.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "device/strided_plan.hpp"

#ifndef GTS_GPU_NS
#error "define GTS_GPU_NS (a runtime's names header does) before including gpu_kernels.hpp"
#endif

#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#define GTS_HD __host__ __device__
#else
#define GTS_HD
#endif
// Only the device passes know the pragma (host compilers warn about it).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define GTS_UNROLL _Pragma("unroll")
#else
#define GTS_UNROLL
#endif

namespace gts::device::GTS_GPU_NS {

using detail::copy_plan;
using detail::fill_plan;
using detail::plan_max_dims;

struct alignas(16) u128 {
  unsigned long long lo, hi;
};
template <int N>
struct word;
template <>
struct word<1> {
  using type = unsigned char;
};
template <>
struct word<2> {
  using type = unsigned short;
};
template <>
struct word<4> {
  using type = unsigned int;
};
template <>
struct word<8> {
  using type = unsigned long long;
};
template <>
struct word<16> {
  using type = u128;
};

/// Kernel argument: a normalized plan (dims in destination order, ndim-1 innermost).
struct kdims {
  int ndim;
  int64_t shape[plan_max_dims];
  int64_t dst[plan_max_dims];
  int64_t src[plan_max_dims];
};

struct kbytes {
  unsigned char b[16];
};

inline constexpr int row_threads = 256;
inline constexpr int row_ilp = 4;
inline constexpr int tile_dim = 32;
inline constexpr int tile_rows = 8;
inline constexpr int element_threads = 256;
// Below these extents the row and tile kernels would leave most threads idle; the element
// kernel's per-element index arithmetic is then the cheaper choice.
inline constexpr int64_t min_row_extent = 16;
inline constexpr int64_t min_tile_extent = 16;

/// Byte offsets of linear index @p row over dims [0, last) of @p d (last dim fastest).
GTS_HD inline void row_offsets(const kdims& d, int last, int64_t row, int64_t& doff,
                               int64_t& soff) {
  doff = 0;
  soff = 0;
  for (int k = last - 1; k >= 0; --k) {
    const int64_t q = row / d.shape[k];
    const int64_t c = row - q * d.shape[k];
    row = q;
    doff += c * d.dst[k];
    soff += c * d.src[k];
  }
}

/// Row kernel. A block of row_threads threads is split into groups of 2^lanes_log2 lanes
/// (32..256, chosen from the row length); each group copies one chunk of lanes * row_ilp
/// elements of one row, with row_ilp independent loads in flight per thread before the stores.
/// Work item @p b = (block of rows, chunk of the row); rows of a block are consecutive.
struct rows_shape {
  int lanes_log2;          ///< Threads per row group: 1 << lanes_log2.
  int64_t rows;            ///< Rows in the whole array (product of the outer extents).
  int64_t chunks_per_row;  ///< ceil(n / (lanes * row_ilp)).
};

/// The chunk work item @p b gives thread @p tid: where its row starts and which of the row's
/// elements are its own (c0 + lane, c0 + lane + lanes, ...).
struct row_chunk {
  int64_t c0;     ///< First element of the chunk.
  int64_t lane;   ///< This thread's lane in its row group.
  int64_t lanes;  ///< Threads per row group.
  int64_t n;      ///< Elements in the row.
  int64_t doff;   ///< Byte offset of the row in the destination.
  int64_t soff;   ///< Byte offset of the row in the source.
  /// Whether the chunk is whole: row_ilp elements for every lane.
  [[nodiscard]] GTS_HD bool whole() const { return c0 + lanes * row_ilp <= n; }
};

/// False when work item @p b has no row for thread @p tid (past the last row).
GTS_HD inline bool rows_item(const kdims& d, const rows_shape& r, int64_t b, unsigned tid,
                             row_chunk& c) {
  c.lanes = int64_t(1) << r.lanes_log2;
  const int64_t per_block = row_threads >> r.lanes_log2;
  const int64_t rb = b / r.chunks_per_row;
  c.c0 = (b - rb * r.chunks_per_row) * c.lanes * row_ilp;
  const int64_t row = rb * per_block + (tid >> r.lanes_log2);
  c.lane = tid & (c.lanes - 1);
  if (row >= r.rows) return false;
  c.n = d.shape[d.ndim - 1];
  row_offsets(d, d.ndim - 1, row, c.doff, c.soff);
  return true;
}

template <class T>
GTS_HD inline void copy_rows_step(const kdims& d, std::byte* dst, const std::byte* src,
                                  const rows_shape& r, int64_t b, unsigned tid) {
  row_chunk c;
  if (!rows_item(d, r, b, tid, c)) return;
  const int64_t di = d.dst[d.ndim - 1];
  const int64_t si = d.src[d.ndim - 1];
  std::byte* dr = dst + c.doff;
  const std::byte* sr = src + c.soff;
  if (c.whole()) {
    T v[row_ilp];
    GTS_UNROLL
    for (int u = 0; u < row_ilp; ++u) {
      v[u] = *reinterpret_cast<const T*>(sr + (c.c0 + c.lane + u * c.lanes) * si);
    }
    GTS_UNROLL
    for (int u = 0; u < row_ilp; ++u) {
      *reinterpret_cast<T*>(dr + (c.c0 + c.lane + u * c.lanes) * di) = v[u];
    }
  } else {
    for (int64_t i = c.c0 + c.lane; i < c.n; i += c.lanes) {
      *reinterpret_cast<T*>(dr + i * di) = *reinterpret_cast<const T*>(sr + i * si);
    }
  }
}

template <class T>
GTS_HD inline void fill_rows_step(const kdims& d, std::byte* dst, const T& value,
                                  const rows_shape& r, int64_t b, unsigned tid) {
  row_chunk c;
  if (!rows_item(d, r, b, tid, c)) return;
  const int64_t di = d.dst[d.ndim - 1];
  std::byte* dr = dst + c.doff;
  if (c.whole()) {
    GTS_UNROLL
    for (int u = 0; u < row_ilp; ++u) {
      *reinterpret_cast<T*>(dr + (c.c0 + c.lane + u * c.lanes) * di) = value;
    }
  } else {
    for (int64_t i = c.c0 + c.lane; i < c.n; i += c.lanes)
      *reinterpret_cast<T*>(dr + i * di) = value;
  }
}

/// Element kernel: element @p i in destination order (consecutive threads write consecutive
/// elements of the destination's innermost dim).
template <class T>
GTS_HD inline void copy_element(const kdims& d, std::byte* dst, const std::byte* src, int64_t i) {
  int64_t doff, soff;
  row_offsets(d, d.ndim, i, doff, soff);
  *reinterpret_cast<T*>(dst + doff) = *reinterpret_cast<const T*>(src + soff);
}

template <class T>
GTS_HD inline void fill_element(const kdims& d, std::byte* dst, const T& value, int64_t i) {
  int64_t doff, soff;
  row_offsets(d, d.ndim, i, doff, soff);
  *reinterpret_cast<T*>(dst + doff) = value;
}

/// Element at an address that is not a multiple of its size: written byte by byte.
GTS_HD inline void fill_bytes_element(const kdims& d, std::byte* dst, const kbytes& value,
                                      int itemsize, int64_t i) {
  int64_t doff, soff;
  row_offsets(d, d.ndim, i, doff, soff);
  for (int b = 0; b < itemsize; ++b) reinterpret_cast<unsigned char*>(dst + doff)[b] = value.b[b];
}

/// Where tile @p t of a transpose lies: batch offsets and the tile's first indices along the
/// destination-inner dim (ndim-1) and the source-inner dim @p sd.
struct tile_pos {
  int64_t doff, soff, d0, s0;
};

GTS_HD inline tile_pos transpose_tile(const kdims& d, int sd, int64_t tiles_d, int64_t tiles_s,
                                      int64_t t) {
  tile_pos p{0, 0, 0, 0};
  const int dd = d.ndim - 1;
  int64_t rest = t;
  const int64_t td = rest % tiles_d;
  rest /= tiles_d;
  const int64_t ts = rest % tiles_s;
  rest /= tiles_s;
  for (int k = dd - 1; k >= 0; --k) {
    if (k == sd) continue;
    const int64_t q = rest / d.shape[k];
    const int64_t c = rest - q * d.shape[k];
    rest = q;
    p.doff += c * d.dst[k];
    p.soff += c * d.src[k];
  }
  p.d0 = td * tile_dim;
  p.s0 = ts * tile_dim;
  return p;
}

/// One phase of the transpose, thread (tx, ty), over the tile's elements (id along ndim-1, is
/// along sd). Loading (phase 1) reads along sd (consecutive tx -> consecutive source elements)
/// into the shared tile; storing (phase 2, after a barrier) writes along ndim-1 (consecutive tx ->
/// consecutive destination elements) from the tile's columns.
template <bool load, class T>
GTS_HD inline void transpose_phase(const kdims& d, std::byte* dst, const std::byte* src, int sd,
                                   const tile_pos& p, unsigned tx, unsigned ty,
                                   T (*buf)[tile_dim + 1]) {
  const int dd = d.ndim - 1;
  for (unsigned j = ty; j < unsigned(tile_dim); j += tile_rows) {
    const int64_t id = p.d0 + (load ? j : tx);
    const int64_t is = p.s0 + (load ? tx : j);
    if (id < d.shape[dd] && is < d.shape[sd]) {
      if constexpr (load) {
        buf[j][tx] = *reinterpret_cast<const T*>(src + p.soff + id * d.src[dd] + is * d.src[sd]);
      } else {
        *reinterpret_cast<T*>(dst + p.doff + id * d.dst[dd] + is * d.dst[sd]) = buf[tx][j];
      }
    }
  }
}

template <class T>
GTS_HD inline void transpose_load(const kdims& d, const std::byte* src, int sd, const tile_pos& p,
                                  unsigned tx, unsigned ty, T (*buf)[tile_dim + 1]) {
  transpose_phase<true>(d, nullptr, src, sd, p, tx, ty, buf);
}

template <class T>
GTS_HD inline void transpose_store(const kdims& d, std::byte* dst, int sd, const tile_pos& p,
                                   unsigned tx, unsigned ty, T (*buf)[tile_dim + 1]) {
  transpose_phase<false>(d, dst, nullptr, sd, p, tx, ty, buf);
}

// ------------------------------------------------------------------------------------------------
// Launch choices (host side)

enum class kernel_kind { rows, transpose, elements, bytes };

/// Which kernel runs a plan and over how many work items (blocks of work, grid-stride).
struct launch_choice {
  kernel_kind kind = kernel_kind::elements;
  kdims k{};
  int sd = 0;                        ///< Source-inner dim (transpose).
  rows_shape rows{0, 0, 0};          ///< Rows kernel.
  int64_t tiles_d = 0, tiles_s = 0;  ///< Transpose.
  int64_t total = 0;                 ///< Work items: chunks, tiles or elements.
};

inline kdims make_kdims(int ndim, const int64_t* shape, const int64_t* dst, const int64_t* src) {
  kdims k{};
  k.ndim = ndim;
  for (int d = 0; d < ndim; ++d) {
    k.shape[d] = shape[d];
    k.dst[d] = dst[d];
    k.src[d] = src != nullptr ? src[d] : 0;
  }
  return k;
}

/// Lanes per row: enough for one chunk of row_ilp elements per lane to cover the row, at least
/// a warp (coalescing), at most a block.
inline rows_shape make_rows(int64_t n, int64_t count) {
  rows_shape r{5, count / n, 0};
  while (r.lanes_log2 < 8 && (int64_t(1) << r.lanes_log2) * row_ilp < n) ++r.lanes_log2;
  const int64_t chunk = (int64_t(1) << r.lanes_log2) * row_ilp;
  r.chunks_per_row = (n + chunk - 1) / chunk;
  return r;
}

inline int64_t rows_items(const rows_shape& r) {
  const int64_t per_block = row_threads >> r.lanes_log2;
  return (r.rows + per_block - 1) / per_block * r.chunks_per_row;
}

inline launch_choice choose_copy(const copy_plan& p) {
  launch_choice c;
  c.k = make_kdims(p.ndim, p.shape, p.dst_strides, p.src_strides);
  const int inner = p.ndim - 1;
  const int sd = p.src_inner();
  const int64_t n = p.shape[inner];
  const int64_t abs_si = p.src_strides[inner] < 0 ? -p.src_strides[inner] : p.src_strides[inner];
  const int64_t abs_ss = p.src_strides[sd] < 0 ? -p.src_strides[sd] : p.src_strides[sd];
  const bool same_inner = sd == inner || abs_si == abs_ss;
  if (same_inner && n >= min_row_extent) {
    c.kind = kernel_kind::rows;
    c.rows = make_rows(n, p.count);
    c.total = rows_items(c.rows);
  } else if (!same_inner && n >= min_tile_extent && p.shape[sd] >= min_tile_extent) {
    c.kind = kernel_kind::transpose;
    c.sd = sd;
    c.tiles_d = (n + tile_dim - 1) / tile_dim;
    c.tiles_s = (p.shape[sd] + tile_dim - 1) / tile_dim;
    c.total = c.tiles_d * c.tiles_s * (p.count / (n * p.shape[sd]));
  } else {
    c.kind = kernel_kind::elements;
    c.total = p.count;
  }
  return c;
}

inline launch_choice choose_fill(const fill_plan& p) {
  launch_choice c;
  c.k = make_kdims(p.ndim, p.shape, p.strides, nullptr);
  const int64_t n = p.shape[p.ndim - 1];
  if (p.misaligned) {
    c.kind = kernel_kind::bytes;
    c.total = p.count;
  } else if (n >= min_row_extent) {
    c.kind = kernel_kind::rows;
    c.rows = make_rows(n, p.count);
    c.total = rows_items(c.rows);
  } else {
    c.kind = kernel_kind::elements;
    c.total = p.count;
  }
  return c;
}

}  // namespace gts::device::GTS_GPU_NS
