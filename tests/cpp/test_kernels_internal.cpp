// Internal tests of the host kernels (fill, copy, conversions) and the host allocator. They call
// the C++ internals directly (compiled into this executable, since the library exports only
// gtstorage_*), so every strategy and vector level can be forced and checked against a
// reference element loop, including bytes outside the destination that must stay untouched.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "common/errors.hpp"
#include "kernels/kernels.hpp"
#include "kernels/kernels_internal.hpp"
#include "memory/host_allocator.hpp"

// cmocka last: it defines a fail() macro that would clash with gts::fail in errors.hpp.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>

#include "cmocka_main.h"
}

using gts::dtype;
using gts::strided_array;
namespace k = gts::kernels;
namespace kd = gts::kernels::detail;

namespace {

const dtype all_dtypes[] = {{'b', 1}, {'i', 1}, {'i', 2}, {'i', 4}, {'i', 8}, {'u', 1}, {'u', 2},
                            {'u', 4}, {'u', 8}, {'f', 2}, {'f', 4}, {'f', 8}, {'c', 8}, {'c', 16}};

std::mt19937_64& rng() {
  static std::mt19937_64 r(12345);
  return r;
}
int64_t rnd(int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng());
}

// ------------------------------------------------------------------ layouts and buffers

// A strided array inside an owned byte buffer with guard bytes around and between elements.
struct test_array {
  std::vector<unsigned char> buf;
  strided_array a;
};

// Sizes r.buf for @p span bytes with 128 guard bytes (0xA5) on each side; returns the address
// @p misalign bytes after the first 64-byte boundary past the front guard.
uintptr_t guarded_base(test_array& r, int64_t span, int64_t misalign) {
  const int64_t guard = 128;
  r.buf.assign(static_cast<std::size_t>(span + 2 * guard + 64), 0xA5);
  const uintptr_t base = reinterpret_cast<uintptr_t>(r.buf.data()) + guard;
  return (base + 63) / 64 * 64 + static_cast<uintptr_t>(misalign);
}

// Builds an array of @p shape with memory order @p order (order[0] = outermost dim), optional
// padding of each dimension, optional reversed dimensions and a base offset of @p misalign
// bytes from a 64-byte boundary.
test_array make_array(int nd, const int64_t* shape, dtype t, const int* order, bool pad, bool flips,
                      int64_t misalign) {
  test_array r;
  r.a.ndim = nd;
  r.a.type = t;
  int64_t stride = t.itemsize * ((pad && rnd(0, 4) == 0) ? 2 : 1);
  int64_t strides[gts::max_ndim] = {};
  for (int k2 = nd - 1; k2 >= 0; --k2) {
    const int d = order[k2];
    strides[d] = stride;
    const int64_t extra = pad ? rnd(0, 2) : 0;
    stride *= (shape[d] + extra);
  }
  const uintptr_t base = guarded_base(r, std::max<int64_t>(stride, t.itemsize), misalign);
  int64_t off = 0;
  for (int d = 0; d < nd; ++d) {
    r.a.shape[d] = shape[d];
    r.a.strides[d] = strides[d];
    if (flips && shape[d] > 1 && rnd(0, 2) == 0) {
      off += (shape[d] - 1) * strides[d];
      r.a.strides[d] = -strides[d];
    }
  }
  r.a.data = reinterpret_cast<std::byte*>(base) + off;
  return r;
}

void random_bytes(test_array& t) {
  for (auto& b : t.buf) b = static_cast<unsigned char>(rng()());
}

