#include "common/dtype.hpp"

#include "common/errors.hpp"

namespace gts {

std::string dtype::typestr() const {
  const char order = itemsize == 1 ? '|' : '<';
  return std::string(1, order) + kind + std::to_string(itemsize);
}

namespace {
bool valid_size(char kind, int size) {
  switch (kind) {
    case 'b':
      return size == 1;
    case 'i':
    case 'u':
      return size == 1 || size == 2 || size == 4 || size == 8;
    case 'f':
      return size == 2 || size == 4 || size == 8;
    case 'c':
      return size == 8 || size == 16;
    default:
      return false;
  }
}

// The quoted typestr for messages, built only when one is thrown (this runs on every create).
std::string quoted(const char* typestr) {
  return std::string("'") + typestr + "'";
}
}  // namespace

dtype parse_dtype(const char* typestr, const char* param) {
  if (typestr == nullptr) return dtype{'f', 8};
  const char* p = typestr;
  if (*p == '<' || *p == '|' || *p == '=') {
    ++p;
  } else if (*p == '>') {
    fail_arg(param, "big-endian typestr " + quoted(typestr) +
                        " is not supported on this little-endian host");
  }
  const char kind = *p;
  if (kind == '\0') fail_arg(param, "empty typestr; expected e.g. '<f8', '<i4', '|b1'");
  ++p;
  // One digit 1-9, optionally a second digit, then the end (p[2] is only read when p[1] is a
  // digit, so never past the terminator).
  const bool two_digits = p[0] != '\0' && p[1] >= '0' && p[1] <= '9';
  if (*p < '1' || *p > '9' || (p[1] != '\0' && (!two_digits || p[2] != '\0'))) {
    fail_arg(param, "malformed typestr " + quoted(typestr) +
                        "; expected [<|=]KIND SIZE, e.g. '<f8', '<i4', '|b1', '<f2', '<c16'");
  }
  const int size = two_digits ? (p[0] - '0') * 10 + (p[1] - '0') : p[0] - '0';
  if (!valid_size(kind, size)) {
    fail_arg(param, "unsupported typestr " + quoted(typestr) +
                        "; supported: b1, i1/i2/i4/i8, u1/u2/u4/u8, f2/f4/f8, c8/c16");
  }
  return dtype{kind, size};
}

}  // namespace gts
