// Views: slices (Python's semantics, halos and the aligned index carried along), transposes and
// the domain view; each a new storage over the same buffers.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "common/errors.hpp"
#include "storage/storage.hpp"
#include "storage/storage_internal.hpp"

namespace gts {

std::unique_ptr<storage> storage::slice(const slice_range* ranges, int n) const {
  if (ranges == nullptr) fail_arg("spec", "must not be NULL");
  if (n != ndim) {
    fail_arg("nspec",
             std::to_string(n) + " specs given for a storage of ndim " + std::to_string(ndim));
  }
  auto v = std::make_unique<storage>(*this);
  v->ndim = 0;
  for (int s = 0; s < 2; ++s) v->data[s] = data[s];
  // Moves a view's data pointer to element `i` along a stride. The offset cannot overflow for a
  // storage that holds elements (its span was checked when it was made); an empty one may carry
  // any strides, and there an unrepresentable offset leaves the pointer where it is: nothing
  // will ever be read through it.
  const auto advance = [](std::byte*& p, int64_t i, int64_t stride) {
    int64_t offset = 0;
    if (p == nullptr || __builtin_mul_overflow(i, stride, &offset)) return;
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    const auto magnitude =
        offset < 0 ? 0 - static_cast<std::uintptr_t>(offset) : static_cast<std::uintptr_t>(offset);
    const bool wraps = offset < 0 ? magnitude > address : magnitude > UINTPTR_MAX - address;
    if (!wraps) p += offset;
  };
  for (int d = 0; d < ndim; ++d) {
    const slice_range& r = ranges[d];
    const int64_t extent = shape[d];
    const std::string where =
        " of dimension " + std::to_string(d) + " (extent " + std::to_string(extent) + ")";
    if (r.index) {
      int64_t i = r.start < 0 ? r.start + extent : r.start;
      if (r.start == INT64_MIN || i < 0 || i >= extent) {
        fail_arg("spec",
                 "index " + (r.start == INT64_MIN ? std::string("NONE") : std::to_string(r.start)) +
                     where + " is out of range");
      }
      for (int s = 0; s < 2; ++s) advance(v->data[s], i, strides[s][d]);
      continue;
    }
    if (r.step == 0) fail_arg("spec", "step" + where + " must not be 0");
    if (r.step == INT64_MIN) fail_arg("spec", "step" + where + " is out of range");
    // Python's slice.indices(extent).
    int64_t start, stop;
    const int64_t step = r.step;
    const int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? extent - 1 : extent;
    auto clampi = [&](int64_t x, int64_t dflt) {
      if (x == INT64_MIN) return dflt;
      if (x < 0) {
        x += extent;
        return x < lower ? lower : x;
      }
      return x > upper ? upper : x;
    };
    start = clampi(r.start, step < 0 ? upper : lower);
    stop = clampi(r.stop, step < 0 ? lower : upper);
    int64_t len = 0;
    if (step > 0 && start < stop) len = (stop - start - 1) / step + 1;
    if (step < 0 && stop < start) len = (start - stop - 1) / (-step) + 1;
    const int o = v->ndim++;
    v->shape[o] = len;
    v->dims[o] = dims[d];
    for (int s = 0; s < 2; ++s) {
      if (len > 0) advance(v->data[s], start, strides[s][d]);
      // stride * step as NumPy; only where it overflows and the extent is at most 1 (so the
      // stride is never used to address anything) is the original stride kept instead.
      int64_t strided = 0;
      if (__builtin_mul_overflow(strides[s][d], step, &strided)) {
        if (len > 1) fail_arg("spec", "step" + where + " makes the stride overflow");
        strided = strides[s][d];
      }
      v->strides[s][o] = strided;
    }
    if (step == 1) {
      const int64_t lo = std::clamp<int64_t>(halo[d][0] - start, 0, len);
      const int64_t hi = std::clamp<int64_t>(start + len - (extent - halo[d][1]), 0, len - lo);
      v->halo[o] = {lo, hi};
    } else {
      v->halo[o] = {0, 0};
    }
    const int64_t ai = aligned_index[d];
    int64_t nai = -1;
    if (ai >= 0 && len > 0 && (ai - start) % step == 0) {
      const int64_t k = (ai - start) / step;
      if (k >= 0 && k < len) nai = k;
    }
    v->aligned_index[o] = nai;
  }
  v->finalize();
  return v;
}

std::unique_ptr<storage> storage::transpose(const int32_t* perm, int n) const {
  if (perm == nullptr && n != 0) fail_arg("perm", "must not be NULL");
  if (n != ndim) {
    fail_arg("nperm",
             std::to_string(n) + " entries given for a storage of ndim " + std::to_string(ndim));
  }
  bool seen[max_ndim] = {};
  for (int d = 0; d < n; ++d) {
    if (perm[d] < 0 || perm[d] >= n || seen[perm[d]]) {
      fail_arg("perm", "is not a permutation of 0 … " + std::to_string(n - 1));
    }
    seen[perm[d]] = true;
  }
  auto v = std::make_unique<storage>(*this);
  for (int d = 0; d < n; ++d) {
    const int o = perm[d];
    v->shape[d] = shape[o];
    v->dims[d] = dims[o];
    v->halo[d] = halo[o];
    v->aligned_index[d] = aligned_index[o];
    for (int s = 0; s < 2; ++s) v->strides[s][d] = strides[s][o];
  }
  v->finalize();
  return v;
}

std::unique_ptr<storage> storage::domain_view() const {
  slice_range r[max_ndim];
  for (int d = 0; d < ndim; ++d) r[d] = {halo[d][0], shape[d] - halo[d][1], 1, false};
  return slice(r, ndim);
}

}  // namespace gts
