// Internals shared by the host kernel sources (not part of the kernels.hpp interface): the
// normalized problem form, element-run functions, half-float conversions and the table of
// vector routines picked at run time. Internal tests (tests/cpp) include it as well.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/strided_array.hpp"

namespace gts::kernels::detail {

/// One dimension of a normalized problem: extent and byte strides of destination and source.
struct dim {
  int64_t n;
  int64_t ds;
  int64_t ss;
};

/// A copy or fill reduced to its essentials: extent-1 dimensions dropped, destination strides
/// made non-negative, dimensions sorted by destination stride (outermost first) and dimensions
/// that are contiguous in both arrays merged. `src` is unused by fill.
struct problem {
  std::byte* dst = nullptr;
  const std::byte* src = nullptr;
  int nd = 0;
  dim dims[max_ndim];  // first nd valid; left uninitialized (zeroing costs on tiny arrays)
};

/// Converts (or copies) @p n elements: src advances by @p ss bytes, dst by @p ds bytes.
using run_fn = void (*)(std::byte* dst, int64_t ds, const std::byte* src, int64_t ss, int64_t n);

/// Element-wise conversion from @p from to @p to with NumPy's unsafe-cast rules; nullptr if
/// either dtype is not one gtstorage supports.
run_fn convert_run(dtype to, dtype from);

/// Bitwise strided copy of elements of @p itemsize bytes (1, 2, 4, 8 or 16); nullptr otherwise.
run_fn copy_run(int itemsize);

/// IEEE binary16 <-> binary64. double_to_half rounds to nearest even and keeps NaN payload bits
/// that fit, like NumPy's npy_double_to_half.
uint16_t double_to_half(double value);
double half_to_double(uint16_t bits);

/// Geometry of a transposing copy: element (x, y, z) is at d + x*size + y*dsy + z*dsz in the
/// destination and at s + x*ssx + y*size + z*ssz in the source. z is an outer dimension that the
/// transposes walk inside each strip of x, so that source rows which continue in memory from one
/// z to the next (ssz == ny*size) are read as one long stream.
struct transpose_geom {
  int64_t nx, ny, nz;
  int64_t dsy, dsz;
  int64_t ssx, ssz;
};

/// Vector routines; one table per instruction-set level, chosen once from cpuid.
struct simd_ops {
  const char* name;
  /// memcpy with non-temporal stores for the 64-byte-aligned body of dst (caller fences).
  void (*stream_copy)(void* dst, const void* src, std::size_t bytes);
  /// Writes @p bytes at @p dst from a 64-byte pattern indexed by address modulo 64;
  /// @p nt selects non-temporal stores for the aligned body (caller fences).
  void (*pattern_fill)(void* dst, std::size_t bytes, const unsigned char* pattern64, bool nt);
  /// Transposing copy of 8-byte (or 4-byte) elements over a stack of planes (see
  /// transpose_geom): in each plane dst is contiguous in x and src contiguous in y. Any extents;
  /// @p nt allows non-temporal stores where dst lines align. nullptr where the level has no
  /// vector version (the kernels then use their tile path).
  void (*transpose8)(std::byte* d, const std::byte* s, const transpose_geom& g, bool nt);
  void (*transpose4)(std::byte* d, const std::byte* s, const transpose_geom& g, bool nt);
  /// The same for 2- and 1-byte elements (ordinary stores; @p nt is ignored).
  void (*transpose2)(std::byte* d, const std::byte* s, const transpose_geom& g, bool nt);
  void (*transpose1)(std::byte* d, const std::byte* s, const transpose_geom& g, bool nt);
  /// Orders preceding non-temporal stores before later stores (sfence on x86).
  void (*fence)();
};

/// Instruction-set levels of simd_ops, best last (sse2 exists on x86-64 only).
enum class simd_level { generic = 0, sse2 = 1, avx2 = 2, avx512 = 3 };

/// The table in use: the best level the CPU supports, capped by GTSTORAGE_SIMD
/// (generic|sse2|avx2|avx512) when that environment variable is set at first use.
const simd_ops& simd();

/// The table of one level if this CPU and build support it, else nullptr (for tests).
const simd_ops* simd_for(simd_level level);

/// Forces the level used by simd() (tests); returns false if unsupported here.
bool set_simd_level(simd_level level);

/// Destination size from which copies and fills use non-temporal stores (bytes); about half
/// the last-level cache, so results that still fit in cache stay there.
int64_t streaming_threshold();

/// Overrides streaming_threshold() (tests; a negative value restores the default).
void set_streaming_threshold(int64_t bytes);

/// The instance for @p itemsize of a kernel templated on the element size (1, 2, 4, 8 or 16
/// bytes: the sizes of the dtypes), as @p instance(std::integral_constant<int, Size>{}) makes
/// it, or @p other for any other size.
template <class Instance, class Other>
auto by_itemsize(int64_t itemsize, Instance instance, Other other)
    -> decltype(instance(std::integral_constant<int, 1>{})) {
  switch (itemsize) {
    case 1:
      return instance(std::integral_constant<int, 1>{});
    case 2:
      return instance(std::integral_constant<int, 2>{});
    case 4:
      return instance(std::integral_constant<int, 4>{});
    case 8:
      return instance(std::integral_constant<int, 8>{});
    case 16:
      return instance(std::integral_constant<int, 16>{});
    default:
      return other;
  }
}

/// Work size (bytes written) from which the kernels start an OpenMP team.
inline constexpr int64_t parallel_threshold_bytes = int64_t(1) << 20;

}  // namespace gts::kernels::detail