// Visits the byte offset (from data) of every element in C index order.
template <class F>
void for_each_element(const strided_array& a, F&& f) {
  for (int d = 0; d < a.ndim; ++d) {
    if (a.shape[d] == 0) return;
  }
  int64_t idx[gts::max_ndim] = {};
  int64_t off = 0;
  for (;;) {
    f(off);
    int d = a.ndim - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < a.shape[d]) {
        off += a.strides[d];
        break;
      }
      off -= a.strides[d] * (a.shape[d] - 1);
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Reference copy: one convert_element per element, in a copy of the destination buffer.
std::vector<unsigned char> reference_copy(const test_array& dst, const test_array& src) {
  std::vector<unsigned char> out = dst.buf;
  const std::ptrdiff_t shift = out.data() - dst.buf.data();
  std::vector<int64_t> soffs;
  for_each_element(src.a, [&](int64_t o) { soffs.push_back(o); });
  std::size_t i = 0;
  for_each_element(dst.a, [&](int64_t o) {
    k::convert_element(dst.a.data + shift + o, dst.a.type, src.a.data + soffs[i++], src.a.type);
  });
  return out;
}

void expect_equal_buffers(const std::vector<unsigned char>& got,
                          const std::vector<unsigned char>& want, const std::string& what) {
  if (got == want) return;
  std::size_t first = 0;
  while (first < got.size() && got[first] == want[first]) ++first;
  fail_msg("%s: buffers differ first at byte %zu of %zu (got 0x%02x want 0x%02x)", what.c_str(),
           first, got.size(), got[first], want[first]);
}

std::string describe(const strided_array& a) {
  std::string s = a.type.typestr() + " shape(";
  for (int d = 0; d < a.ndim; ++d) s += std::to_string(a.shape[d]) + (d + 1 < a.ndim ? "," : "");
  s += ") strides(";
  for (int d = 0; d < a.ndim; ++d) {
    s += std::to_string(a.strides[d]) + (d + 1 < a.ndim ? "," : "");
  }
  return s + ") @" + std::to_string(reinterpret_cast<uintptr_t>(a.data) % 64);
}

// Runs k::copy on (dst, src) and compares the whole destination buffer with the reference.
void check_copy(test_array& dst, const test_array& src, const std::string& what,
                k::store_policy stores = k::store_policy::automatic) {
  const std::vector<unsigned char> want = reference_copy(dst, src);
  k::copy(dst.a, src.a, stores);
  expect_equal_buffers(dst.buf, want, what + ": " + describe(dst.a) + " <- " + describe(src.a));
}

// All vector levels this CPU supports.
std::vector<kd::simd_level> levels() {
  std::vector<kd::simd_level> v;
  for (auto l : {kd::simd_level::generic, kd::simd_level::sse2, kd::simd_level::avx2,
                 kd::simd_level::avx512}) {
    if (kd::simd_for(l) != nullptr) v.push_back(l);
  }
  return v;
}

void set_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

// Restores defaults after each test.
int teardown(void**) {
  kd::set_streaming_threshold(-1);
  set_threads(2);
  kd::set_simd_level(kd::simd_level::avx512) || kd::set_simd_level(kd::simd_level::avx2) ||
      kd::set_simd_level(kd::simd_level::generic);
  return 0;
}

template <class T>
T read_as(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class To, class From>
To conv(From x, dtype to, dtype from) {
  To out{};
  k::convert_element(&out, to, &x, from);
  return out;
}

const dtype b1{'b', 1}, i1{'i', 1}, i2{'i', 2}, i4{'i', 4}, i8{'i', 8}, u1{'u', 1}, u2{'u', 2},
    u4{'u', 4}, u8{'u', 8}, f2{'f', 2}, f4{'f', 4}, f8{'f', 8}, c8{'c', 8}, c16{'c', 16};

// ------------------------------------------------------------------ tests: half floats

void test_half_roundtrip_all(void**) {
  // Every half value survives half -> double -> half bit-exactly (NaN payloads included).
  for (uint32_t h = 0; h < 65536; ++h) {
    const double d = kd::half_to_double(static_cast<uint16_t>(h));
    const uint16_t back = kd::double_to_half(d);
    if (back != h) fail_msg("half 0x%04x -> %g -> 0x%04x", h, d, back);
  }
}

void test_half_rounding_midpoints(void**) {
  // Between consecutive finite halves: the exact midpoint rounds to the even one, anything a
  // hair off rounds to the nearer one. Covers subnormals and the largest finite value.
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    const double lo = kd::half_to_double(static_cast<uint16_t>(h));
    const double hi = kd::half_to_double(static_cast<uint16_t>(h + 1));
    const double mid = (lo + hi) / 2;
    const uint16_t even = (h % 2 == 0) ? static_cast<uint16_t>(h) : static_cast<uint16_t>(h + 1);
    assert_int_equal(kd::double_to_half(mid), even);
    assert_int_equal(kd::double_to_half(std::nextafter(mid, 0.0)), h);
    assert_int_equal(kd::double_to_half(std::nextafter(mid, 1e9)), h + 1);
    assert_int_equal(kd::double_to_half(-mid), 0x8000 | even);
  }
}

void test_half_special_values(void**) {
  assert_int_equal(kd::double_to_half(1.0), 0x3c00);
  assert_int_equal(kd::double_to_half(-2.0), 0xc000);
  assert_int_equal(kd::double_to_half(65504.0), 0x7bff);
  assert_int_equal(kd::double_to_half(65519.99), 0x7bff);
  assert_int_equal(kd::double_to_half(65520.0), 0x7c00);  // rounds up to infinity
  assert_int_equal(kd::double_to_half(1e300), 0x7c00);
  assert_int_equal(kd::double_to_half(-1e300), 0xfc00);
  assert_int_equal(kd::double_to_half(HUGE_VAL), 0x7c00);
  assert_int_equal(kd::double_to_half(-HUGE_VAL), 0xfc00);
  assert_int_equal(kd::double_to_half(std::ldexp(1.0, -24)), 0x0001);  // smallest subnormal
  assert_int_equal(kd::double_to_half(std::ldexp(1.0, -25)), 0x0000);  // tie -> even (zero)
  assert_int_equal(kd::double_to_half(std::ldexp(1.5, -25)), 0x0001);
  assert_int_equal(kd::double_to_half(std::ldexp(1.0, -14)), 0x0400);  // smallest normal
  assert_int_equal(kd::double_to_half(5e-324), 0x0000);                // double subnormal
  assert_int_equal(kd::double_to_half(-0.0), 0x8000);
  const uint16_t qnan = kd::double_to_half(std::numeric_limits<double>::quiet_NaN());
  assert_int_equal(qnan & 0x7c00, 0x7c00);
  assert_true((qnan & 0x3ff) != 0);
  assert_true(std::isnan(kd::half_to_double(0x7e00)));
  assert_true(std::isinf(kd::half_to_double(0x7c00)));
  assert_true(kd::half_to_double(0x0001) == std::ldexp(1.0, -24));
  assert_true(kd::half_to_double(0x8000) == 0.0 && std::signbit(kd::half_to_double(0x8000)));
}

// ------------------------------------------------------------------ tests: conversions

void test_convert_float_to_int(void**) {
  // Truncation toward zero.
  assert_int_equal(conv<int8_t>(3.9, i1, f8), 3);
  assert_int_equal(conv<int8_t>(-3.9, i1, f8), -3);
  assert_int_equal(conv<int32_t>(-2.5, i4, f8), -2);
  assert_int_equal(conv<int64_t>(1e15 + 0.5, i8, f8), 1000000000000000LL);
  assert_int_equal(conv<uint16_t>(65535.7f, u2, f4), 65535);
  assert_int_equal(conv<int32_t>(float(-7.99), i4, f4), -7);
  // Out of range and NaN: what NumPy gives on x86-64 (cvtt* "integer indefinite").
  const double nan = std::numeric_limits<double>::quiet_NaN();
  assert_int_equal(conv<int8_t>(300.0, i1, f8), 44);  // wraps through int32
  assert_int_equal(conv<int8_t>(nan, i1, f8), 0);
  assert_int_equal(conv<int8_t>(1e10, i1, f8), 0);
  assert_true(conv<int32_t>(nan, i4, f8) == std::numeric_limits<int32_t>::min());
  assert_true(conv<int32_t>(1e10, i4, f8) == std::numeric_limits<int32_t>::min());
  assert_true(conv<int64_t>(nan, i8, f8) == std::numeric_limits<int64_t>::min());
  assert_true(conv<int64_t>(HUGE_VAL, i8, f8) == std::numeric_limits<int64_t>::min());
  assert_true(conv<int64_t>(-1e19, i8, f8) == std::numeric_limits<int64_t>::min());
  assert_int_equal(conv<uint8_t>(-1.0, u1, f8), 255);
  assert_int_equal(conv<uint8_t>(256.0, u1, f8), 0);
  assert_int_equal(conv<uint32_t>(-1.0, u4, f8), 0xffffffffu);
  assert_int_equal(conv<uint32_t>(4294967301.0, u4, f8), 5u);  // via int64, then wraps
  assert_true(conv<uint64_t>(1e19, u8, f8) == 10000000000000000000ULL);
  assert_true(conv<uint64_t>(-1.0, u8, f8) == ~uint64_t(0));
  assert_true(conv<uint64_t>(nan, u8, f8) == (uint64_t(1) << 63));
  // Half source: through its exact value.
  assert_int_equal(conv<int32_t>(uint16_t(0x7bff), i4, f2), 65504);
  assert_int_equal(conv<int16_t>(uint16_t(0xc100), i2, f2), -2);  // -2.5 -> -2
}

void test_convert_bool(void**) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  assert_int_equal(conv<uint8_t>(nan, b1, f8), 1);
  assert_int_equal(conv<uint8_t>(0.0, b1, f8), 0);
  assert_int_equal(conv<uint8_t>(-0.0, b1, f8), 0);
  assert_int_equal(conv<uint8_t>(1e-300, b1, f8), 1);
  assert_int_equal(conv<uint8_t>(uint16_t(0x8000), b1, f2), 0);  // -0 half
  assert_int_equal(conv<uint8_t>(uint16_t(0x0001), b1, f2), 1);
  assert_int_equal(conv<uint8_t>(int64_t(-5), b1, i8), 1);
  assert_int_equal(conv<uint8_t>(int16_t(256), b1, i2), 1);  // not the low byte
  const float c0[2] = {0.0f, 0.0f}, ci[2] = {0.0f, 1.0f};
  uint8_t out = 7;
  k::convert_element(&out, b1, c0, c8);
  assert_int_equal(out, 0);
  k::convert_element(&out, b1, ci, c8);
  assert_int_equal(out, 1);
  // From bool: any non-zero byte is true -> 1.
  assert_int_equal(conv<int32_t>(uint8_t(2), i4, b1), 1);
  assert_true(conv<double>(uint8_t(0xff), f8, b1) == 1.0);
  assert_int_equal(conv<uint16_t>(uint8_t(1), f2, b1), 0x3c00);
  assert_int_equal(conv<uint8_t>(uint8_t(9), b1, b1), 9);  // same dtype: bitwise
}

