// Host kernels: fill and layout-changing copy. Cache-blocked, OpenMP-threaded (OMP_NUM_THREADS
// respected), vector/non-temporal variants chosen at run time. Both take arrays of equal shape;
// neither allocates. They may throw gts::error only for unsupported arguments.
#pragma once

#include "kernels/strided_array.hpp"

namespace gts::kernels {

/// Sets every element of @p dst to the element at @p value (dst.type, itemsize bytes).
void fill(const strided_array& dst, const void* value);

/// Where a copy's destination lines go.
enum class store_policy {
  /// Non-temporal stores once the copy reaches half the last-level cache: below that its result
  /// is likely still cached when it is used.
  automatic,
  /// Non-temporal stores for every whole destination line, whatever the size: the caller knows
  /// the destination is not read again soon (a halo's pack buffer, an unpacked face).
  streaming
};

/// Copies every element of @p src into @p dst (equal shapes). Equal dtypes: bitwise copy of
/// any layouts; different dtypes: converted element by element (NumPy unsafe casting).
/// The two arrays must not overlap unless they are identical.
void copy(const strided_array& dst, const strided_array& src,
          store_policy stores = store_policy::automatic);

/// Converts one element of type @p from at @p src into type @p to at @p dst.
void convert_element(void* dst, dtype to, const void* src, dtype from);

/// Threads the kernels use (omp_get_max_threads(), 1 without OpenMP).
int thread_count();

}  // namespace gts::kernels
