// Overflow-checked size arithmetic: every size the planner computes goes through these, so a
// shape like 2^40 x 2^40 is reported as an overflow instead of wrapping into a small allocation.
#pragma once

#include <cstdint>
#include <string>

#include "common/errors.hpp"

namespace gts {

/// "<what>: size computation overflows 64 bits (a * b)"; out of line, the rare path.
[[noreturn]] __attribute__((cold, noinline)) inline void fail_size_overflow(const char* what,
                                                                            int64_t a, char op,
                                                                            int64_t b) {
  fail(error_kind::overflow, std::string(what) + ": size computation overflows 64 bits (" +
                                 std::to_string(a) + " " + op + " " + std::to_string(b) + ")");
}

inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) fail_size_overflow(what, a, '*', b);
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) fail_size_overflow(what, a, '+', b);
  return r;
}

constexpr bool is_power_of_two(int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

}  // namespace gts