void test_convert_int_wrap_and_float(void**) {
  assert_int_equal(conv<uint16_t>(int64_t(-1), u2, i8), 65535);
  assert_int_equal(conv<int8_t>(~uint64_t(0), i1, u8), -1);
  assert_int_equal(conv<int8_t>(int32_t(300), i1, i4), 44);
  assert_true(conv<int64_t>(uint32_t(4000000000u), i8, u4) == 4000000000LL);
  assert_true(conv<double>(~uint64_t(0), f8, u8) == 18446744073709551616.0);
  assert_true(conv<float>(int32_t(16777217), f4, i4) == 16777216.0f);  // round to nearest even
  assert_true(std::isinf(conv<float>(1e300, f4, f8)));
  assert_true(std::isnan(conv<float>(std::nan(""), f4, f8)));
  assert_int_equal(conv<uint16_t>(1e6, f2, f8), 0x7c00);
  assert_int_equal(conv<uint16_t>(int32_t(-70000), f2, i4), 0xfc00);
  assert_int_equal(conv<uint16_t>(int64_t(2049), f2, i8), 0x6800);  // 2049 -> 2048 (even)
  assert_true(std::isnan(conv<float>(uint16_t(0x7e00), f4, f2)));
  assert_true(conv<double>(uint16_t(0x3555), f8, f2) == kd::half_to_double(0x3555));
}

