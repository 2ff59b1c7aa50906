// Shared helpers of gtstorage-bench: timing, medians, checked API calls and a tiny JSON writer.
// Everything measured through the library goes through the public C API only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtstorage/gtstorage.h"

namespace bench {

struct config {
  int64_t ni = 512, nj = 512, nk = 128;
  int reps = 7;
  bool json_only = false;
  bool device = false;
};

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Median wall time in seconds of @p reps calls of f, after one untimed warm-up call.
template <class F>
double median_time(int reps, F&& f) {
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double a = now_s();
    f();
    t.push_back(now_s() - a);
  }
  return median(t);
}

/// Exits with the library's message if a gtstorage call failed: a benchmark figure from a
/// failed call would be meaningless.
inline void check(int status, const char* what) {
  if (status != GTSTORAGE_OK) {
    std::fprintf(stderr, "gtstorage-bench: %s failed: %s (%s)\n", what,
                 gtstorage_status_name(status), gtstorage_last_error());
    std::exit(1);
  }
}

/// Ordered "key": value pairs rendered as one JSON object.
class json_object {
 public:
  void number(const std::string& key, double v, int digits = 4) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    add(key, buf);
  }
  void integer(const std::string& key, int64_t v) { add(key, std::to_string(v)); }
  void boolean(const std::string& key, bool v) { add(key, v ? "true" : "false"); }
  void null(const std::string& key) { add(key, "null"); }
  void string(const std::string& key, const std::string& v) {
    std::string q = "\"";
    for (const char c : v) {
      if (c == '"' || c == '\\') {
        q += '\\';
        q += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char esc[8];
        std::snprintf(esc, sizeof esc, "\\u%04x", c);
        q += esc;
      } else {
        q += c;
      }
    }
    add(key, q + "\"");
  }
  void object(const std::string& key, const json_object& o) { add(key, o.str()); }
  void raw(const std::string& key, const std::string& json) { add(key, json); }
  [[nodiscard]] std::string str() const {
    std::string s = "{";
    for (std::size_t i = 0; i < items_.size(); ++i) s += (i ? ", " : "") + items_[i];
    return s + "}";
  }

 private:
  void add(const std::string& key, const std::string& value) {
    items_.push_back("\"" + key + "\": " + value);
  }
  std::vector<std::string> items_;
};

/// A target on a ratio of two timings: met when @p ratio is at least (@p at_least) or at most
/// @p limit. JSON: {"ratio", "min" or "max", "pass"}.
inline json_object ratio_target(double ratio, double limit, bool at_least) {
  json_object o;
  o.number("ratio", ratio, 3);
  o.number(at_least ? "min" : "max", limit, 2);
  o.boolean("pass", at_least ? ratio >= limit : ratio <= limit);
  return o;
}

/// A target on a value: met when @p value is at most @p max. JSON: {"value", "max", "pass"}.
inline json_object value_target(double value, double max) {
  json_object o;
  o.number("value", value, 1);
  o.number("max", max, 1);
  o.boolean("pass", value <= max);
  return o;
}

/// Options of a storage of @p ndim extents @p shape in the layout of @p preset, initialized as
/// @p init; every other field keeps its default (dtype NULL: float64, no dims labels).
inline gtstorage_create_options create_options(uint32_t ndim, const int64_t* shape,
                                               const char* preset, int32_t init) {
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  o.ndim = ndim;
  o.shape = shape;
  o.preset = preset;
  o.init = init;
  return o;
}

/// The same for a 3-D float64 field labelled "IJK", so that presets order its extents by name.
inline gtstorage_create_options field_options(const int64_t* shape, const char* preset,
                                              int32_t init) {
  gtstorage_create_options o = create_options(3, shape, preset, init);
  o.dtype = "<f8";
  o.dims = "IJK";
  return o;
}

/// Command-line value parsers: false when @p s is not a whole value in range.
/// An integer in 1..@p max.
inline bool parse_count(const char* s, long max, int& out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 1 || v > max) return false;
  out = static_cast<int>(v);
  return true;
}

/// Three extents NIxNJxNK, each in 1..@p max.
inline bool parse_extents(const char* s, int64_t max, int64_t (&out)[3]) {
  long long a = 0, b = 0, c = 0;
  char tail = 0;
  if (std::sscanf(s, "%lldx%lldx%lld%c", &a, &b, &c, &tail) != 3) return false;
  if (a < 1 || b < 1 || c < 1 || a > max || b > max || c > max) return false;
  out[0] = a;
  out[1] = b;
  out[2] = c;
  return true;
}

/// Device figures (bench/device_bench.cpp): fills @p out and returns true when at least one
/// device is usable; returns false (and leaves @p out empty) otherwise.
bool device_bench(const config& cfg, json_object& out);

}  // namespace bench
