// A storage is a view: geometry (shape, per-side strides and element-0 addresses, dims, halo,
// aligned index) over a shared buffer_set. Creating, wrapping and viewing all produce one.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "layout/allocation_plan.hpp"
#include "storage/buffer_set.hpp"

namespace gts {

/// Initial contents of a new storage.
enum class init_kind { uninitialized, zeros, ones, value, copy };
/// Where a new storage lives: as its preset says, or forced to the host or a GPU.
enum class device_choice { preset, cpu, gpu };
/// Host memory of a new storage: ordinary (pageable) or page-locked by the device backend.
enum class host_memory_kind { pageable, pinned };

/// What gtstorage_create asks for beyond the plan (src/capi translated the public enum values).
struct create_request {
  plan_request plan;
  init_kind init = init_kind::uninitialized;
  device_choice device = device_choice::preset;
  int device_id = -1;
  managed_kind managed = managed_kind::none;  ///< For GPU storages (default: none).
  host_memory_kind host_memory = host_memory_kind::pageable;
  bool readonly = false;
  const void* fill_value = nullptr;
  const strided_array* source = nullptr;  ///< For init == copy (host memory).
  bool pooled = true;                     ///< Memory from (and back to) the pools.
};

struct wrap_request {
  int ndim = 0;
  void* data = nullptr;
  const int64_t* shape = nullptr;
  const int64_t* strides = nullptr;
  const char* dtype = nullptr;
  const char* dims = nullptr;
  const int64_t* halo = nullptr;
  bool readonly = false;
  int device_id = -1;
  release_callback release = nullptr;
  void* user_data = nullptr;
  void* device_data = nullptr;
  const int64_t* device_strides = nullptr;
  gts::sync_state sync_state = gts::sync_state::clean;  ///< Of a wrapped host + device pair.
};

struct slice_range {
  int64_t start, stop, step;
  bool index;
};

// Per-dimension arrays hold meaningful values for [0, ndim) only and are deliberately left
// uninitialized beyond: a view is created on every create/slice, and clearing its ~1 KiB of
// arrays was a measurable part of a small create+release.
class storage {
 public:
  std::shared_ptr<buffer_set> buffers;
  int ndim = 0;
  dtype type{};
  extents shape;
  std::array<extents, 2> strides;    ///< Per side (host, device), bytes.
  std::array<std::byte*, 2> data{};  ///< Element (0, …, 0) per side (null if absent).
  dim_labels dims;
  std::array<std::array<int64_t, 2>, max_ndim> halo;
  extents aligned_index;  ///< -1 where the aligned element is outside.
  bool readonly = false;
  uint64_t stream = 0;

  // Derived once per view by finalize(), so descriptor queries only copy (they run in ~10 ns).
  /// Per side: rank of each dim by |stride|. Ranks are < 16: a byte keeps the whole object under
  /// glibc's 1 KiB thread-cache limit, which made small create+release measurably faster.
  std::array<std::array<uint8_t, max_ndim>, 2> layouts;
  std::array<bool, 2> c_contiguous{};  ///< Per side.
  int64_t nbytes = 0;                  ///< product(shape) * itemsize.
  std::array<char, 8> typestr{};       ///< NUL-terminated.

  /// Recomputes the derived fields above from the geometry; @p planned, when given, is the
  /// layout the storage was created with (used instead of ranking the strides).
  void finalize(const layout_map* planned = nullptr);

  [[nodiscard]] bool has(side s) const { return buffers->get(s).present(); }
  [[nodiscard]] strided_array array(side s) const;
  [[nodiscard]] int64_t size() const;

  static std::unique_ptr<storage> create(const create_request& req);
  static std::unique_ptr<storage> wrap(const wrap_request& req);
  [[nodiscard]] std::unique_ptr<storage> slice(const slice_range* ranges, int n) const;
  [[nodiscard]] std::unique_ptr<storage> transpose(const int32_t* perm, int n) const;
  [[nodiscard]] std::unique_ptr<storage> domain_view() const;

  /// Deep copy of @p src into this (equal shapes), honouring sync state on both.
  void copy_from(const storage& src);
  /// Copy from / to caller host memory (equal shapes, any strides and dtypes).
  void copy_from_host(const strided_array& src);
  void copy_to_host(const strided_array& dst) const;
  /// Copies side @p ss of @p src into side @p ds of this as they are: the sync state is neither
  /// consulted nor changed. Device work runs on @p stream (0: src's stream when its side is on
  /// the device, else this storage's); with @p wait false a same-dtype device copy is only
  /// enqueued.
  void copy_sides(side ds, const storage& src, side ss, uint64_t stream, bool wait);
  /// Sets every element to @p value (one element of this->type).
  void fill(const void* value);
};

/// Builds a strided_array over caller memory, validating shape against @p expected.
strided_array caller_array(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                           const char* dtype_str, dtype fallback, const char* param);

}  // namespace gts