void test_convert_complex(void**) {
  const double z[2] = {1.5, -2.5};
  double re = 0;
  k::convert_element(&re, f8, z, c16);
  assert_true(re == 1.5);
  int32_t ir = 0;
  k::convert_element(&ir, i4, z, c16);
  assert_int_equal(ir, 1);
  float cz[2] = {0, 0};
  k::convert_element(cz, c8, z, c16);
  assert_true(cz[0] == 1.5f && cz[1] == -2.5f);
  double out[2] = {9, 9};
  const int16_t s = -7;
  k::convert_element(out, c16, &s, i2);
  assert_true(out[0] == -7.0 && out[1] == 0.0);
  const uint16_t h = 0x3c00;
  k::convert_element(out, c16, &h, f2);
  assert_true(out[0] == 1.0 && out[1] == 0.0);
  uint16_t hout = 0;
  k::convert_element(&hout, f2, z, c16);
  assert_int_equal(hout, 0x3e00);  // 1.5
}

void test_convert_unsupported(void**) {
  double v = 1;
  double out = 0;
  try {
    k::convert_element(&out, dtype{'f', 16}, &v, f8);
    fail_msg("expected an exception");
  } catch (const gts::error& e) {
    assert_int_equal(static_cast<int>(e.kind()), static_cast<int>(gts::error_kind::unsupported));
    assert_non_null(std::strstr(e.what(), "<f16"));
  }
}

// ------------------------------------------------------------------ tests: copy

// Every pair of memory orders of a 3-D array, same dtype, for each vector level, streaming on
// and off, with tile-unfriendly extents.
void test_copy_all_3d_permutations(void**) {
  const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  const int64_t shapes[][3] = {{13, 17, 19}, {16, 24, 40}, {9, 8, 33}, {1, 37, 11}};
  for (auto level : levels()) {
    assert_true(kd::set_simd_level(level));
    for (int64_t thr : {int64_t(-1), int64_t(0)}) {
      kd::set_streaming_threshold(thr);
      for (const dtype t : {f8, f4, i2, c16, u1}) {
        for (const auto& shape : shapes) {
          for (const auto& ps : perms) {
            for (const auto& pd : perms) {
              test_array src = make_array(3, shape, t, ps, false, false, 0);
              test_array dst = make_array(3, shape, t, pd, false, false, 0);
              random_bytes(src);
              check_copy(
                  dst, src,
                  std::string("perm level ") + kd::simd().name + " nt=" + std::to_string(thr));
            }
          }
        }
      }
    }
  }
}

// Destination rows a multiple of 64 bytes apart but a base that is not line-aligned: the vector
// transposes peel columns until rows are aligned for non-temporal stores; a base that is not
// even element-aligned must fall back to ordinary stores.
void test_copy_nt_peel(void**) {
  const int64_t shape[3] = {20, 35, 48};
  const int c_order[3] = {0, 1, 2}, f_order[3] = {2, 1, 0};
  kd::set_streaming_threshold(0);
  for (auto level : levels()) {
    assert_true(kd::set_simd_level(level));
    for (const dtype t : {f8, f4}) {
      for (int64_t mis = 0; mis < 64; mis += t.itemsize) {
        for (int64_t odd : {int64_t(0), int64_t(1), int64_t(3)}) {
          if (odd != 0 && mis != 8) continue;
          test_array src = make_array(3, shape, t, f_order, false, false, (mis * 3 + odd) % 64);
          test_array dst = make_array(3, shape, t, c_order, false, false, mis + odd);
          random_bytes(src);
          check_copy(dst, src, "peel mis=" + std::to_string(mis + odd));
        }
      }
    }
  }
}

