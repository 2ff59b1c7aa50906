#include "layout/allocation_plan.hpp"

#include <numeric>
#include <string>

#include "common/errors.hpp"
#include "layout/checked_math.hpp"

namespace gts {
namespace {

std::string dim_name(const allocation_plan& plan, int d) {
  return "dimension " + std::to_string(d) + " ('" + plan.dims[d].data() + "')";
}

// GT4Py's rule (gt4py.storage.allocators): any positive alignment whose gcd with the item size
// is one of the two, i.e. a multiple of the item size (24 bytes for <f8: 3 items per aligned
// block) or a divisor of it (4 bytes for <f8). It need not be a power of two.
void check_alignment(int64_t alignment, int64_t itemsize) {
  if (alignment == 0) fail_arg("alignment", "must not be 0 (use 1 for no alignment)");
  if (alignment < 0) fail_arg("alignment", std::to_string(alignment) + " bytes must be positive");
  if (alignment > (int64_t(1) << 30)) {
    fail_arg("alignment", std::to_string(alignment) + " bytes exceeds the maximum of 1 GiB");
  }
  if (alignment % itemsize != 0 && itemsize % alignment != 0) {
    fail_arg("alignment",
             std::to_string(alignment) + " bytes is not compatible with item size " +
                 std::to_string(itemsize) +
                 " (one must divide the other: gcd(alignment, itemsize) must be one of them)");
  }
}

// Strides of at least one page that are multiples of 4 KiB put the lines that a copy or a
// stencil reads across them (one per plane or row) into one L1 set; an odd multiple of u, whose
// power-of-two factor is below 4096, is never such a multiple, and consecutive indices step
// through the sets. u keeps every stride a multiple of the alignment and of the item size.
int64_t unaliased_stride(int64_t stride, int64_t unit) {
  constexpr int64_t page = 4096;
  if (stride < page || unit % page == 0) return stride;
  const int64_t up = checked_add(stride, unit - 1, "shape");
  int64_t padded = up - up % unit;
  if ((padded / unit) % 2 == 0) padded = checked_add(padded, unit, "shape");
  return padded;
}

// lcm(64, alignment, itemsize); alignment ≤ 2^30 and itemsize ≤ 16 keep it below 2^37.
int64_t padding_unit(int64_t alignment, int64_t itemsize) {
  return std::lcm(std::lcm(int64_t(64), alignment), itemsize);
}

}  // namespace

allocation_plan make_plan(const plan_request& req) {
  allocation_plan plan;
  // ndim 0 is a scalar (NumPy's shape ()): one element, no extents, no padding.
  if (req.ndim < 0 || req.ndim > max_ndim) {
    fail_arg("ndim", std::to_string(req.ndim) + " is out of range 0 … " + std::to_string(max_ndim));
  }
  if (req.shape == nullptr && req.ndim > 0) fail_arg("shape", "must not be NULL");
  const int n = req.ndim;
  plan.ndim = n;
  plan.type = parse_dtype(req.dtype);
  const int64_t itemsize = plan.type.itemsize;
  plan.dims = parse_dims(req.dims, n);
  plan.source_preset = find_preset(req.preset);

  for (int d = 0; d < n; ++d) {
    if (req.shape[d] < 0) {
      fail_arg("shape", "extent " + std::to_string(req.shape[d]) + " of " + dim_name(plan, d) +
                            " must be ≥ 0");
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
    // An extent of 0 has no element to align: its aligned index is 0 (GT4Py's default).
    const int64_t last = plan.shape[d] > 0 ? plan.shape[d] - 1 : 0;
    int64_t ai = lo < last ? lo : last;
    if (req.aligned_index != nullptr) {
      ai = req.aligned_index[d];
      if (ai < 0 || ai > last) {
        fail_arg("aligned_index", std::to_string(ai) + " of " + dim_name(plan, d) +
                                      " is out of range 0 … " + std::to_string(last));
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
  // GT4Py's items_per_aligned_block: alignment // itemsize, or 1 when the alignment divides the
  // item size.
  const int64_t items_per_alignment =
      plan.alignment_bytes > itemsize ? plan.alignment_bytes / itemsize : 1;

  // Only the contiguous dimension is padded, to a multiple of the alignment in elements; every
  // other stride is then a multiple of the alignment, so aligning one element aligns its whole
  // hyperplane. A scalar (ndim 0) has no contiguous dimension.
  int by_rank[max_ndim] = {};
  for (int d = 0; d < n; ++d) by_rank[plan.layout[d]] = d;
  plan.contiguous_dim = n > 0 ? by_rank[n - 1] : -1;
  bool empty = false;
  for (int d = 0; d < n; ++d) {
    plan.padded_shape[d] = plan.shape[d];
    empty = empty || plan.shape[d] == 0;
  }
  auto pad = [&](int64_t extent) {
    const int64_t up = checked_add(extent, items_per_alignment - 1, "shape");
    return up - up % items_per_alignment;
  };
  if (n > 0) {
    const int c = plan.contiguous_dim;
    plan.padded_shape[c] = pad(plan.shape[c]);
  }
  // Strides are those of the same plan with every extent 0 counted as 1 (NumPy's rule for empty
  // arrays), so they keep the layout's order and are never 0; an empty storage spans no bytes.
  const bool unaliased = req.padding == pitch_padding::avoid_aliasing;
  const int64_t unit = unaliased ? padding_unit(plan.alignment_bytes, itemsize) : 0;
  int64_t stride = itemsize;
  for (int rank = n - 1; rank >= 0; --rank) {
    const int d = by_rank[rank];
    if (unaliased && rank != n - 1) stride = unaliased_stride(stride, unit);
    plan.strides[d] = stride;
    const int64_t extent = plan.shape[d] > 0          ? plan.padded_shape[d]
                           : d == plan.contiguous_dim ? pad(1)
                                                      : 1;
    stride = checked_mul(stride, extent, "shape");
  }
  plan.padded_bytes = empty ? 0 : stride;

  // Offset of element (0, …, 0) from an alignment-aligned block start such that the aligned
  // index lands on a multiple of the alignment (any alignment, not only powers of two: the
  // allocators hand out blocks aligned to it). Offsets fit in 64 bits (they are below
  // padded_bytes). An empty storage has no element to align and allocates nothing.
  int64_t offset = 0;
  for (int d = 0; d < n; ++d) offset += plan.aligned_index[d] * plan.strides[d];
  plan.byte_offset =
      empty ? 0 : (plan.alignment_bytes - offset % plan.alignment_bytes) % plan.alignment_bytes;
  plan.allocation_bytes = checked_add(plan.padded_bytes, plan.byte_offset, "shape");
  return plan;
}

}  // namespace gts
