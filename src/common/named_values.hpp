// The names of a C enum's values, as messages and gtstorage_status_name() print them: one table
// per enum whose names the preprocessor spells from the enumerators themselves, and one lookup.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gts {

/// An enumerator and its spelling.
struct named_value {
  int64_t value;
  const char* name;
};

/// {GTSTORAGE_OK, "GTSTORAGE_OK"}: the name is the enumerator as written.
#define GTS_NAMED_VALUE(enumerator) ::gts::named_value_of((enumerator), #enumerator)
constexpr named_value named_value_of(int64_t value, const char* name) {
  return {value, name};
}

/// The name of @p value in @p table, or @p other when the table lacks it.
template <std::size_t N>
constexpr const char* name_in(const named_value (&table)[N], int64_t value, const char* other) {
  for (const named_value& e : table) {
    if (e.value == value) return e.name;
  }
  return other;
}

}  // namespace gts