// A 3-D array (i, j, k) with the given byte strides (all positive) in a guarded buffer, its
// first element @p misalign bytes after a 64-byte boundary.
test_array make_strided(const int64_t* shape, const int64_t* strides, dtype t, int64_t misalign) {
  test_array r;
  r.a.ndim = 3;
  r.a.type = t;
  int64_t span = t.itemsize;
  for (int d = 0; d < 3; ++d) {
    r.a.shape[d] = shape[d];
    r.a.strides[d] = strides[d];
    span += (shape[d] - 1) * strides[d];
  }
  r.a.data = reinterpret_cast<std::byte*>(guarded_base(r, span, misalign));
  return r;
}

// F order -> K fastest with streaming stores into destination rows that start at different
// offsets within their cache lines (row pitch not a multiple of 64 bytes: 136 float32 = 544
// bytes, or padded), which the vector transposes handle by taking a whole line per row from a
// two-block tile. Row lengths around the block edges (2, 2.x and 3.x blocks), rows that are not a
// multiple of the block, several planes whose pitch shifts the phase again, and bases off a line:
// every element and every guard or padding byte is compared.
void test_copy_windowed_rows(void**) {
  kd::set_streaming_threshold(0);
  for (auto level : levels()) {
    assert_true(kd::set_simd_level(level));
    for (const dtype t : {f8, f4}) {
      const int64_t sz = t.itemsize, cols = 64 / sz;
      for (const int64_t nk :
           {2 * cols, 2 * cols + 1, 3 * cols - 1, 3 * cols + 5, 136 / (sz / 4)}) {
        for (const int64_t row_pad : {int64_t(0), int64_t(1), int64_t(3)}) {
          for (const int64_t ni : {cols, cols + 3, 2 * cols + 5}) {
            for (const int64_t nj : {int64_t(1), int64_t(3)}) {
              for (const int64_t mis : {int64_t(0), sz, 40 / sz * sz}) {
                const int64_t shape[3] = {ni, nj, nk};
                const int64_t fs[3] = {sz, ni * sz, ni * nj * sz};
                // K fastest, then J (pitch nk + row_pad elements, plus one more between planes).
                const int64_t row = (nk + row_pad) * sz;
                const int64_t ks[3] = {nj * row + row_pad * sz, row, sz};
                test_array src = make_strided(shape, fs, t, 0);
                test_array dst = make_strided(shape, ks, t, mis);
                random_bytes(src);
                check_copy(dst, src, std::string("windowed level ") + kd::simd().name);
                random_bytes(dst);
                check_copy(dst, src,
                           std::string("windowed (streaming policy) level ") + kd::simd().name,
                           k::store_policy::streaming);
              }
            }
          }
        }
      }
    }
  }
}

// float32 F order -> K fastest where the destination rows start at few offsets in their 4 KiB
// pages (row pitch modulo 4 KiB a multiple of 512 bytes, as GT4Py's rows of 128 floats): the
// vector transposes then write two lines per row per step (32 source rows at a time), ending
// with strips of one block and an element loop. Row lengths of whole double strips, a double
// strip plus a single one, plus a tail, shorter than a double strip; bases off a line (peeled
// columns); pitches of 512 bytes, 4 KiB and 4 KiB + 512 bytes, and 4 KiB + 64 bytes (one line
// per step) beside them. Every element and every guard or padding byte is compared.
void test_copy_wide_strips(void**) {
  for (auto level : levels()) {
    assert_true(kd::set_simd_level(level));
    for (int64_t thr : {int64_t(-1), int64_t(0)}) {
      kd::set_streaming_threshold(thr);
      for (const int64_t nk : {int64_t(32), int64_t(64), int64_t(48), int64_t(69), int64_t(31)}) {
        for (const int64_t pitch_extra : {int64_t(0), int64_t(3584), int64_t(4096), int64_t(64)}) {
          for (const int64_t mis : {int64_t(0), int64_t(8), int64_t(60)}) {
            const int64_t ni = 19, nj = 2, sz = 4;
            const int64_t shape[3] = {ni, nj, nk};
            const int64_t fs[3] = {sz, ni * sz, ni * nj * sz};
            // I rows of nj * nk floats, then rounded up to 512 bytes, plus pitch_extra.
            const int64_t pitch = (nj * nk * sz + 511) / 512 * 512 + pitch_extra;
            const int64_t ks[3] = {pitch, nk * sz, sz};
            test_array src = make_strided(shape, fs, f4, 0);
            test_array dst = make_strided(shape, ks, f4, mis);
            random_bytes(src);
            check_copy(
                dst, src,
                std::string("wide strips level ") + kd::simd().name + " nt=" + std::to_string(thr));
          }
        }
      }
    }
  }
}

