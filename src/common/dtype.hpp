// Element types as NumPy typestrs. A dtype is a kind character ('b' bool, 'i' signed, 'u'
// unsigned, 'f' float, 'c' complex) and an item size in bytes.
#pragma once

#include <cstdint>
#include <string>

namespace gts {

struct dtype {
  char kind = 'f';
  int32_t itemsize = 8;

  /// Normalized typestr: "|b1", "|i1", "|u1", otherwise "<" + kind + size (little-endian host).
  [[nodiscard]] std::string typestr() const;
  friend bool operator==(dtype a, dtype b) { return a.kind == b.kind && a.itemsize == b.itemsize; }
  friend bool operator!=(dtype a, dtype b) { return !(a == b); }
};

/// Parses a typestr ("<f8", "=i4", "|b1", "f8" …). NULL means "<f8". Throws gts::error
/// (invalid_argument, naming @p param) for anything else.
dtype parse_dtype(const char* typestr, const char* param = "dtype");

}  // namespace gts
