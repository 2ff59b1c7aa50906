// Layout maps: layout[d] is the stride rank of dimension d (0 = largest stride, ndim-1 =
// contiguous). A preset's rule is applied by dim *name*, so ("K", "J", "I") gets the order its
// backend wants for K, J and I rather than the positional one.
#pragma once

#include <array>
#include <cstdint>

#include "layout/dims.hpp"
#include "layout/preset.hpp"

namespace gts {

using layout_map = std::array<int32_t, max_ndim>;

/// The layout a preset wants for @p dims. GT4Py >= 1.2 rule for by_dims presets: data dims are
/// outermost ("0" slowest), present I/J/K take their base ranks in that order, missing axes are
/// dropped and the ranks re-numbered densely.
layout_map layout_for(const preset& p, const dim_labels& dims, int ndim);

/// Checks that @p layout[0..ndim) is a permutation of 0 … ndim-1 (invalid_argument "layout").
void check_layout(const int32_t* layout, int ndim);

/// Layout map of arbitrary strides: ranks by decreasing |stride| (ties keep dimension order).
layout_map layout_from_strides(const int64_t* strides, int ndim);

}  // namespace gts
