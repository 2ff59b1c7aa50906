#include "layout/layout_map.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/errors.hpp"

namespace gts {

layout_map layout_for(const preset& p, const dim_labels& dims, int ndim) {
  layout_map layout{};
  if (p.rule == layout_rule::c_order) {
    for (int d = 0; d < ndim; ++d) layout[d] = d;
    return layout;
  }
  if (p.rule == layout_rule::fortran_order) {
    for (int d = 0; d < ndim; ++d) layout[d] = ndim - 1 - d;
    return layout;
  }
  // Sort key per dimension: data dims first by their number, then I/J/K by base rank.
  std::array<int, max_ndim> key{};
  for (int d = 0; d < ndim; ++d) {
    const int axis = spatial_axis(dims[d]);
    key[d] = axis >= 0 ? max_ndim + p.base_layout[axis] : data_dim_number(dims[d]);
  }
  // Rank = number of dims that sort before d (stable: ties keep dimension order). Quadratic in
  // ndim ≤ 16, but allocation-free: this runs on every create.
  for (int d = 0; d < ndim; ++d) {
    int rank = 0;
    for (int e = 0; e < ndim; ++e) rank += key[e] < key[d] || (e < d && key[e] == key[d]);
    layout[d] = rank;
  }
  return layout;
}

void check_layout(const int32_t* layout, int ndim) {
  bool seen[max_ndim] = {};
  for (int d = 0; d < ndim; ++d) {
    const int32_t r = layout[d];
    if (r < 0 || r >= ndim || seen[r]) {
      std::string shown;
      for (int e = 0; e < ndim; ++e) shown += (e ? ", " : "") + std::to_string(layout[e]);
      fail_arg("layout", "(" + shown + ") is not a permutation of 0 … " + std::to_string(ndim - 1));
    }
    seen[r] = true;
  }
}

layout_map layout_from_strides(const int64_t* strides, int ndim) {
  // Same allocation-free ranking as above; this runs on every descriptor query.
  layout_map layout;
  for (int d = 0; d < ndim; ++d) {
    const int64_t sd = std::llabs(strides[d]);
    int rank = 0;
    for (int e = 0; e < ndim; ++e) {
      const int64_t se = std::llabs(strides[e]);
      rank += se > sd || (se == sd && e < d);
    }
    layout[d] = rank;
  }
  return layout;
}

}  // namespace gts