// Random ranks (0-6 and up to 16), extents, paddings, reversed dims, misaligned bases; stores
// streamed by the size threshold (set to 0), by the caller's store_policy::streaming (small
// copies, default threshold), or not at all. The whole destination buffer is compared, padding
// included, so a streamed line that reaches outside the array fails.
void test_copy_random_layouts_same_dtype(void**) {
  for (auto level : levels()) {
    assert_true(kd::set_simd_level(level));
    for (int iter = 0; iter < 400; ++iter) {
      const int64_t regime = rnd(0, 2);
      kd::set_streaming_threshold(regime == 0 ? 0 : -1);
      const auto stores = regime == 1 ? k::store_policy::streaming : k::store_policy::automatic;
      const dtype t = all_dtypes[rnd(0, 13)];
      const int nd = iter % 25 == 0 ? static_cast<int>(rnd(7, 16)) : static_cast<int>(rnd(0, 6));
      int64_t shape[gts::max_ndim];
      int64_t total = 1;
      for (int d = 0; d < nd; ++d) {
        // At most ~40k elements, so high ranks get many extents of 1 and 2.
        const int64_t cap = std::max<int64_t>(1, std::min<int64_t>(nd > 6 ? 3 : 24, 40000 / total));
        shape[d] = rnd(1, cap);
        total *= shape[d];
      }
      int ps[gts::max_ndim], pd[gts::max_ndim];
      for (int d = 0; d < nd; ++d) ps[d] = pd[d] = d;
      std::shuffle(ps, ps + nd, rng());
      std::shuffle(pd, pd + nd, rng());
      test_array src = make_array(nd, shape, t, ps, rnd(0, 1), rnd(0, 1), rnd(0, 7) * t.itemsize);
      test_array dst =
          make_array(nd, shape, t, pd, rnd(0, 1), rnd(0, 1), rnd(0, 3) ? 0 : rnd(0, 63));
      random_bytes(src);
      check_copy(
          dst, src,
          std::string("random level ") + kd::simd().name + " regime " + std::to_string(regime),
          stores);
    }
  }
}

// Every (to, from) dtype pair through transposing, strided and reversed layouts.
void test_copy_conversions_all_pairs(void**) {
  const int64_t shape[3] = {7, 11, 10};
  const int c_order[3] = {0, 1, 2}, f_order[3] = {2, 1, 0};
  for (const dtype to : all_dtypes) {
    for (const dtype from : all_dtypes) {
      for (int variant = 0; variant < 3; ++variant) {
        test_array src = make_array(3, shape, from, variant == 1 ? f_order : c_order, variant == 2,
                                    variant == 2, 0);
        test_array dst = make_array(3, shape, to, c_order, variant == 2, variant == 2, 0);
        random_bytes(src);
        check_copy(dst, src, "conversion");
      }
    }
  }
}

// Arrays above the parallel threshold, one and two threads, streaming on: thread shares and
// non-temporal stores must still produce the exact copy.
void test_copy_large_threaded(void**) {
  const int64_t shape[3] = {97, 130, 21};  // 2 MB of f8, odd extents
  const int perms[3][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}};
  for (int threads : {1, 2}) {
    set_threads(threads);
    for (auto level : levels()) {
      assert_true(kd::set_simd_level(level));
      kd::set_streaming_threshold(0);
      for (const dtype t : {f8, f4, f2}) {
        for (const auto& ps : perms) {
          for (const auto& pd : perms) {
            if (t != f8 && &ps == &pd) continue;  // keep the run short: layout changes only
            test_array src = make_array(3, shape, t, ps, false, false, 0);
            test_array dst = make_array(3, shape, t, pd, false, true, 0);
            random_bytes(src);
            check_copy(dst, src, "threads=" + std::to_string(threads));
          }
        }
      }
      // A contiguous 1-D copy split between threads at page boundaries.
      const int64_t n[1] = {300001};
      const int o[1] = {0};
      test_array src = make_array(1, n, f8, o, false, false, 8);
      test_array dst = make_array(1, n, f8, o, false, false, 24);
      random_bytes(src);
      check_copy(dst, src, "1-D threaded");
    }
  }
}

void test_copy_zero_and_scalar(void**) {
  // 0-d arrays copy one element; arrays with a zero extent copy nothing (null data allowed).
  double s = 2.5;
  int32_t d = 0;
  strided_array src, dst;
  src.ndim = dst.ndim = 0;
  src.type = f8;
  dst.type = i4;
  src.data = reinterpret_cast<std::byte*>(&s);
  dst.data = reinterpret_cast<std::byte*>(&d);
  k::copy(dst, src);
  assert_int_equal(d, 2);
  strided_array e1, e2;
  e1.ndim = e2.ndim = 2;
  e1.shape[0] = e2.shape[0] = 3;
  e1.shape[1] = e2.shape[1] = 0;
  k::copy(e1, e2);
  k::fill(e1, &s);
}

