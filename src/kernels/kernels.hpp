// Host kernels: fill and layout-changing copy. Cache-blocked, OpenMP-threaded (OMP_NUM_THREADS
// respected), vector/non-temporal variants chosen at run time. Both take arrays of equal shape;
// neither allocates. They may throw gts::error only for unsupported arguments.
#pragma once

#include "kernels/strided_array.hpp"

namespace gts::kernels {

/// Sets every element of @p dst to the element at @p value (dst.type, itemsize bytes).
void fill(const strided_array& dst, const void* value);

/// Copies every element of @p src into @p dst (equal shapes). Equal dtypes: bitwise copy of
/// any layouts; different dtypes: converted element by element (NumPy unsafe casting).
/// The two arrays must not overlap unless they are identical.
void copy(const strided_array& dst, const strided_array& src);

/// Converts one element of type @p from at @p src into type @p to at @p dst.
void convert_element(void* dst, dtype to, const void* src, dtype from);

/// Threads the kernels use (omp_get_max_threads(), 1 without OpenMP).
int thread_count();

}  // namespace gts::kernels
