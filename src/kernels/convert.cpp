// Element conversions with NumPy's unsafe-cast semantics, as NumPy behaves on x86-64:
//  - to bool: value != 0 (NaN is true; complex: either part non-zero);
//  - from bool: 0 or 1 (any non-zero byte counts as true, as NumPy reads it);
//  - integer -> integer: two's-complement wrap-around (C conversion);
//  - float -> integer: truncation toward zero; NaN and out-of-range values give the bit patterns
//    of the x86 cvtt* instructions NumPy's C loops compile to (INT_MIN of the 32- or 64-bit
//    conversion, then narrowed), so results match NumPy instead of being undefined behaviour;
//  - complex -> real: the real part (NumPy's ComplexWarning case); real -> complex: imag 0;
//  - f2 (half) <-> anything: through double with one correctly rounded step, so no double
//    rounding, NaN payload kept, overflow -> inf, subnormals exact.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "common/errors.hpp"
#include "kernels/kernels.hpp"
#include "kernels/kernels_internal.hpp"

namespace gts::kernels {
namespace detail {

uint16_t double_to_half(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const auto sign = static_cast<uint16_t>((bits >> 48) & 0x8000u);
  const int exp = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t mant = bits & ((uint64_t(1) << 52) - 1);
  if (exp == 0x7ff) {
    if (mant == 0) return sign | 0x7c00u;  // infinity
    // NaN: keep the top payload bits (quiet or signalling, like NumPy); if they are all zero
    // set the lowest one so the result stays a NaN instead of becoming infinity.
    auto h = static_cast<uint16_t>(0x7c00u | (mant >> 42));
    if (h == 0x7c00u) h = 0x7c01u;
    return static_cast<uint16_t>(sign | h);
  }
  if (exp == 0) return sign;      // zero or double subnormal: far below the half range
  const int e = exp - 1023 + 15;  // biased half exponent
  if (e >= 31) return sign | 0x7c00u;
  const uint64_t m = mant | (uint64_t(1) << 52);  // 53 significant bits
  if (e >= 1) {
    // Normal half: keep 10 fraction bits; a carry out of the fraction bumps the exponent,
    // which also turns 65520 and above into infinity (0x7c00).
    uint32_t h = (static_cast<uint32_t>(e) << 10) | static_cast<uint32_t>((m >> 42) & 0x3ffu);
    const uint64_t rem = m & ((uint64_t(1) << 42) - 1);
    const uint64_t halfway = uint64_t(1) << 41;
    if (rem > halfway || (rem == halfway && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  // Subnormal half: value = m * 2^(e-1-52-...) expressed as a count of 2^-24 units.
  const int shift = 42 + (1 - e);
  if (shift >= 64) return sign;
  uint64_t h = m >> shift;
  const uint64_t rem = m & ((uint64_t(1) << shift) - 1);
  const uint64_t halfway = uint64_t(1) << (shift - 1);
  if (rem > halfway || (rem == halfway && (h & 1u))) ++h;  // may carry into the smallest normal
  return static_cast<uint16_t>(sign | h);
}

double half_to_double(uint16_t h) {
  const uint64_t sign = uint64_t(h & 0x8000u) << 48;
  const int e = (h >> 10) & 0x1f;
  const uint64_t m = h & 0x3ffu;
  uint64_t bits;
  if (e == 31) {
    bits = sign | (uint64_t(0x7ff) << 52) | (m << 42);  // inf or NaN with its payload
  } else if (e == 0) {
    const double v = std::ldexp(static_cast<double>(m), -24);  // exact
    return (h & 0x8000u) ? -v : v;
  } else {
    bits = sign | (uint64_t(e - 15 + 1023) << 52) | (m << 42);
  }
  double out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

}  // namespace detail

namespace {

// Storage types for the dtypes that have no C++ arithmetic type of the right semantics.
struct b1_t {
  uint8_t v;
};
struct f2_t {
  uint16_t bits;
};
struct c8_t {
  float re, im;
};
struct c16_t {
  double re, im;
};

template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T>;
template <class T>
inline constexpr bool is_real_float_v = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool is_complex_v = std::is_same_v<T, c8_t> || std::is_same_v<T, c16_t>;

// x86 cvttsd2si semantics: truncation in range, the "integer indefinite" INT_MIN otherwise.
inline int64_t cvtt_i64(double v) {
  constexpr double lim = 9223372036854775808.0;  // 2^63
  if (v >= -lim && v < lim) return static_cast<int64_t>(v);
  return std::numeric_limits<int64_t>::min();
}
inline int32_t cvtt_i32(double v) {
  if (v > -2147483649.0 && v < 2147483648.0) return static_cast<int32_t>(v);
  return std::numeric_limits<int32_t>::min();
}

template <class To>
To float_to_int(double v) {
  if constexpr (std::is_same_v<To, uint64_t>) {
    // What compilers emit for double -> uint64 on x86-64: values >= 2^63 are shifted down by
    // 2^63 before the signed conversion and the top bit is put back.
    constexpr double two63 = 9223372036854775808.0;
    if (!(v >= two63)) return static_cast<uint64_t>(cvtt_i64(v));
    return static_cast<uint64_t>(cvtt_i64(v - two63)) ^ (uint64_t(1) << 63);
  } else if constexpr (sizeof(To) == 8) {
    return cvtt_i64(v);
  } else if constexpr (std::is_same_v<To, uint32_t>) {
    return static_cast<uint32_t>(static_cast<uint64_t>(cvtt_i64(v)));
  } else {
    // int32 and every narrower type go through the 32-bit conversion, then wrap.
    return static_cast<To>(static_cast<uint32_t>(cvtt_i32(v)));
  }
}

// Integer -> integer: two's-complement wrap (well defined through the unsigned type).
template <class To, class From>
To int_to_int(From x) {
  using U = std::make_unsigned_t<To>;
  return static_cast<To>(static_cast<U>(x));
}

template <class T>
bool nonzero(T x) {
  if constexpr (std::is_same_v<T, b1_t>) {
    return x.v != 0;
  } else if constexpr (std::is_same_v<T, f2_t>) {
    return (x.bits & 0x7fffu) != 0;  // +-0 false; NaN true like every other float
  } else if constexpr (is_complex_v<T>) {
    return x.re != 0 || x.im != 0;  // NaN != 0 holds, so NaN parts count as true
  } else {
    return x != 0;
  }
}

template <class To, class From>
To cast(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<To, b1_t>) {
    return b1_t{static_cast<uint8_t>(nonzero(x) ? 1 : 0)};
  } else if constexpr (std::is_same_v<From, b1_t>) {
    return cast<To>(static_cast<uint8_t>(x.v != 0 ? 1 : 0));
  } else if constexpr (std::is_same_v<From, f2_t>) {
    return cast<To>(detail::half_to_double(x.bits));
  } else if constexpr (is_complex_v<From>) {
    if constexpr (is_complex_v<To>) {
      using C = decltype(To::re);
      return To{static_cast<C>(x.re), static_cast<C>(x.im)};
    } else {
      return cast<To>(x.re);
    }
  } else if constexpr (is_complex_v<To>) {
    using C = decltype(To::re);
    return To{cast<C>(x), C(0)};
  } else if constexpr (std::is_same_v<To, f2_t>) {
    return f2_t{detail::double_to_half(static_cast<double>(x))};
  } else if constexpr (is_int_v<To> && is_real_float_v<From>) {
    return float_to_int<To>(static_cast<double>(x));
  } else if constexpr (is_int_v<To> && is_int_v<From>) {
    return int_to_int<To>(x);
  } else {
    return static_cast<To>(x);  // -> float/double: IEEE round to nearest, overflow to inf
  }
}

template <class To, class From>
void convert_run_impl(std::byte* d, int64_t ds, const std::byte* s, int64_t ss, int64_t n) {
  if (ds == int64_t(sizeof(To)) && ss == int64_t(sizeof(From))) {
    // Contiguous: indexed form lets the compiler vectorize the simple casts.
    for (int64_t i = 0; i < n; ++i) {
      From x;
      std::memcpy(&x, s + i * int64_t(sizeof(From)), sizeof x);
      const To y = cast<To>(x);
      std::memcpy(d + i * int64_t(sizeof(To)), &y, sizeof y);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i, d += ds, s += ss) {
    From x;
    std::memcpy(&x, s, sizeof x);
    const To y = cast<To>(x);
    std::memcpy(d, &y, sizeof y);
  }
}

template <int Size>
struct bytes_t {
  unsigned char b[Size];
};

template <int Size>
void copy_run_impl(std::byte* d, int64_t ds, const std::byte* s, int64_t ss, int64_t n) {
  if (ds == Size && ss == Size) {
    std::memcpy(d, s, static_cast<std::size_t>(n) * Size);
    return;
  }
  for (int64_t i = 0; i < n; ++i, d += ds, s += ss) std::memcpy(d, s, Size);
}

// dtype -> index in the type list below; -1 if unsupported.
int type_index(dtype t) {
  switch (t.kind) {
    case 'b':
      return t.itemsize == 1 ? 0 : -1;
    case 'i':
      switch (t.itemsize) {
        case 1:
          return 1;
        case 2:
          return 2;
        case 4:
          return 3;
        case 8:
          return 4;
        default:
          return -1;
      }
    case 'u':
      switch (t.itemsize) {
        case 1:
          return 5;
        case 2:
          return 6;
        case 4:
          return 7;
        case 8:
          return 8;
        default:
          return -1;
      }
    case 'f':
      switch (t.itemsize) {
        case 2:
          return 9;
        case 4:
          return 10;
        case 8:
          return 11;
        default:
          return -1;
      }
    case 'c':
      switch (t.itemsize) {
        case 8:
          return 12;
        case 16:
          return 13;
        default:
          return -1;
      }
    default:
      return -1;
  }
}

template <class... T>
struct type_list {};
using all_types = type_list<b1_t, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                            uint64_t, f2_t, float, double, c8_t, c16_t>;
constexpr int type_count = 14;

template <class To, class... From>
constexpr void fill_row(detail::run_fn* row, type_list<From...>) {
  int i = 0;
  ((row[i++] = &convert_run_impl<To, From>), ...);
}

template <class... To>
constexpr void fill_table(detail::run_fn (*table)[type_count], type_list<To...>) {
  int i = 0;
  ((fill_row<To>(table[i++], all_types{})), ...);
}

struct conversion_table {
  detail::run_fn fn[type_count][type_count] = {};  // [to][from]
  constexpr conversion_table() { fill_table(fn, all_types{}); }
};

constexpr conversion_table conversions{};

}  // namespace

namespace detail {

run_fn convert_run(dtype to, dtype from) {
  const int t = type_index(to), f = type_index(from);
  if (t < 0 || f < 0) return nullptr;
  return conversions.fn[t][f];
}

run_fn copy_run(int itemsize) {
  return by_itemsize(
      itemsize, [](auto size) { return &copy_run_impl<decltype(size)::value>; }, nullptr);
}

}  // namespace detail

void convert_element(void* dst, dtype to, const void* src, dtype from) {
  if (dst == nullptr || src == nullptr) fail_arg("convert_element", "null element pointer");
  const detail::run_fn fn = detail::convert_run(to, from);
  if (fn == nullptr) {
    fail(error_kind::unsupported,
         "convert_element: unsupported conversion " + from.typestr() + " -> " + to.typestr());
  }
  fn(static_cast<std::byte*>(dst), 0, static_cast<const std::byte*>(src), 0, 1);
}

}  // namespace gts::kernels
