// Host-side analysis of strided arrays shared by the device backends: byte spans, density, and
// the normalized "plan" a copy or fill kernel runs on. Normalizing first (drop extent-1 dims,
// make destination strides positive, order dims by destination stride, merge dims that are
// contiguous in both arrays, widen the moved unit up to 16 bytes) turns most real cases into
// one memcpy/memset or one row kernel, and leaves true layout changes to the transpose kernel.
// Header-only and free of device code so nvcc, hipcc and the host compiler all include it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/errors.hpp"
#include "kernels/strided_array.hpp"

namespace gts::device::detail {

/// A plan may carry one more dimension than an array: the bytes of a misaligned element.
inline constexpr int plan_max_dims = max_ndim + 1;

/// Byte offsets [lo, hi) relative to data that the elements of @p a occupy; {0, 0} if empty.
struct byte_span {
  int64_t lo = 0;
  int64_t hi = 0;
  [[nodiscard]] int64_t bytes() const { return hi - lo; }
};

inline byte_span span_of(const strided_array& a) {
  byte_span s;
  if (a.size() == 0) return s;
  for (int d = 0; d < a.ndim; ++d) {
    const int64_t ext = (a.shape[d] - 1) * a.strides[d];
    if (ext < 0)
      s.lo += ext;
    else
      s.hi += ext;
  }
  s.hi += a.type.itemsize;
  return s;
}

/// True when the elements of @p a exactly tile span_of(a): no gaps, no overlap. Such an array
/// can be moved as one contiguous block of span_of(a).bytes().
inline bool is_dense(const strided_array& a) {
  if (a.size() == 0) return true;
  int64_t ext[max_ndim];
  int64_t str[max_ndim];
  int n = 0;
  for (int d = 0; d < a.ndim; ++d) {
    if (a.shape[d] == 1) continue;
    ext[n] = a.shape[d];
    str[n] = a.strides[d] < 0 ? -a.strides[d] : a.strides[d];
    ++n;
  }
  // Insertion sort by |stride| ascending (n <= 16).
  for (int i = 1; i < n; ++i) {
    for (int j = i; j > 0 && str[j] < str[j - 1]; --j) {
      std::swap(str[j], str[j - 1]);
      std::swap(ext[j], ext[j - 1]);
    }
  }
  int64_t expect = a.type.itemsize;
  for (int i = 0; i < n; ++i) {
    if (str[i] != expect) return false;
    expect *= ext[i];
  }
  return true;
}

/// A compact array with @p a's shape and dtype, dims in @p a's own stride order (largest
/// |stride| outermost), at @p data: packing into it only squeezes out gaps.
inline strided_array compact_like(const strided_array& a, std::byte* data) {
  strided_array c = a;
  c.data = data;
  int order[max_ndim];
  for (int d = 0; d < a.ndim; ++d) order[d] = d;
  // Stable insertion sort by |stride| descending.
  for (int i = 1; i < a.ndim; ++i) {
    for (int j = i; j > 0; --j) {
      const int64_t sj = a.strides[order[j]] < 0 ? -a.strides[order[j]] : a.strides[order[j]];
      const int64_t sp =
          a.strides[order[j - 1]] < 0 ? -a.strides[order[j - 1]] : a.strides[order[j - 1]];
      if (sj <= sp) break;
      std::swap(order[j], order[j - 1]);
    }
  }
  int64_t s = a.type.itemsize;
  for (int i = a.ndim - 1; i >= 0; --i) {
    c.strides[order[i]] = s;
    s *= a.shape[order[i]];
  }
  return c;
}

/// Throws invalid_argument unless @p dst and @p src have equal shapes and item sizes.
inline void check_same_shape(const strided_array& dst, const strided_array& src, const char* who) {
  if (dst.ndim != src.ndim || dst.ndim < 0 || dst.ndim > max_ndim) {
    fail(error_kind::invalid_argument, std::string(who) + ": src has " + std::to_string(src.ndim) +
                                           " dimensions, dst has " + std::to_string(dst.ndim));
  }
  for (int d = 0; d < dst.ndim; ++d) {
    if (dst.shape[d] != src.shape[d] || dst.shape[d] < 0) {
      fail(error_kind::invalid_argument,
           std::string(who) + ": shape differs in dimension " + std::to_string(d) + " (dst " +
               std::to_string(dst.shape[d]) + ", src " + std::to_string(src.shape[d]) + ")");
    }
  }
  if (dst.type.itemsize != src.type.itemsize || dst.type.itemsize <= 0) {
    fail(error_kind::invalid_argument,
         std::string(who) + ": item sizes differ (dst " + std::to_string(dst.type.itemsize) +
             ", src " + std::to_string(src.type.itemsize) + "); device copies do not convert");
  }
}

/// A dtype the host kernels copy bit for bit, of @p itemsize bytes: devices move bytes, never
/// convert, so the element kind does not matter (and "<u16"-like types need not exist).
inline dtype bitwise_type(int itemsize) {
  switch (itemsize) {
    case 1:
      return dtype{'u', 1};
    case 2:
      return dtype{'u', 2};
    case 4:
      return dtype{'u', 4};
    case 8:
      return dtype{'u', 8};
    case 16:
      return dtype{'c', 16};
    default:
      fail(error_kind::unsupported, "item size " + std::to_string(itemsize) +
                                        " is not supported on devices (1, 2, 4, 8 or 16 bytes)");
  }
}

/// @p a viewed with bitwise_type().
inline strided_array as_bitwise(strided_array a) {
  a.type = bitwise_type(a.type.itemsize);
  return a;
}

/// Largest power of two <= 16 dividing every value in @p v.
inline int common_unit(const int64_t* v, int n) {
  int unit = 16;
  for (int i = 0; i < n; ++i) {
    while (unit > 1 && (v[i] % unit) != 0) unit /= 2;
  }
  return unit;
}

/// A copy of src into dst reduced to @p ndim dims of elements of @p unit bytes. Dims are in
/// destination order (dim ndim-1 has the smallest destination stride) and every destination
/// stride is positive.
struct copy_plan {
  int ndim = 0;       ///< 0 only when there is nothing to copy.
  int unit = 1;       ///< Bytes moved per element: 1, 2, 4, 8 or 16.
  int64_t count = 0;  ///< Elements of unit bytes.
  int64_t shape[plan_max_dims] = {};
  int64_t dst_strides[plan_max_dims] = {};
  int64_t src_strides[plan_max_dims] = {};
  std::byte* dst = nullptr;
  const std::byte* src = nullptr;

