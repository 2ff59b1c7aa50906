// Presets: the alignment, device and layout rule a backend wants (GT4Py's LayoutInfo). Built-in
// presets are an immutable table searched without locking; presets registered at run time live
// in a mutex-guarded list behind it.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace gts {

// The layout layer's own vocabulary; src/capi translates gtstorage_layout_rule,
// gtstorage_alignment_unit and gtstorage_device values into these and back.
enum class layout_rule { by_dims, c_order, fortran_order };
enum class alignment_unit { elements, bytes };
enum class device_kind { cpu, gpu };

struct preset {
  std::array<char, 32> name{};
  int64_t alignment = 1;
  alignment_unit unit = alignment_unit::elements;
  device_kind device = device_kind::cpu;
  layout_rule rule = layout_rule::by_dims;
  std::array<int32_t, 3> base_layout{0, 1, 2};  ///< Ranks of I, J, K (0 = slowest).
  bool builtin = false;

  /// Alignment in bytes for elements of @p itemsize bytes.
  [[nodiscard]] int64_t alignment_bytes(int64_t itemsize) const {
    return unit == alignment_unit::elements ? alignment * itemsize : alignment;
  }
};

/// Finds a preset by name; throws unknown_preset (message lists every known name).
preset find_preset(const char* name);
/// Number of presets (built-in first, then registered ones, in registration order).
int preset_count();
/// Preset number @p index; throws invalid_argument when out of range.
preset preset_at(int index);
/// Registers or replaces a user preset; validates it; built-ins cannot be replaced.
void register_preset(const preset& p);

/// Bumped (release) after every change to the registered presets, so that a cache of anything
/// derived from a preset name (the storage layer's plan cache) can tell whether it is stale.
extern std::atomic<uint64_t> preset_generation_counter;
/// Current preset generation (acquire: a reader that sees generation g also sees every
/// registration that led to it).
inline uint64_t preset_generation() noexcept {
  return preset_generation_counter.load(std::memory_order_acquire);
}

}  // namespace gts
