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
  std::array<int, max_ndim> order{};
  for (int d = 0; d < ndim; ++d) order[d] = d;
  std::stable_sort(order.begin(), order.begin() + ndim,
                   [&](int a, int b) { return key[a] < key[b]; });
  for (int rank = 0; rank < ndim; ++rank) layout[order[rank]] = rank;
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
  std::array<int, max_ndim> order{};
  for (int d = 0; d < ndim; ++d) order[d] = d;
  std::stable_sort(order.begin(), order.begin() + ndim, [&](int a, int b) {
    return std::llabs(strides[a]) > std::llabs(strides[b]);
  });
  layout_map layout{};
  for (int rank = 0; rank < ndim; ++rank) layout[order[rank]] = rank;
  return layout;
}

}  // namespace gts
