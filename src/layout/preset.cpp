#include "layout/preset.hpp"

#include <cstring>
#include <mutex>

#include "common/errors.hpp"

namespace gts {
namespace {

preset make(const char* name, int64_t alignment, alignment_unit unit, device_kind device,
            layout_rule rule, std::array<int32_t, 3> base) {
  preset p{{}, alignment, unit, device, rule, base, true};
  std::strncpy(p.name.data(), name, p.name.size() - 1);
  return p;
}

constexpr auto E = alignment_unit::elements;
constexpr auto B = alignment_unit::bytes;
constexpr auto CPU = device_kind::cpu;
constexpr auto GPU = device_kind::gpu;
constexpr auto BY_DIMS = layout_rule::by_dims;

// The table of issue #2 (GT4Py's layout registry plus GridTools' and GDP-3 era names). GT4Py
// counts alignment in elements, GridTools in bytes; base layout is the stride rank of I, J, K.
const std::vector<preset>& builtins() {
  static const std::vector<preset> table = {
      make("numpy", 1, E, CPU, BY_DIMS, {0, 1, 2}),
      make("debug", 1, E, CPU, BY_DIMS, {0, 1, 2}),
      make("gt:cpu_kfirst", 1, E, CPU, BY_DIMS, {0, 1, 2}),
      make("gt:cpu_ifirst", 1, E, CPU, BY_DIMS, {2, 1, 0}),
      make("gt:gpu", 32, E, GPU, BY_DIMS, {2, 1, 0}),
      make("dace:cpu", 1, E, CPU, BY_DIMS, {1, 2, 0}),
      make("dace:cpu_kfirst", 1, E, CPU, BY_DIMS, {0, 1, 2}),
      make("dace:cpu_KJI", 1, E, CPU, BY_DIMS, {2, 1, 0}),
      make("dace:gpu", 1, E, GPU, BY_DIMS, {2, 1, 0}),
      make("dace:gpu_IJK", 1, E, GPU, BY_DIMS, {0, 1, 2}),
      make("gridtools:cpu_kfirst", 1, B, CPU, BY_DIMS, {0, 1, 2}),
      make("gridtools:cpu_ifirst", 64, B, CPU, BY_DIMS, {2, 0, 1}),
      make("gridtools:gpu", 128, B, GPU, BY_DIMS, {2, 1, 0}),
      make("gtx86", 1, E, CPU, BY_DIMS, {0, 1, 2}),
      make("gtmc", 8, E, CPU, BY_DIMS, {2, 0, 1}),
      make("gtcuda", 32, E, GPU, BY_DIMS, {2, 1, 0}),
      make("C", 1, E, CPU, layout_rule::c_order, {0, 1, 2}),
      make("F", 1, E, CPU, layout_rule::fortran_order, {2, 1, 0}),
  };
  return table;
}

std::mutex& user_mutex() {
  static std::mutex m;
  return m;
}
std::vector<preset>& user_presets() {
  static std::vector<preset> list;
  return list;
}

std::string known_names() {
  std::string names;
  for (const preset& p : builtins())
    names += std::string(names.empty() ? "" : ", ") + p.name.data();
  const std::lock_guard<std::mutex> lock(user_mutex());
  for (const preset& p : user_presets()) names += std::string(", ") + p.name.data();
  return names;
}

}  // namespace

std::atomic<uint64_t> preset_generation_counter{0};

preset find_preset(const char* name) {
  if (name == nullptr) name = "numpy";
  for (const preset& p : builtins()) {
    if (std::strcmp(p.name.data(), name) == 0) return p;
  }
  {
    const std::lock_guard<std::mutex> lock(user_mutex());
    for (const preset& p : user_presets()) {
      if (std::strcmp(p.name.data(), name) == 0) return p;
    }
  }
  fail(error_kind::unknown_preset,
       std::string("preset: unknown preset '") + name + "'; known presets: " + known_names());
}

int preset_count() {
  const std::lock_guard<std::mutex> lock(user_mutex());
  return static_cast<int>(builtins().size() + user_presets().size());
}

preset preset_at(int index) {
  const int nbuiltin = static_cast<int>(builtins().size());
  if (index >= 0 && index < nbuiltin) return builtins()[index];
  const std::lock_guard<std::mutex> lock(user_mutex());
  const int total = nbuiltin + static_cast<int>(user_presets().size());
  if (index < 0 || index >= total) {
    fail_arg("index", std::to_string(index) + " is out of range 0 … " + std::to_string(total - 1));
  }
  return user_presets()[index - nbuiltin];
}

void register_preset(const preset& p) {
  const size_t len = strnlen(p.name.data(), p.name.size());
  if (len == 0 || len >= p.name.size()) {
    fail_arg("name",
             "preset name must have 1 … " + std::to_string(p.name.size() - 1) + " characters");
  }
  // Any positive value, as GT4Py: whether it suits an item size (a multiple or a divisor of it)
  // is checked when a plan with a dtype uses the preset.
  if (p.alignment < 1 || p.alignment > (1 << 30)) {
    fail_arg("alignment", std::to_string(p.alignment) + " must be in 1 … 2^30");
  }
  if (p.rule == layout_rule::by_dims) {
    bool seen[3] = {false, false, false};
    for (int32_t r : p.base_layout) {
      if (r < 0 || r > 2 || seen[r]) {
        fail_arg("base_layout", "must be a permutation of (0, 1, 2)");
      }
      seen[r] = true;
    }
  }
  for (const preset& b : builtins()) {
    if (std::strcmp(b.name.data(), p.name.data()) == 0) {
      fail_arg("name",
               std::string("'") + p.name.data() + "' is a built-in preset and cannot be replaced");
    }
  }
  preset copy = p;
  copy.builtin = false;
  const std::lock_guard<std::mutex> lock(user_mutex());
  bool replaced = false;
  for (preset& u : user_presets()) {
    if (std::strcmp(u.name.data(), p.name.data()) == 0) {
      u = copy;
      replaced = true;
      break;
    }
  }
  if (!replaced) user_presets().push_back(copy);
  // After the change, still under the lock: a reader that sees the new generation also sees the
  // new list (and one that computed a plan from the new list before the bump only tags it with
  // the old generation, which makes it stale at once).
  preset_generation_counter.fetch_add(1, std::memory_order_release);
}

}  // namespace gts