  /// Both sides are one contiguous block in the same order: one memcpy of count * unit bytes.
  [[nodiscard]] bool is_memcpy() const {
    return ndim == 1 && dst_strides[0] == unit && src_strides[0] == unit;
  }
  /// Dimension with the smallest |source stride|.
  [[nodiscard]] int src_inner() const {
    int best = ndim - 1;
    for (int d = 0; d < ndim; ++d) {
      const int64_t s = src_strides[d] < 0 ? -src_strides[d] : src_strides[d];
      const int64_t b = src_strides[best] < 0 ? -src_strides[best] : src_strides[best];
      if (s < b) best = d;
    }
    return best;
  }
};

namespace plan_impl {

inline void sort_and_merge(int& n, int64_t* shape, int64_t* ds, int64_t* ss) {
  // Stable insertion sort: destination stride descending, ties by |source stride| descending.
  for (int i = 1; i < n; ++i) {
    for (int j = i; j > 0; --j) {
      const int64_t sa = ss[j] < 0 ? -ss[j] : ss[j];
      const int64_t sb = ss[j - 1] < 0 ? -ss[j - 1] : ss[j - 1];
      const bool before = ds[j] > ds[j - 1] || (ds[j] == ds[j - 1] && sa > sb);
      if (!before) break;
      std::swap(shape[j], shape[j - 1]);
      std::swap(ds[j], ds[j - 1]);
      std::swap(ss[j], ss[j - 1]);
    }
  }
  int m = 0;
  for (int i = 0; i < n; ++i) {
    if (m > 0 && ds[m - 1] == ds[i] * shape[i] && ss[m - 1] == ss[i] * shape[i]) {
      shape[m - 1] *= shape[i];
      ds[m - 1] = ds[i];
      ss[m - 1] = ss[i];
      continue;
    }
    shape[m] = shape[i];
    ds[m] = ds[i];
    ss[m] = ss[i];
    ++m;
  }
  n = m;
}

}  // namespace plan_impl

/// Normalizes a copy of @p src into @p dst (equal shapes and item sizes, checked by the caller).
inline copy_plan plan_copy(const strided_array& dst, const strided_array& src) {
  copy_plan p;
  p.count = dst.size();
  if (p.count == 0) return p;
  const int itemsize = dst.type.itemsize;
  // The unit: the largest power of two dividing the item size, both addresses and every stride
  // of a non-trivial dim, so every access of the kernels is naturally aligned.
  int64_t vals[2 * max_ndim + 3];
  int nv = 0;
  vals[nv++] = itemsize;
  vals[nv++] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst.data) & 0xffff);
  vals[nv++] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(src.data) & 0xffff);
  for (int d = 0; d < dst.ndim; ++d) {
    if (dst.shape[d] == 1) continue;
    vals[nv++] = dst.strides[d];
    vals[nv++] = src.strides[d];
  }
  p.unit = common_unit(vals, nv);
  std::byte* dptr = dst.data;
  const std::byte* sptr = src.data;
  int n = 0;
  for (int d = 0; d < dst.ndim; ++d) {
    if (dst.shape[d] == 1) continue;
    int64_t ds = dst.strides[d];
    int64_t ss = src.strides[d];
    if (ds < 0) {  // Visit this dim backwards on both sides: same pairs of elements.
      dptr += (dst.shape[d] - 1) * ds;
      sptr += (dst.shape[d] - 1) * ss;
      ds = -ds;
      ss = -ss;
    }
    p.shape[n] = dst.shape[d];
    p.dst_strides[n] = ds;
    p.src_strides[n] = ss;
    ++n;
  }
  if (p.unit < itemsize) {  // Misaligned element: move it as itemsize/unit pieces.
    p.shape[n] = itemsize / p.unit;
    p.dst_strides[n] = p.unit;
    p.src_strides[n] = p.unit;
    ++n;
  }
  if (n == 0) {  // A single element.
    p.shape[0] = 1;
    p.dst_strides[0] = p.unit;
    p.src_strides[0] = p.unit;
    n = 1;
  }
  plan_impl::sort_and_merge(n, p.shape, p.dst_strides, p.src_strides);
  // Widen: rows contiguous on both sides move in larger units when everything stays aligned.
  while (p.unit < 16 && p.dst_strides[n - 1] == p.unit && p.src_strides[n - 1] == p.unit) {
    const int w = p.unit * 2;
    bool ok = (p.shape[n - 1] * p.unit) % w == 0 &&
              reinterpret_cast<uintptr_t>(dptr) % static_cast<uintptr_t>(w) == 0 &&
              reinterpret_cast<uintptr_t>(sptr) % static_cast<uintptr_t>(w) == 0;
    for (int d = 0; ok && d < n - 1; ++d) {
      ok = p.dst_strides[d] % w == 0 && p.src_strides[d] % w == 0;
    }
    if (!ok) break;
    p.shape[n - 1] = p.shape[n - 1] * p.unit / w;
    p.dst_strides[n - 1] = w;
    p.src_strides[n - 1] = w;
    p.unit = w;
  }
  p.ndim = n;
  p.count = 1;
  for (int d = 0; d < n; ++d) p.count *= p.shape[d];
  p.dst = dptr;
  p.src = sptr;
  return p;
}