void test_copy_errors(void**) {
  double buf[8] = {};
  strided_array a, b;
  a.ndim = b.ndim = 1;
  a.shape[0] = 4;
  b.shape[0] = 5;
  a.strides[0] = b.strides[0] = 8;
  a.data = b.data = reinterpret_cast<std::byte*>(buf);
  auto expect = [](gts::error_kind kind, const char* needle, auto&& f) {
    try {
      f();
      fail_msg("expected an exception mentioning '%s'", needle);
    } catch (const gts::error& e) {
      assert_int_equal(static_cast<int>(e.kind()), static_cast<int>(kind));
      if (std::strstr(e.what(), needle) == nullptr)
        fail_msg("message '%s' lacks '%s'", e.what(), needle);
    }
  };
  expect(gts::error_kind::shape_mismatch, "extent", [&] { k::copy(a, b); });
  b.ndim = 2;
  expect(gts::error_kind::shape_mismatch, "dimensions", [&] { k::copy(a, b); });
  b.ndim = 1;
  b.shape[0] = -4;
  a.shape[0] = -4;
  expect(gts::error_kind::invalid_argument, "negative", [&] { k::copy(a, b); });
  a.shape[0] = b.shape[0] = 4;
  a.data = nullptr;
  expect(gts::error_kind::invalid_argument, "null", [&] { k::copy(a, b); });
  expect(gts::error_kind::invalid_argument, "null", [&] { k::fill(a, buf); });
  a.data = reinterpret_cast<std::byte*>(buf);
  expect(gts::error_kind::invalid_argument, "value", [&] { k::fill(a, nullptr); });
  a.ndim = 17;
  expect(gts::error_kind::invalid_argument, "ndim", [&] { k::fill(a, buf); });
  a.ndim = 1;
  a.type = dtype{'f', 3};
  expect(gts::error_kind::unsupported, "item size", [&] { k::fill(a, buf); });
  a.type = dtype{'x', 8};
  expect(gts::error_kind::unsupported, "conversion", [&] { k::copy(a, b); });
  a.type = f8;
  a.ndim = b.ndim = 3;
  a.shape[0] = a.shape[1] = a.shape[2] = b.shape[0] = b.shape[1] = b.shape[2] = int64_t(1) << 40;
  expect(gts::error_kind::overflow, "overflow", [&] { k::copy(a, b); });
}

void test_copy_onto_itself(void**) {
  double buf[6] = {1, 2, 3, 4, 5, 6};
  strided_array a;
  a.ndim = 1;
  a.shape[0] = 6;
  a.strides[0] = 8;
  a.type = f8;
  a.data = reinterpret_cast<std::byte*>(buf);
  k::copy(a, a);
  for (int i = 0; i < 6; ++i) assert_true(buf[i] == i + 1);
}

// ------------------------------------------------------------------ tests: fill

void check_fill(test_array& t, const void* value, const std::string& what) {
  std::vector<unsigned char> want = t.buf;
  const std::ptrdiff_t shift = want.data() - t.buf.data();
  for_each_element(t.a, [&](int64_t o) {
    std::memcpy(t.a.data + shift + o, value, static_cast<std::size_t>(t.a.type.itemsize));
  });
  k::fill(t.a, value);
  expect_equal_buffers(t.buf, want, what + ": " + describe(t.a));
}

void test_fill_random_layouts(void**) {
  for (auto level : levels()) {
    assert_true(kd::set_simd_level(level));
    for (int iter = 0; iter < 600; ++iter) {
      kd::set_streaming_threshold(rnd(0, 1) ? 0 : -1);
      const dtype t = all_dtypes[rnd(0, 13)];
      const int nd = static_cast<int>(rnd(0, 5));
      int64_t shape[gts::max_ndim];
      int64_t total = 1;
      for (int d = 0; d < nd; ++d) {
        shape[d] = rnd(1, total > 20000 ? 3 : 40);
        total *= shape[d];
      }
      int order[gts::max_ndim];
      for (int d = 0; d < nd; ++d) order[d] = d;
      std::shuffle(order, order + nd, rng());
      // Misaligned bases, including ones that are not a multiple of the item size.
      test_array a = make_array(nd, shape, t, order, rnd(0, 1), rnd(0, 1), rnd(0, 63));
      unsigned char value[16];
      for (auto& v : value) v = static_cast<unsigned char>(rng()());
      if (rnd(0, 3) == 0) std::memset(value, 0, sizeof value);  // the memset path
      check_fill(a, value, std::string("fill level ") + kd::simd().name);
    }
  }
}

