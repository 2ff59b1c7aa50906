// What the storage's files (storage.cpp: create; storage_copy.cpp: copies and fills;
// storage_wrap.cpp: wraps; storage_views.cpp: views) share below storage.hpp. Internal to
// src/storage.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.hpp"
#include "storage/storage.hpp"

namespace gts {

/// Index of a side in the per-side arrays of view_geometry.
inline int idx(side s) {
  return static_cast<int>(s);
}

/// Lowest and one-past-highest byte touched by @p a (empty arrays touch nothing). Checked: a
/// wrapped geometry whose span does not fit the address space is an overflow error.
void span_of(const strided_array& a, std::byte*& lo, std::byte*& hi);

/// Whether side @p sd of @p s is host memory or memory the host reaches (unified).
bool host_accessible(const storage& s, side sd);

/// Fails (shape_mismatch, naming @p param) unless the two shapes are equal.
void check_same_shape(int ndim_a, const int64_t* a, int ndim_b, const int64_t* b,
                      const char* param);

/// Copies between any two arrays where either may be device memory, correct when they overlap
/// in one address space (the source is then read into a private copy first, as NumPy does).
/// Host<->host converts dtypes; transfers involving a device go through a host staging array
/// when dtypes differ, and are counted in @p counters and the global counters. With @p wait
/// false a same-dtype copy involving the device is only enqueued on @p stream; returns whether
/// it was (work left queued that the caller must account for).
bool move_elements(const strided_array& dst, bool dst_host, const strided_array& src, bool src_host,
                   uint64_t stream, device::backend* backend, transfer_counters* counters,
                   bool wait = true,
                   kernels::store_policy stores = kernels::store_policy::automatic);

}  // namespace gts