/// A fill of dst reduced like copy_plan; @p pattern holds one unit of the value (the element
/// repeated unit/itemsize times). misaligned: dst.data or a stride is not a multiple of the
/// item size, so the fill must go byte by byte (unit 1, pattern_period = itemsize).
struct fill_plan {
  int ndim = 0;
  int unit = 1;
  int64_t count = 0;
  bool misaligned = false;
  int itemsize = 1;
  int64_t shape[plan_max_dims] = {};
  int64_t strides[plan_max_dims] = {};
  std::byte* dst = nullptr;
  unsigned char pattern[16] = {};

  [[nodiscard]] bool is_dense() const { return ndim == 1 && strides[0] == unit; }
  /// True when every byte of the pattern is equal (a memset does the fill).
  [[nodiscard]] bool is_byte_pattern() const {
    for (int i = 1; i < unit; ++i) {
      if (pattern[i] != pattern[0]) return false;
    }
    return !misaligned || itemsize == 1;
  }
};

inline fill_plan plan_fill(const strided_array& dst, const void* value) {
  fill_plan p;
  p.count = dst.size();
  p.itemsize = dst.type.itemsize;
  if (p.count == 0) return p;
  if (p.itemsize <= 0 || p.itemsize > 16 || (p.itemsize & (p.itemsize - 1)) != 0) {
    fail(error_kind::unsupported, "fill: item size " + std::to_string(p.itemsize) +
                                      " is not supported on devices (1, 2, 4, 8 or 16 bytes)");
  }
  std::byte* dptr = dst.data;
  int n = 0;
  p.misaligned = reinterpret_cast<uintptr_t>(dptr) % static_cast<uintptr_t>(p.itemsize) != 0;
  int64_t dummy[plan_max_dims] = {};
  for (int d = 0; d < dst.ndim; ++d) {
    if (dst.shape[d] == 1) continue;
    int64_t s = dst.strides[d];
    if (s < 0) {
      dptr += (dst.shape[d] - 1) * s;
      s = -s;
    }
    if (s % p.itemsize != 0) p.misaligned = true;
    p.shape[n] = dst.shape[d];
    p.strides[n] = s;
    ++n;
  }
  if (n == 0) {
    p.shape[0] = 1;
    p.strides[0] = p.itemsize;
    n = 1;
  }
  p.unit = p.itemsize;
  if (p.misaligned) {
    // Kernels write the element's bytes one at a time; keep dims as they are.
    p.ndim = n;
    p.dst = dptr;
    p.unit = 1;
    std::memcpy(p.pattern, value, static_cast<std::size_t>(p.itemsize));
    p.count = 1;
    for (int d = 0; d < n; ++d) p.count *= p.shape[d];
    return p;
  }
  plan_impl::sort_and_merge(n, p.shape, p.strides, dummy);
  while (p.unit < 16 && p.strides[n - 1] == p.unit) {
    const int w = p.unit * 2;
    bool ok = (p.shape[n - 1] * p.unit) % w == 0 &&
              reinterpret_cast<uintptr_t>(dptr) % static_cast<uintptr_t>(w) == 0;
    for (int d = 0; ok && d < n - 1; ++d) ok = p.strides[d] % w == 0;
    if (!ok) break;
    p.shape[n - 1] = p.shape[n - 1] * p.unit / w;
    p.strides[n - 1] = w;
    p.unit = w;
  }
  for (int i = 0; i < p.unit; ++i) {
    p.pattern[i] = static_cast<const unsigned char*>(value)[i % p.itemsize];
  }
  p.ndim = n;
  p.dst = dptr;
  p.count = 1;
  for (int d = 0; d < n; ++d) p.count *= p.shape[d];
  return p;
}

}  // namespace gts::device::detail
