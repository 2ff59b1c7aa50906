// A storage is a view: geometry (shape, per-side strides and element-0 addresses, dims, halo,
// aligned index) over a shared buffer_set. Creating, wrapping and viewing all produce one.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "layout/allocation_plan.hpp"
#include "storage/buffer_set.hpp"
#include "storage/view_geometry.hpp"

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
  /// An array without elements that lives on the device but came without an address (a
  /// DLPack producer's empty device tensor): data and device_data are NULL, and the storage
  /// gets an empty device side (on device_id, or the current device) instead of a host side.
  bool empty_device = false;
};

struct slice_range {
  int64_t start, stop, step;
  bool index;
};

/// A view: its geometry (view_geometry.hpp) over a buffer set shared with every other view of
/// the same memory.
class storage : public view_geometry {
 public:
  std::shared_ptr<buffer_set> buffers;

  /// Recomputes the derived fields of the geometry; @p planned, when given, is the
  /// layout the storage was created with (used instead of ranking the strides).
  void finalize(const layout_map* planned = nullptr);

  [[nodiscard]] bool has(side s) const { return buffers->get(s).present(); }
  [[nodiscard]] strided_array array(side s) const;
  [[nodiscard]] int64_t size() const;

  static std::unique_ptr<storage> create(const create_request& req);
  /// Destroys @p s (its handle's last reference is gone) once its handle has left its stream.
  static void retire(storage* s) noexcept;
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
  /// enqueued. @p streaming: host stores bypass the cache whatever the size (the caller does not
  /// read the destination again soon).
  void copy_sides(side ds, const storage& src, side ss, uint64_t stream, bool wait, bool streaming);
  /// Sets every element to @p value (one element of this->type).
  void fill(const void* value);
};

/// Deletes storages through storage::retire (the handle table's deleter).
struct storage_deleter {
  void operator()(storage* s) const noexcept { storage::retire(s); }
};

/// Builds a strided_array over caller memory, validating shape against @p expected.
strided_array caller_array(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                           const char* dtype_str, dtype fallback, const char* param);

}  // namespace gts
