#include "layout/allocation_plan.hpp"

#include <string>

#include "common/errors.hpp"
#include "layout/checked_math.hpp"

namespace gts {
namespace {

std::string dim_name(const allocation_plan& plan, int d) {
  return "dimension " + std::to_string(d) + " ('" + plan.dims[d].data() + "')";
}

// GT4Py accepts an alignment when it divides the item size or the item size divides it, i.e.
// gcd(alignment, itemsize) is one of the two. For the powers of two we allow that always holds,
// but the check documents the rule and guards user presets with odd item sizes.
void check_alignment(int64_t alignment, int64_t itemsize) {
  if (alignment == 0) fail_arg("alignment", "must not be 0 (use 1 for no alignment)");
  if (!is_power_of_two(alignment)) {
    fail_arg("alignment", std::to_string(alignment) + " bytes is not a positive power of two");
  }
  if (alignment % itemsize != 0 && itemsize % alignment != 0) {
    fail_arg("alignment",
             std::to_string(alignment) + " bytes is not compatible with item size " +
                 std::to_string(itemsize) +
                 " (one must divide the other: gcd(alignment, itemsize) must be one of them)");
  }
  if (alignment > (int64_t(1) << 30)) {
    fail_arg("alignment", std::to_string(alignment) + " bytes exceeds the maximum of 1 GiB");
  }
}

}  // namespace

allocation_plan make_plan(const plan_request& req) {
  allocation_plan plan;
  if (req.ndim < 1 || req.ndim > max_ndim) {
    fail_arg("ndim", std::to_string(req.ndim) + " is out of range 1 … " + std::to_string(max_ndim));
  }
  if (req.shape == nullptr) fail_arg("shape", "must not be NULL");
  const int n = req.ndim;
  plan.ndim = n;
  plan.type = parse_dtype(req.dtype);
  const int64_t itemsize = plan.type.itemsize;
  plan.dims = parse_dims(req.dims, n);
  plan.source_preset = find_preset(req.preset);

  for (int d = 0; d < n; ++d) {
    if (req.shape[d] < 1) {
      fail_arg("shape", "extent " + std::to_string(req.shape[d]) + " of " + dim_name(plan, d) +
                            " must be ≥ 1");
    }
    plan.shape[d] = req.shape[d];
  }

  if (req.layout != nullptr) {
    check_layout(req.layout, n);
    for (int d = 0; d < n; ++d) plan.layout[d] = req.layout[d];
  } else {
    plan.layout = layout_for(plan.source_preset, plan.dims, n);
  }

  for (int d = 0; d < n; ++d) {
    const int64_t lo = req.halo ? req.halo[2 * d] : 0;
    const int64_t hi = req.halo ? req.halo[2 * d + 1] : 0;
    if (lo < 0 || hi < 0) {
      fail_arg("halo", "widths (" + std::to_string(lo) + ", " + std::to_string(hi) + ") of " +
                           dim_name(plan, d) + " must be ≥ 0");
    }
    if (lo > plan.shape[d] || hi > plan.shape[d] - lo) {
      fail_arg("halo", "widths (" + std::to_string(lo) + ", " + std::to_string(hi) + ") of " +
                           dim_name(plan, d) + " are wider than its extent " +
                           std::to_string(plan.shape[d]));
    }
    plan.halo[d] = {lo, hi};
    int64_t ai = lo < plan.shape[d] ? lo : plan.shape[d] - 1;
    if (req.aligned_index != nullptr) {
      ai = req.aligned_index[d];
      if (ai < 0 || ai >= plan.shape[d]) {
        fail_arg("aligned_index", std::to_string(ai) + " of " + dim_name(plan, d) +
                                      " is out of range 0 … " + std::to_string(plan.shape[d] - 1));
      }
    }
    plan.aligned_index[d] = ai;
  }

  plan.alignment_bytes =
      req.alignment_bytes != 0 ? req.alignment_bytes : plan.source_preset.alignment_bytes(itemsize);
  if (req.alignment_bytes < 0) {
    fail_arg("alignment",
             std::to_string(req.alignment_bytes) + " bytes must be ≥ 0 (0 = preset's)");
  }
  check_alignment(plan.alignment_bytes, itemsize);
  const int64_t items_per_alignment =
      plan.alignment_bytes > itemsize ? plan.alignment_bytes / itemsize : 1;

  // Only the contiguous dimension is padded, to a multiple of the alignment in elements; every
  // other stride is then a multiple of the alignment, so aligning one element aligns its whole
  // hyperplane.
  int by_rank[max_ndim] = {};
  for (int d = 0; d < n; ++d) by_rank[plan.layout[d]] = d;
  plan.contiguous_dim = by_rank[n - 1];
  for (int d = 0; d < n; ++d) plan.padded_shape[d] = plan.shape[d];
  {
    // items_per_alignment is a power of two (alignment and itemsize are): round up with a mask.
    const int c = plan.contiguous_dim;
    plan.padded_shape[c] =
        checked_add(plan.shape[c], items_per_alignment - 1, "shape") & ~(items_per_alignment - 1);
  }
  int64_t stride = itemsize;
  for (int rank = n - 1; rank >= 0; --rank) {
    const int d = by_rank[rank];
    plan.strides[d] = stride;
    stride = checked_mul(stride, plan.padded_shape[d], "shape");
  }
  plan.padded_bytes = stride;

  // Offset of element (0, …, 0) from an alignment-aligned block start such that the aligned
  // index lands on a multiple of the alignment.
  // Offsets fit in 64 bits (they are below padded_bytes); the alignment is a power of two.
  const int64_t mask = plan.alignment_bytes - 1;
  int64_t offset = 0;
  for (int d = 0; d < n; ++d) offset += plan.aligned_index[d] * plan.strides[d];
  plan.byte_offset = (plan.alignment_bytes - (offset & mask)) & mask;
  plan.allocation_bytes = checked_add(plan.padded_bytes, plan.byte_offset, "shape");
  return plan;
}

}  // namespace gts
