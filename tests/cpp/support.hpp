// Shared helpers of the C++ tests: a tiny check framework, checks of C API statuses and the
// create options of the device suites, and random strided layouts (permuted, padded, sliced,
// reversed) with reference patterns to verify copies and fills, including that nothing outside
// the destination's elements was written.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "gtstorage/gtstorage.h"
#include "kernels/strided_array.hpp"

namespace test {

inline int failures = 0;
inline int checks = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    ++test::checks;                                                                 \
    if (!(cond)) {                                                                  \
      ++test::failures;                                                             \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                               \
  } while (0)

#define CHECK_MSG(cond, ...)                                                        \
  do {                                                                              \
    ++test::checks;                                                                 \
    if (!(cond)) {                                                                  \
      ++test::failures;                                                             \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                            \
      std::fprintf(stderr, "\n");                                                   \
    }                                                                               \
  } while (0)

/// Runs @p f and checks that it throws gts::error of @p kind whose message contains @p needle.
inline void expect_error(gts::error_kind kind, const char* needle, const std::function<void()>& f,
                         const char* file, int line) {
  ++checks;
  try {
    f();
  } catch (const gts::error& e) {
    if (e.kind() != kind) {
      ++failures;
      std::fprintf(stderr, "%s:%d: wrong error kind %d (want %d): %s\n", file, line,
                   static_cast<int>(e.kind()), static_cast<int>(kind), e.what());
    } else if (needle != nullptr && std::string(e.what()).find(needle) == std::string::npos) {
      ++failures;
      std::fprintf(stderr, "%s:%d: message lacks '%s': %s\n", file, line, needle, e.what());
    }
    return;
  } catch (const std::exception& e) {
    ++failures;
    std::fprintf(stderr, "%s:%d: unexpected exception: %s\n", file, line, e.what());
    return;
  }
  ++failures;
  std::fprintf(stderr, "%s:%d: no error thrown (want kind %d)\n", file, line,
               static_cast<int>(kind));
}

#define EXPECT_ERROR(kind, needle, ...) \
  test::expect_error(                   \
      kind, needle, [&] { __VA_ARGS__; }, __FILE__, __LINE__)

/// Checks that a C API call returns GTSTORAGE_OK; a failure names the call and its message.
#define GTS_OK(call)                                                                    \
  do {                                                                                  \
    const int rc_ = (call);                                                             \
    CHECK_MSG(rc_ == GTSTORAGE_OK, "%s -> %d: %s", #call, rc_, gtstorage_last_error()); \
  } while (0)

/// Checks that a C API call returns status @p want with a message that contains @p needle.
#define GTS_IS(want, needle, call)                                                  \
  do {                                                                              \
    const int rc_ = (call);                                                         \
    CHECK_MSG(rc_ == (want), "%s -> %d (want %d): %s", #call, rc_, (want),          \
              gtstorage_last_error());                                              \
    CHECK_MSG(std::strstr(gtstorage_last_error(), needle) != nullptr,               \
              "%s: message lacks '%s': %s", #call, needle, gtstorage_last_error()); \
  } while (0)

/// Create options of a storage of @p shape in gt:gpu's layout on the GPU, with @p managed host
/// memory, on device @p device_id (-1: the current one); a test sets the fields it varies.
inline gtstorage_create_options gpu_options(const int64_t* shape, int32_t managed,
                                            int32_t device_id = -1, int32_t ndim = 3) {
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  o.ndim = ndim;
  o.shape = shape;
  o.preset = "gt:gpu";
  o.device = GTSTORAGE_DEVICE_GPU;
  o.managed = managed;
  o.device_id = device_id;
  return o;
}

/// A C-contiguous array of the storage's dtype at @p data, of @p shape (@p ndim extents), for
/// gtstorage_copy_to_array and gtstorage_copy_from_array.
inline gtstorage_array c_array(void* data, const int64_t* shape, uint32_t ndim = 3) {
  gtstorage_array a = GTSTORAGE_ARRAY_INIT;
  a.ndim = ndim;
  a.data = data;
  a.shape = shape;
  return a;
}

/// A storage made from @p o; a failed check (and 0) where the library refuses it.
inline gtstorage_handle created(const gtstorage_create_options& o) {
  gtstorage_handle h = 0;
  GTS_OK(gtstorage_create(&o, &h));
  return h;
}

inline int report(const char* name) {
  std::printf("%s: %d checks, %d failures\n", name, checks, failures);
  return failures == 0 ? 0 : 1;
}

/// A random layout for a given shape: where element (0,…,0) sits in a buffer of `bytes`.
struct layout {
  int ndim = 0;
  int64_t shape[gts::max_ndim] = {};
  int64_t strides[gts::max_ndim] = {};
  int64_t offset = 0;  ///< Byte offset of element (0,…,0) in the buffer.
  int64_t bytes = 0;   ///< Buffer size needed.

  [[nodiscard]] gts::strided_array at(std::byte* base, int itemsize) const {
    gts::strided_array a;
    a.data = base + offset;
    a.ndim = ndim;
    for (int d = 0; d < ndim; ++d) {
      a.shape[d] = shape[d];
      a.strides[d] = strides[d];
    }
    a.type = gts::dtype{'u', itemsize};
    return a;
  }
};

/// Options of random_layout().
struct layout_options {
  bool allow_padding = true;
  bool allow_slicing = true;  ///< A view into a larger parent (gaps between rows).
  bool allow_reverse = true;  ///< Negative strides.
  bool allow_step = true;     ///< Every other element.
  int64_t align = 1;          ///< Multiple the element (0,…,0) offset is rounded to.
};

inline layout random_layout(std::mt19937_64& rng, int ndim, const int64_t* shape, int itemsize,
                            const layout_options& o = {}) {
  layout l;
  l.ndim = ndim;
  std::vector<int> perm(static_cast<std::size_t>(ndim));
  for (int d = 0; d < ndim; ++d) perm[static_cast<std::size_t>(d)] = d;
  std::shuffle(perm.begin(), perm.end(), rng);
  // Parent extents: the view's extents, possibly grown (slicing) or doubled (step 2).
  std::vector<int64_t> parent(static_cast<std::size_t>(ndim));
  std::vector<int64_t> step(static_cast<std::size_t>(ndim), 1);
  std::vector<int64_t> start(static_cast<std::size_t>(ndim), 0);
  for (int d = 0; d < ndim; ++d) {
    const auto i = static_cast<std::size_t>(d);
    parent[i] = shape[d];
    if (o.allow_step && rng() % 6 == 0 && shape[d] > 1) step[i] = 2;
    parent[i] = (shape[d] - 1) * step[i] + 1;
    if (o.allow_slicing && rng() % 3 == 0) {
      start[i] = static_cast<int64_t>(rng() % 3);
      parent[i] += start[i] + static_cast<int64_t>(rng() % 3);
    }
  }
  // Strides of the parent in perm order (perm[ndim-1] innermost), innermost padded.
  int64_t s = itemsize;
  for (int k = ndim - 1; k >= 0; --k) {
    const int d = perm[static_cast<std::size_t>(k)];
    const auto i = static_cast<std::size_t>(d);
    l.strides[d] = s * step[i];
    int64_t ext = parent[i];
    if (k == ndim - 1 && o.allow_padding && rng() % 2 == 0) ext += static_cast<int64_t>(rng() % 5);
    s *= ext;
  }
  const int64_t parent_bytes = s;
  int64_t off = 0;
  for (int d = 0; d < ndim; ++d) {
    const auto i = static_cast<std::size_t>(d);
    l.shape[d] = shape[d];
    off += start[i] * (l.strides[d] / step[i]);
    if (o.allow_reverse && rng() % 4 == 0) {
      off += (shape[d] - 1) * l.strides[d];
      l.strides[d] = -l.strides[d];
    }
  }
  // A little slack in front so the origin need not be at the buffer start.
  const int64_t lead = static_cast<int64_t>(rng() % 3) * o.align;
  l.offset = lead + off;
  l.bytes = lead + parent_bytes + 64;
  return l;
}

/// Calls f(linear C-order index, byte offset from element (0,…,0)) for every element of an
/// array of @p ndim dimensions, @p shape elements and @p strides bytes.
template <class F>
void for_each_offset(int ndim, const int64_t* shape, const int64_t* strides, F&& f) {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= shape[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = i;
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      off += (r % shape[d]) * strides[d];
      r /= shape[d];
    }
    f(i, off);
  }
}

/// Calls f(linear C-order index, byte offset in the buffer) for every element of a layout.
template <class F>
void for_each_element(const layout& l, F&& f) {
  for_each_offset(l.ndim, l.shape, l.strides,
                  [&](int64_t i, int64_t off) { f(i, l.offset + off); });
}

/// Calls f(linear C-order index, element address) for every element of @p a.
template <class F>
void for_each_element(const gts::strided_array& a, F&& f) {
  for_each_offset(a.ndim, a.shape, a.strides, [&](int64_t i, int64_t off) { f(i, a.data + off); });
}

/// Byte b of element i of the reference pattern.
inline unsigned char pattern_byte(int64_t i, int b, unsigned seed) {
  uint64_t x =
      static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(b) * 131u + seed;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return static_cast<unsigned char>(x);
}

/// Writes the pattern into the elements of @p l in @p buf.
inline void write_pattern(std::byte* buf, const layout& l, int itemsize, unsigned seed) {
  for_each_element(l, [&](int64_t i, int64_t off) {
    for (int b = 0; b < itemsize; ++b) {
      buf[off + b] = static_cast<std::byte>(pattern_byte(i, b, seed));
    }
  });
}

/// Checks that the elements of @p l in @p buf hold the pattern and every other byte of the
/// buffer still equals @p sentinel. Returns the number of bad bytes (0 = good).
inline int64_t verify(const std::byte* buf, const layout& l, int itemsize, unsigned seed,
                      unsigned char sentinel) {
  std::vector<char> is_elem(static_cast<std::size_t>(l.bytes), 0);
  int64_t bad = 0;
  for_each_element(l, [&](int64_t i, int64_t off) {
    for (int b = 0; b < itemsize; ++b) {
      is_elem[static_cast<std::size_t>(off + b)] = 1;
      if (static_cast<unsigned char>(buf[off + b]) != pattern_byte(i, b, seed)) ++bad;
    }
  });
  for (int64_t k = 0; k < l.bytes; ++k) {
    if (!is_elem[static_cast<std::size_t>(k)] && static_cast<unsigned char>(buf[k]) != sentinel) {
      ++bad;
    }
  }
  return bad;
}

/// Checks that every element of @p l holds @p value and every other byte is @p sentinel.
inline int64_t verify_fill(const std::byte* buf, const layout& l, int itemsize, const void* value,
                           unsigned char sentinel) {
  std::vector<char> is_elem(static_cast<std::size_t>(l.bytes), 0);
  int64_t bad = 0;
  for_each_element(l, [&](int64_t, int64_t off) {
    for (int b = 0; b < itemsize; ++b) {
      is_elem[static_cast<std::size_t>(off + b)] = 1;
      if (buf[off + b] != static_cast<const std::byte*>(value)[b]) ++bad;
    }
  });
  for (int64_t k = 0; k < l.bytes; ++k) {
    if (!is_elem[static_cast<std::size_t>(k)] && static_cast<unsigned char>(buf[k]) != sentinel) {
      ++bad;
    }
  }
  return bad;
}

}  // namespace test
