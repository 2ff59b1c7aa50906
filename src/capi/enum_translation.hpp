// A public enum as one parameter of a C entry point accepts it: the header values it accepts,
// the internal enumerator each one means, and the message a refused value gets. One table per
// enum and one lookup for all of them (the boundary's translations, generated into enums.hpp,
// and those of the libraries built on the C ABI).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/errors.hpp"

namespace gts::capi {

/// Out of line: formatting a message is the rare path of every translation.
[[noreturn]] __attribute__((cold, noinline)) inline void fail_enum(const char* param, int32_t value,
                                                                   const char* what) {
  fail_arg(param, std::to_string(value) + " is not " + what);
}

/// One accepted header value and the internal enumerator it means.
template <class Internal>
struct enum_value {
  int32_t c;
  Internal internal;
};

/// The accepted values in header order, and how a refused one is reported ("side: 7 is not a
/// gtstorage_side (0 host, 1 device)"). Called as a function (side_of(v)), it translates a
/// header value.
template <class Internal, std::size_t N>
struct enum_translation {
  const char* param;
  const char* accepted;  // "a gtstorage_side (0 host, 1 device)"
  std::array<enum_value<Internal>, N> values;

  Internal operator()(int32_t v) const {
    for (const auto& e : values) {
      if (e.c == v) return e.internal;
    }
    fail_enum(param, v, accepted);
  }

  /// The first header value (in header order) that means @p x.
  [[nodiscard]] int32_t to_c(Internal x) const {
    for (const auto& e : values) {
      if (e.internal == x) return e.c;
    }
    return -1;  // not reached: every enumerator has a header value
  }
};

}  // namespace gts::capi
