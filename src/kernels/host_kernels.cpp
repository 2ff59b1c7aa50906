// Host fill and copy. Every call is first reduced to a normalized problem (see
// kernels_internal.hpp): dimensions ordered like destination memory, contiguous dimensions
// merged. Then one of three serial strategies runs on each thread's share:
//  - rows:      the innermost dimension is contiguous in both arrays -> memcpy per row (stream
//               copy with non-temporal stores for arrays larger than the cache);
//  - transpose: 4/8-byte elements whose contiguous dimension differs between the arrays ->
//               register-blocked transposition of those two dimensions (simd.cpp);
//  - generic:   anything else (other sizes, conversions, gaps) -> tiles transposed through a
//               small buffer, converted row by row.
// Threads split the outermost destination dimension into contiguous static ranges, so a
// thread writes the pages it first-touched when the same split filled the array.
#include <algorithm>
#include <cstring>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "common/errors.hpp"
#include "kernels/kernels.hpp"
#include "kernels/kernels_internal.hpp"

namespace gts::kernels {

using detail::dim;
using detail::problem;

namespace {

bool supported_itemsize(int32_t size) {
  return size == 1 || size == 2 || size == 4 || size == 8 || size == 16;
}

// Validates one array; returns its element count (0 if any extent is 0).
int64_t check_array(const strided_array& a, const char* name) {
  if (a.ndim < 0 || a.ndim > max_ndim) {
    fail_arg(name,
             "ndim " + std::to_string(a.ndim) + " is out of range 0.." + std::to_string(max_ndim));
  }
  if (!supported_itemsize(a.type.itemsize)) {
    fail(error_kind::unsupported, std::string(name) + ": unsupported item size " +
                                      std::to_string(a.type.itemsize) + " bytes");
  }
  int64_t count = 1;
  for (int d = 0; d < a.ndim; ++d) {
    if (a.shape[d] < 0) {
      fail_arg(name, "extent " + std::to_string(a.shape[d]) + " of dimension " + std::to_string(d) +
                         " is negative");
    }
  }
  for (int d = 0; d < a.ndim; ++d) {
    if (a.shape[d] == 0) return 0;
  }
  for (int d = 0; d < a.ndim; ++d) {
    if (__builtin_mul_overflow(count, a.shape[d], &count)) {
      fail(error_kind::overflow, std::string(name) + ": element count overflows 64 bits");
    }
  }
  if (a.data == nullptr) fail_arg(name, "data is null but the array has elements");
  return count;
}

// Sorts dims by destination stride (largest first) and merges neighbours that are contiguous
// in both arrays. Expects extents > 1 and destination strides >= 0.
void sort_and_merge(problem& p) {
  // Insertion sort: at most 16 entries, and usually already in order.
  for (int i = 1; i < p.nd; ++i) {
    const dim v = p.dims[i];
    int j = i - 1;
    while (j >= 0 && (p.dims[j].ds < v.ds ||
                      (p.dims[j].ds == v.ds && std::abs(p.dims[j].ss) < std::abs(v.ss)))) {
      p.dims[j + 1] = p.dims[j];
      --j;
    }
    p.dims[j + 1] = v;
  }
  int out = 0;
  for (int i = 0; i < p.nd; ++i) {
    if (out > 0) {
      dim& outer = p.dims[out - 1];
      const dim& inner = p.dims[i];
      // Merging is exact only when the outer stride is the inner extent times its stride in
      // both arrays; then the pair is one dimension of extent product.
      if (outer.ds == inner.n * inner.ds && outer.ss == inner.n * inner.ss) {
        outer.n *= inner.n;
        outer.ds = inner.ds;
        outer.ss = inner.ss;
        continue;
      }
    }
    p.dims[out++] = p.dims[i];
  }
  p.nd = out;
}

// Builds the normalized problem for dst (and src, or nullptr for fill).
problem normalize(const strided_array& dst, const strided_array* src) {
  problem p;
  p.dst = dst.data;
  p.src = src ? src->data : nullptr;
  for (int d = 0; d < dst.ndim; ++d) {
    if (dst.shape[d] == 1) continue;
    dim v{dst.shape[d], dst.strides[d], src ? src->strides[d] : 0};
    if (v.ds < 0) {
      // Walk this dimension backwards in both arrays: same element pairs, forward destination.
      p.dst += (v.n - 1) * v.ds;
      v.ds = -v.ds;
      if (src) {
        p.src += (v.n - 1) * v.ss;
        v.ss = -v.ss;
      }
    }
    p.dims[p.nd++] = v;
  }
  sort_and_merge(p);
  return p;
}

// Calls f(d, s) for every index of dims[0..nd) (the outer loops of a strategy).
template <class F>
void for_each_index(const dim* dims, int nd, std::byte* d, const std::byte* s, F&& f) {
  if (nd == 0) {
    f(d, s);
    return;
  }
  int64_t idx[max_ndim] = {};
  for (;;) {
    f(d, s);
    int k = nd - 1;
    for (; k >= 0; --k) {
      if (++idx[k] < dims[k].n) {
        d += dims[k].ds;
        s += dims[k].ss;
        break;
      }
      d -= dims[k].ds * (dims[k].n - 1);
      s -= dims[k].ss * (dims[k].n - 1);
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

// Threads for a job that writes @p bytes: one for small jobs (a team costs microseconds).
int threads_for(int64_t bytes) {
  if (bytes < detail::parallel_threshold_bytes) return 1;
  return thread_count();
}

// Runs body(sub) on each thread's static share of the outermost dimension of p. The share
// boundaries are multiples of @p grain elements of that dimension.
template <class Body>
void run_parallel(const problem& p, int64_t bytes, int64_t grain, Body&& body) {
  int nt = p.nd > 0 ? threads_for(bytes) : 1;
  if (nt > 1) {
    const int64_t units = (p.dims[0].n + grain - 1) / grain;
    nt = static_cast<int>(std::min<int64_t>(nt, units));
  }
  if (nt <= 1) {
    body(p);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    const int T = omp_get_num_threads();
    const int64_t units = (p.dims[0].n + grain - 1) / grain;
    const int64_t per = units / T, extra = units % T;
    const int64_t ub = t * per + std::min<int64_t>(t, extra);
    const int64_t ue = ub + per + (t < extra ? 1 : 0);
    const int64_t b = std::min(p.dims[0].n, ub * grain);
    const int64_t e = std::min(p.dims[0].n, ue * grain);
    if (b < e) {
      // Only the first nd dims are initialized; copy just those.
      problem sub;
      sub.nd = p.nd;
      std::copy(p.dims, p.dims + p.nd, sub.dims);
      sub.dims[0].n = e - b;
      sub.dst = p.dst + b * p.dims[0].ds;
      sub.src = p.src ? p.src + b * p.dims[0].ss : nullptr;
      body(sub);
    }
  }
#else
  body(p);
#endif
}

// ---------------------------------------------------------------------------------- fill

// 64-byte pattern of @p value (itemsize bytes) phased so that pattern[a % 64] is the byte for
// address a, given that an element starts at @p origin.
void make_pattern(unsigned char* pattern, const std::byte* origin, const void* value,
                  int itemsize) {
  const auto* v = static_cast<const unsigned char*>(value);
  const auto phase = static_cast<int>(reinterpret_cast<uintptr_t>(origin) % itemsize);
  for (int k = 0; k < 64; ++k) pattern[k] = v[((k - phase) % itemsize + itemsize) % itemsize];
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
constexpr bool have_rep_stosq = true;

// Fills @p bytes at @p d from an address-phased 64-byte pattern with period 8: bytes up to the
// first 8-byte boundary, then "rep stosq" of the pattern's aligned qword, then the rest.
void stosq_fill(std::byte* d, std::size_t bytes, const unsigned char* pat) {
  auto* p = reinterpret_cast<unsigned char*>(d);
  const std::size_t mis = reinterpret_cast<uintptr_t>(p) % 8;
  const std::size_t head = std::min(bytes, (8 - mis) % 8);
  for (std::size_t i = 0; i < head; ++i) p[i] = pat[(mis + i) % 8];
  p += head;
  bytes -= head;
  uint64_t q;
  std::memcpy(&q, pat, 8);
  std::size_t count = bytes / 8;
  void* out = p;
  asm volatile("rep stosq" : "+D"(out), "+c"(count) : "a"(q) : "memory");
  p += (bytes / 8) * 8;
  for (std::size_t i = 0; i < bytes % 8; ++i) p[i] = pat[i];
}
#else
constexpr bool have_rep_stosq = false;
#endif

template <int Size>
void fill_strided(std::byte* d, int64_t ds, int64_t n, const void* value) {
  unsigned char v[Size];
  std::memcpy(v, value, Size);
  for (int64_t i = 0; i < n; ++i, d += ds) std::memcpy(d, v, Size);
}

void fill_serial(const problem& p, int itemsize, const void* value, bool nt) {
  const dim& in = p.dims[p.nd - 1];
  const bool uniform = [&] {
    const auto* v = static_cast<const unsigned char*>(value);
    for (int k = 1; k < itemsize; ++k) {
      if (v[k] != v[0]) return false;
    }
    return true;
  }();
  if (in.ds == itemsize) {
    const auto run_bytes = static_cast<std::size_t>(in.n * itemsize);
    if (uniform && !nt) {
      // memset's "rep stosb" is the fastest cached store on current x86 cores.
      const int byte = static_cast<const unsigned char*>(value)[0];
      for_each_index(p.dims, p.nd - 1, p.dst, nullptr,
                     [&](std::byte* d, const std::byte*) { std::memset(d, byte, run_bytes); });
      return;
    }
    alignas(64) unsigned char pattern[64];
    make_pattern(pattern, p.dst, value, itemsize);
    const auto& ops = detail::simd();
    const uintptr_t phase = reinterpret_cast<uintptr_t>(p.dst) % itemsize;
    // Items of up to 8 bytes repeat every 8 bytes: long runs go to "rep stosq", which beat
    // streaming vector stores and a plain store loop; zeros keep streaming stores, faster still
    // (figures: docs/copy-kernels.md, "Figures behind the kernels' choices").
    const bool use_stosq = have_rep_stosq && itemsize <= 8 && !uniform && run_bytes >= 512;
    for_each_index(p.dims, p.nd - 1, p.dst, nullptr, [&](std::byte* d, const std::byte*) {
      const unsigned char* pat = pattern;
      alignas(64) unsigned char row_pattern[64];
      if (reinterpret_cast<uintptr_t>(d) % itemsize != phase) {
        // Row starts with another phase (strides not multiples of the item size).
        make_pattern(row_pattern, d, value, itemsize);
        pat = row_pattern;
      }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
      if (use_stosq) {
        stosq_fill(d, run_bytes, pat);
        return;
      }
#endif
      ops.pattern_fill(d, run_bytes, pat, nt);
    });
    if (nt && !use_stosq) ops.fence();
    return;
  }
  void (*const strided)(std::byte*, int64_t, int64_t, const void*) = detail::by_itemsize(
      itemsize, [](auto size) { return &fill_strided<decltype(size)::value>; }, &fill_strided<16>);
  for_each_index(p.dims, p.nd - 1, p.dst, nullptr,
                 [&](std::byte* d, const std::byte*) { strided(d, in.ds, in.n, value); });
}

// ---------------------------------------------------------------------------------- copy

// Copies @p n rows of @p bytes (1..64) each: row i from s + i*ss to d + i*ds. Halo faces of the
// contiguous dimension are such rows (3 items of a 518x518x134 field: 24 bytes per row); a call
// to memcpy per row cost more than moving the row, so each row is two fixed-size moves that
// overlap in the middle (loads first: the arrays do not overlap).
//
// Prefetch: source rows far apart (a face of the I-first layout: one 24-byte row every 4144
// bytes, each on its own page) defeat the hardware prefetchers, which stop at 4 KiB pages, and
// the loads of a few dozen rows in flight do not cover the memory latency. A software prefetch
// of the row 32 ahead makes up for them; a write prefetch of destination rows (the unpack) was
// slower, so only the source side is prefetched (figures: docs/copy-kernels.md). Prefetches
// never fault, so the last rows' prefetches past the end are harmless.
template <int Chunk, bool Prefetch>
void copy_short_rows(std::byte* d, int64_t ds, const std::byte* s, int64_t ss, int64_t n,
                     int64_t bytes) {
  struct chunk {
    unsigned char b[Chunk];
  };
  constexpr int64_t ahead = 32;
  const int64_t tail = bytes - Chunk;
  for (int64_t i = 0; i < n; ++i, d += ds, s += ss) {
    if constexpr (Prefetch) __builtin_prefetch(s + ahead * ss, 0, 3);
    chunk lo, hi;
    std::memcpy(&lo, s, Chunk);
    std::memcpy(&hi, s + tail, Chunk);
    std::memcpy(d, &lo, Chunk);
    std::memcpy(d + tail, &hi, Chunk);
  }
}

using short_rows_fn = void (*)(std::byte*, int64_t, const std::byte*, int64_t, int64_t, int64_t);

template <bool Prefetch>
short_rows_fn short_rows_of(int64_t bytes) {
  if (bytes >= 32) return &copy_short_rows<32, Prefetch>;
  if (bytes >= 16) return &copy_short_rows<16, Prefetch>;
  if (bytes >= 8) return &copy_short_rows<8, Prefetch>;
  if (bytes >= 4) return &copy_short_rows<4, Prefetch>;
  if (bytes >= 2) return &copy_short_rows<2, Prefetch>;
  return &copy_short_rows<1, Prefetch>;
}

// Source rows at least this far apart are prefetched in software (see copy_short_rows). The K
// faces of a K-fastest field (rows 1072 bytes apart, four to a page) gained 5% from it; rows
// closer than 1 KiB share pages and lines, which the hardware prefetchers already follow.
constexpr int64_t prefetch_row_stride = 1024;

// The short-row copy for rows of @p bytes (1..64) whose source rows are @p ss bytes apart: the
// largest chunk not above the row.
short_rows_fn short_rows_for(int64_t bytes, int64_t ss) {
  return std::abs(ss) >= prefetch_row_stride ? short_rows_of<true>(bytes)
                                             : short_rows_of<false>(bytes);
}

constexpr int64_t short_row_bytes = 64;

// Index of the dimension with the smallest source stride (the source's fastest), preferring
// the destination's innermost dimension on ties.
int source_inner(const problem& p) {
  int b = p.nd - 1;
  for (int d = p.nd - 2; d >= 0; --d) {
    if (std::abs(p.dims[d].ss) < std::abs(p.dims[b].ss)) b = d;
  }
  return b;
}

// The dims of p without a and b, in order (the outer loops of a 2-D strategy).
int outer_dims(const problem& p, int a, int b, dim* out) {
  int n = 0;
  for (int d = 0; d < p.nd; ++d) {
    if (d != a && d != b) out[n++] = p.dims[d];
  }
  return n;
}

// Transposing gather into a tile buffer: buf[y][x] = src(x, y) for x < tx, y < ty, where the
// buffer rows hold @p ld elements and src(x, y) is at s + x*sx + y*sy.
using gather_fn = void (*)(std::byte* buf, int64_t ld, const std::byte* s, int64_t sx, int64_t sy,
                           int64_t tx, int64_t ty);

template <int Size>
void gather_tile(std::byte* buf, int64_t ld, const std::byte* s, int64_t sx, int64_t sy, int64_t tx,
                 int64_t ty) {
  for (int64_t x = 0; x < tx; ++x) {
    const std::byte* row = s + x * sx;
    std::byte* col = buf + x * Size;
    for (int64_t y = 0; y < ty; ++y) std::memcpy(col + y * ld * Size, row + y * sy, Size);
  }
}

gather_fn gather_for(int size) {
  return detail::by_itemsize(
      size, [](auto item) { return &gather_tile<decltype(item)::value>; }, &gather_tile<16>);
}

using transpose_fn = void (*)(std::byte*, const std::byte*, const detail::transpose_geom&, bool);

transpose_fn vector_transpose(const detail::simd_ops& ops, int size) {
  switch (size) {
    case 8:
      return ops.transpose8;
    case 4:
      return ops.transpose4;
    case 2:
      return ops.transpose2;
    case 1:
      return ops.transpose1;
    default:
      return nullptr;
  }
}

void copy_serial(const problem& p, dtype dt, dtype st, bool nt) {
  const bool same = dt == st;
  const int dsize = dt.itemsize, ssize = st.itemsize;
  if (p.nd == 0) {
    detail::convert_run(dt, st)(p.dst, 0, p.src, 0, 1);
    return;
  }
  const int a = p.nd - 1;
  const int b = source_inner(p);
  const dim& da = p.dims[a];
  const auto& ops = detail::simd();

  if (b == a) {
    // Rows: both arrays run along the same innermost dimension.
    if (same && da.ds == dsize && da.ss == ssize) {
      const auto bytes = static_cast<std::size_t>(da.n * dsize);
      const bool stream = nt && bytes >= 256;
      if (!stream && da.n * dsize <= short_row_bytes && p.nd >= 2) {
        // Short rows: the loop over the next dimension runs here, not through for_each_index.
        const dim& rows = p.dims[p.nd - 2];
        const short_rows_fn copy_rows = short_rows_for(da.n * dsize, rows.ss);
        for_each_index(p.dims, p.nd - 2, p.dst, p.src, [&](std::byte* d, const std::byte* s) {
          copy_rows(d, rows.ds, s, rows.ss, rows.n, da.n * dsize);
        });
        return;
      }
      for_each_index(p.dims, p.nd - 1, p.dst, p.src, [&](std::byte* d, const std::byte* s) {
        if (stream) {
          ops.stream_copy(d, s, bytes);
        } else {
          std::memcpy(d, s, bytes);
        }
      });
      if (stream) ops.fence();
      return;
    }
    const detail::run_fn run = same ? detail::copy_run(dsize) : detail::convert_run(dt, st);
    for_each_index(p.dims, p.nd - 1, p.dst, p.src,
                   [&](std::byte* d, const std::byte* s) { run(d, da.ds, s, da.ss, da.n); });
    return;
  }

  const dim& db = p.dims[b];
  dim outer[max_ndim];
  int nouter = outer_dims(p, a, b, outer);

  // Direct vector transpose for 4- and 8-byte items: their blocks write whole destination
  // lines, so large copies can stream them out with non-temporal stores.
  const transpose_fn tr = (dsize == 8 || dsize == 4) ? vector_transpose(ops, dsize) : nullptr;
  if (same && tr != nullptr && da.ds == dsize && db.ss == dsize && da.n >= 8 && db.n >= 8) {
    // z: an outer dimension walked inside the transpose's strips; the one in which the source
    // rows continue (F order -> K fastest: J after I) makes them one long stream.
    detail::transpose_geom g{da.n, db.n, 1, db.ds, 0, da.ss, 0};
    int z = nouter - 1;
    for (int k = 0; k < nouter; ++k) {
      if (outer[k].ss == db.n * db.ss) z = k;
    }
    if (z >= 0) {
      g.nz = outer[z].n;
      g.dsz = outer[z].ds;
      g.ssz = outer[z].ss;
      std::copy(outer + z + 1, outer + nouter, outer + z);
      --nouter;
    }
    for_each_index(outer, nouter, p.dst, p.src,
                   [&](std::byte* d, const std::byte* s) { tr(d, s, g, nt); });
    if (nt) ops.fence();
    return;
  }

  // Generic: tiles of t x t elements go through a small buffer. Each source row segment is read
  // once, transposed into the buffer, and each destination row segment is written once from it,
  // so no cache line has to survive between steps; that matters because rows a power of two
  // apart share a cache set and would evict each other (a direct strided loop of 1-byte items
  // is an order of magnitude slower from set conflicts alone: docs/copy-kernels.md).
  const detail::run_fn run = same ? detail::copy_run(dsize) : detail::convert_run(dt, st);
  const gather_fn gather = gather_for(ssize);
  // Vector transposes gather a tile whose source rows are contiguous (into the buffer, so with
  // ordinary stores).
  const transpose_fn vgather = db.ss == ssize ? vector_transpose(ops, ssize) : nullptr;
  // Tile edge: at least a cache line of the smaller type, at least 32 (fewer run calls), and at
  // most 16 KiB of buffer so it stays in L1 next to the lines in flight.
  constexpr int64_t buf_bytes = 16384;
  int64_t t = std::max(32, 64 / std::min(dsize, ssize));
  while (t * t * ssize > buf_bytes) t /= 2;
  alignas(64) std::byte buf[buf_bytes];
  for_each_index(outer, nouter, p.dst, p.src, [&](std::byte* d, const std::byte* s) {
    for (int64_t x0 = 0; x0 < da.n; x0 += t) {
      const int64_t tx = std::min(t, da.n - x0);
      for (int64_t y0 = 0; y0 < db.n; y0 += t) {
        const int64_t ty = std::min(t, db.n - y0);
        const std::byte* s0 = s + x0 * da.ss + y0 * db.ss;
        if (vgather != nullptr) {
          const detail::transpose_geom g{tx, ty, 1, tx * ssize, 0, da.ss, 0};
          vgather(buf, s0, g, false);
        } else {
          gather(buf, tx, s0, da.ss, db.ss, tx, ty);
        }
        for (int64_t y = 0; y < ty; ++y) {
          run(d + (y0 + y) * db.ds + x0 * da.ds, da.ds, buf + y * tx * ssize, ssize, tx);
        }
      }
    }
  });
}

}  // namespace

int thread_count() {
#ifdef _OPENMP
  // Inside a parallel region that cannot nest further, a kernel runs on the calling thread.
  if (omp_get_active_level() >= omp_get_max_active_levels()) return 1;
  return std::max(1, omp_get_max_threads());
#else
  return 1;
#endif
}

void fill(const strided_array& dst, const void* value) {
  const int64_t count = check_array(dst, "dst");
  if (count == 0) return;
  if (value == nullptr) fail_arg("value", "null pointer");
  const int size = dst.type.itemsize;
  if (dst.ndim == 0) {
    std::memcpy(dst.data, value, static_cast<std::size_t>(size));
    return;
  }
  problem p = normalize(dst, nullptr);
  if (p.nd == 0) {
    std::memcpy(p.dst, value, static_cast<std::size_t>(size));
    return;
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(count, int64_t(size), &bytes)) bytes = INT64_MAX;
  const bool nt = bytes >= detail::streaming_threshold();
  // A single contiguous run is split at page boundaries (4 KiB of elements).
  const int64_t grain = (p.nd == 1 && p.dims[0].ds == size) ? std::max<int64_t>(1, 4096 / size) : 1;
  run_parallel(p, bytes, grain, [&](const problem& sub) { fill_serial(sub, size, value, nt); });
}

void copy(const strided_array& dst, const strided_array& src, store_policy stores) {
  if (dst.ndim != src.ndim) {
    fail(error_kind::shape_mismatch, "copy: destination has " + std::to_string(dst.ndim) +
                                         " dimensions, source " + std::to_string(src.ndim));
  }
  const int64_t count = check_array(dst, "dst");
  check_array(src, "src");
  for (int d = 0; d < dst.ndim; ++d) {
    if (dst.shape[d] != src.shape[d]) {
      fail(error_kind::shape_mismatch,
           "copy: extent " + std::to_string(dst.shape[d]) + " of destination dimension " +
               std::to_string(d) + " differs from source extent " + std::to_string(src.shape[d]));
    }
  }
  if (detail::convert_run(dst.type, src.type) == nullptr) {
    fail(error_kind::unsupported,
         "copy: unsupported conversion " + src.type.typestr() + " -> " + dst.type.typestr());
  }
  if (count == 0) return;
  if (dst.type == src.type && dst.data == src.data) {
    bool same_strides = true;
    for (int d = 0; d < dst.ndim; ++d) {
      same_strides = same_strides && (dst.shape[d] == 1 || dst.strides[d] == src.strides[d]);
    }
    if (same_strides) return;  // copying an array onto itself
  }
  const problem p = normalize(dst, &src);
  int64_t bytes = 0;
  if (__builtin_mul_overflow(count, int64_t(dst.type.itemsize), &bytes)) bytes = INT64_MAX;
  const bool nt = stores == store_policy::streaming || bytes >= detail::streaming_threshold();
  const int64_t grain = (p.nd == 1) ? std::max<int64_t>(1, 4096 / dst.type.itemsize) : 1;
  run_parallel(p, bytes, grain,
               [&](const problem& sub) { copy_serial(sub, dst.type, src.type, nt); });
}

}  // namespace gts::kernels