void test_fill_large_threaded(void**) {
  for (int threads : {1, 2}) {
    set_threads(threads);
    for (auto level : levels()) {
      assert_true(kd::set_simd_level(level));
      for (int64_t thr : {int64_t(0), int64_t(-1)}) {
        kd::set_streaming_threshold(thr);
        const int64_t shape[3] = {131, 67, 33};
        const int order[3] = {0, 1, 2};
        for (const dtype t : {f8, c16, u1, f2}) {
          test_array a = make_array(3, shape, t, order, true, true, 16);
          const unsigned char value[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
          check_fill(a, value, "threads=" + std::to_string(threads));
        }
        const int64_t n[1] = {1 << 20};
        const int o[1] = {0};
        test_array a = make_array(1, n, f4, o, false, false, 4);
        const float v = 3.5f;
        check_fill(a, &v, "1-D threaded");
      }
    }
  }
}

void test_thread_count(void**) {
  set_threads(1);
  assert_int_equal(k::thread_count(), 1);
#ifdef _OPENMP
  set_threads(2);
  assert_int_equal(k::thread_count(), 2);
  int inner = -1;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    inner = k::thread_count();  // nested parallelism is off: kernels stay on their thread
  }
  assert_int_equal(inner, 1);
#endif
}

// ------------------------------------------------------------------ tests: allocator

void test_alloc_small_and_large(void**) {
  for (std::size_t bytes : {std::size_t(0), std::size_t(1), std::size_t(100), std::size_t(4096),
                            (std::size_t(2) << 20) - 1}) {
    for (std::size_t align : {std::size_t(1), std::size_t(32), std::size_t(64), std::size_t(4096),
                              std::size_t(65536)}) {
      gts::host_block b = gts::allocate_host(bytes, align);
      assert_non_null(b.ptr);
      assert_true(b.bytes >= bytes);
      assert_int_equal(reinterpret_cast<uintptr_t>(b.ptr) % align, 0);
      assert_false(b.mapped);
      std::memset(b.ptr, 0x5a, bytes);
      gts::free_host(b);
    }
  }
  for (std::size_t bytes : {std::size_t(2) << 20, (std::size_t(5) << 20) + 3}) {
    gts::host_block b = gts::allocate_host(bytes, 64);
    assert_true(b.mapped);
    assert_true(b.fresh_zero);
    assert_true(b.bytes >= bytes);
    assert_int_equal(reinterpret_cast<uintptr_t>(b.ptr) % gts::huge_page_bytes, 0);
    assert_int_equal(b.alignment % gts::huge_page_bytes, 0);
    const auto* p = static_cast<const unsigned char*>(b.ptr);
    for (std::size_t i = 0; i < bytes; i += 4093) assert_int_equal(p[i], 0);
    std::memset(b.ptr, 1, bytes);
    gts::free_host(b);
  }
  // Alignment above the huge-page size is honoured too.
  gts::host_block b = gts::allocate_host(std::size_t(3) << 20, std::size_t(8) << 20);
  assert_int_equal(reinterpret_cast<uintptr_t>(b.ptr) % (std::size_t(8) << 20), 0);
  gts::free_host(b);
  // Alignments that are not powers of two (GT4Py allows 24 bytes for <f8, issue 8): the block
  // is over-allocated and starts at a multiple of the alignment, small and mapped blocks alike.
  for (std::size_t align : {std::size_t(3), std::size_t(24), std::size_t(48), std::size_t(12288)}) {
    for (std::size_t bytes : {std::size_t(0), std::size_t(100), std::size_t(2) << 20}) {
      gts::host_block nb = gts::allocate_host(bytes, align);
      assert_non_null(nb.ptr);
      assert_true(nb.bytes >= bytes);
      assert_int_equal(reinterpret_cast<uintptr_t>(nb.ptr) % align, 0);
      std::memset(nb.ptr, 0x5a, bytes);
      gts::free_host(nb);
    }
  }
  gts::free_host(gts::host_block{});  // no-op
}

void test_alloc_failures(void**) {
  for (std::size_t bytes : {std::size_t(1) << 62, SIZE_MAX, SIZE_MAX - (std::size_t(1) << 20)}) {
    try {
      gts::host_block b = gts::allocate_host(bytes, 64);
      gts::free_host(b);
      fail_msg("allocating %zu bytes succeeded", bytes);
    } catch (const gts::error& e) {
      assert_int_equal(static_cast<int>(e.kind()),
                       static_cast<int>(gts::error_kind::out_of_memory));
      assert_non_null(std::strstr(e.what(), std::to_string(bytes).c_str()));
    }
  }
  try {
    gts::allocate_host(100, 0);  // any positive alignment is fine (48 too), 0 is not
    fail_msg("alignment 0 accepted");
  } catch (const gts::error& e) {
    assert_int_equal(static_cast<int>(e.kind()),
                     static_cast<int>(gts::error_kind::invalid_argument));
    assert_non_null(std::strstr(e.what(), "alignment"));
  }
}

}  // namespace

// Each test restores the defaults after it (teardown).
#define WITH_TEARDOWN(f) cmocka_unit_test_teardown(f, teardown)

int main(int argc, char** argv) {
  // Optional argument: a cmocka name filter such as "test_copy_*".
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  int failed = 0;
  GTS_RUN_TESTS(failed, "kernels_internal", GTS_TESTS, WITH_TEARDOWN, nullptr, nullptr);
  return failed;
}
