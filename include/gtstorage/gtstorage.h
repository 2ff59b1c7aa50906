/*
 * gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * @file gtstorage.h
 * @brief The one public header of libgtstorage: a stable C ABI over opaque handles.
 *
 * Conventions used everywhere in this header:
 *
 * - Every function returns an `int` status: #GTSTORAGE_OK (0) on success, a negative
 *   ::gtstorage_status value on failure. On failure nothing the caller owns is modified except
 *   where stated, nothing already allocated is lost, and gtstorage_last_error() returns a
 *   thread-local message that names the offending parameter and the allowed range.
 * - @anchor gtstorage_common_statuses **Statuses.** The `@return` of each function lists
 *   #GTSTORAGE_OK and the statuses that function returns for its own reasons, with their
 *   conditions. Every function that returns a status runs behind one boundary that turns any
 *   other failure into a status as well, so these are not repeated per function: an allocation
 *   of the library's own bookkeeping that fails (a handle table that is full, a message, a
 *   staging buffer) is #GTSTORAGE_ERROR_OUT_OF_MEMORY, and a failure the library did not
 *   foresee (a bug) is #GTSTORAGE_ERROR_INTERNAL. A function that needs the device backend
 *   (the "Devices" functions, and storages, wraps and DLPack tensors of device or pinned memory)
 *   fails with #GTSTORAGE_ERROR_INVALID_ARGUMENT, or #GTSTORAGE_ERROR_UNSUPPORTED for a backend
 *   this build lacks, when the environment variable GTSTORAGE_DEVICE_BACKEND names none it can
 *   use. Functions that return no status (version queries, names, messages) never fail.
 * - No function aborts, exits, or lets a C++ exception escape.
 * - Extents, indices and halo widths are counted in **elements**; strides, offsets, alignments and
 *   sizes are counted in **bytes** unless the name says otherwise.
 * - Arrays indexed by dimension are ordered like the storage's shape (the *semantic* order given
 *   by its dims labels, e.g. I, J, K, then data dims), never in memory order.
 * - Structs passed in or out begin with `struct_size`; the caller sets it to `sizeof` of the
 *   struct it was compiled with (every struct has a `*_INIT` macro that does this, input and
 *   output structs alike), so fields can be appended in later versions without breaking
 *   existing callers. A library accepts exactly the sizes that struct had in its own and in
 *   earlier released versions (the table below); an input struct is read only up to the
 *   caller's size (fields an older caller does not know take their defaults) and an output
 *   struct is written only up to it (struct_size itself is left as the caller set it). Any other
 *   value is #GTSTORAGE_ERROR_INVALID_ARGUMENT: the larger size of a newer header, and above all
 *   the garbage of a struct that was not initialized, which a "larger is fine" rule would turn
 *   into reads past the caller's struct.
 *
 *   | struct (x86-64 / LP64 sizes in bytes) | 1.0 | 1.1 |
 *   |---------------------------------------|-----|-----|
 *   | ::gtstorage_array                     |  40 |  40 |
 *   | ::gtstorage_create_options            | 112 | 120 |
 *   | ::gtstorage_wrap_options              | 104 | 104 |
 *   | ::gtstorage_plan_info                 | 992 | 992 |
 *   | ::gtstorage_preset_info               |  72 |  72 |
 *   | ::gtstorage_interface_info            | 992 | 992 |
 *   | ::gtstorage_stats                     |  72 | 104 |
 *   | ::gtstorage_transfer_stats            |  40 |  40 |
 *   | ::gtstorage_pool_stats                |  —  |  72 |
 *   | ::gtstorage_dlpack_options            |  —  |  24 |
 *
 * - Options are initialized by their `*_INIT` macro, or (for bindings that cannot use macros) by
 *   `gtstorage_X_init_sized(options, sizeof *options)`, which writes the defaults of exactly
 *   `struct_size` bytes, one of the sizes above, and nothing past them. The older
 *   `gtstorage_X_init(options)` writes the layout of the version that introduced it (1.0 for
 *   create and wrap options, 1.1 for DLPack options) and sets struct_size to that size, so it
 *   never writes past a struct of that version either; fields appended later keep what the
 *   caller had in them and are not read by the library.
 * - Two tiers. This header is the stable API and ABI. Test, diagnostic and tuning hooks
 *   (reference counts, resetting counters, switching the device backend) are declared in
 *   gtstorage_experimental.h, which has no ABI promise: they may change or go away in any minor
 *   version. Include it, or define `GTSTORAGE_EXPERIMENTAL` before including this header, to
 *   use them. Deprecated functions stay exported and working within a major version; their
 *   declarations carry #GTSTORAGE_DEPRECATED (define `GTSTORAGE_NO_DEPRECATION_WARNINGS` to
 *   silence the compiler's warnings).
 * - Zero extents: a storage, view, wrapped buffer or caller array may have extents 0; it has no
 *   elements, every operation on it (copy, fill, sync, view, export) succeeds and touches no
 *   memory, and a `data` pointer of it may be NULL where a field says so (never dereferenced).
 *   A 0-d storage (ndim 0) has exactly one element.
 * - Alignment of caller memory: wrapped memory (gtstorage_wrap(), gtstorage_wrap_dlpack()) and
 *   caller arrays (::gtstorage_array) need not be aligned to their item size: an address that is
 *   not a multiple of it (e.g. a `<f8` at an odd byte address of a packed record) is accepted
 *   on the host and on the device, and every copy, fill and sync accesses it correctly (at
 *   lower speed); the descriptors report the address as it is. Strides must still be multiples
 *   of the item size. Only storages the library allocates are aligned as their plan says.
 * - Dtypes are NumPy typestrs: `<f8`, `<f4`, `<f2`, `<i1` … `<i8`, `<u1` … `<u8`, `|b1`, `<c8`,
 *   `<c16` (`|` and `=` are accepted for the byte order, `>` is rejected on little-endian hosts).
 */
#ifndef GTSTORAGE_GTSTORAGE_H
#define GTSTORAGE_GTSTORAGE_H

#include <stddef.h>
#include <stdint.h>

/** @def GTSTORAGE_API
 *  Marks the exported functions (default visibility; dllexport/dllimport on Windows). */
#if defined(_WIN32)
#if defined(GTSTORAGE_BUILDING)
#define GTSTORAGE_API __declspec(dllexport)
#else
#define GTSTORAGE_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define GTSTORAGE_API __attribute__((visibility("default")))
#else
#define GTSTORAGE_API
#endif

/** @def GTSTORAGE_DEPRECATED
 *  Marks a declaration deprecated (`__attribute__((deprecated(msg)))` with GCC and Clang,
 *  `__declspec(deprecated(msg))` with MSVC): a use compiles, with a warning that names the
 *  replacement. Define `GTSTORAGE_NO_DEPRECATION_WARNINGS` before including the header to
 *  silence them. Deprecated functions keep working until the next major version. */
#if defined(GTSTORAGE_NO_DEPRECATION_WARNINGS) || defined(GTSTORAGE_BUILDING)
#define GTSTORAGE_DEPRECATED(msg)
#elif defined(__GNUC__)
#define GTSTORAGE_DEPRECATED(msg) __attribute__((deprecated(msg)))
#elif defined(_MSC_VER)
#define GTSTORAGE_DEPRECATED(msg) __declspec(deprecated(msg))
#else
#define GTSTORAGE_DEPRECATED(msg)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================== */
/** @name Version
 *  Compile-time macros next to the runtime query, so a program can check that the library it
 *  loaded is at least the one it was compiled against. */
/** @{ */

#define GTSTORAGE_VERSION_MAJOR 1 /**< Incremented on incompatible ABI changes (SONAME). */
#define GTSTORAGE_VERSION_MINOR 1 /**< Incremented when functions or struct fields are added. */
#define GTSTORAGE_VERSION_PATCH 0 /**< Incremented for fixes. */
/** Version as one number: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define GTSTORAGE_VERSION_NUMBER \
  (GTSTORAGE_VERSION_MAJOR * 10000 + GTSTORAGE_VERSION_MINOR * 100 + GTSTORAGE_VERSION_PATCH)

/**
 * Runtime version of the loaded library, encoded like #GTSTORAGE_VERSION_NUMBER.
 *
 * @return MAJOR * 10000 + MINOR * 100 + PATCH of the library (not a status; never fails).
 */
GTSTORAGE_API uint32_t gtstorage_version(void);

/**
 * Runtime version of the loaded library as a string.
 *
 * @return A static string "MAJOR.MINOR.PATCH" (not a status). Never NULL; do not free.
 */
GTSTORAGE_API const char* gtstorage_version_string(void);

/** @} */

/* ============================================================================================== */
/** @name Limits */
/** @{ */

/** Largest number of dimensions of a storage. */
#define GTSTORAGE_MAX_NDIM 16
/** Size of one dims label including its terminating NUL ("I", "J", "K", "0" … "15"). */
#define GTSTORAGE_DIM_LABEL_SIZE 4
/** Size of a typestr buffer including its terminating NUL (e.g. "<c16"). */
#define GTSTORAGE_TYPESTR_SIZE 8
/** Size of a preset name buffer including its terminating NUL. */
#define GTSTORAGE_PRESET_NAME_SIZE 32

/** @} */

/* ============================================================================================== */
/** @name Status codes and errors */
/** @{ */

/** Status returned by every function. Values are fixed forever; new codes are only appended. */
typedef enum gtstorage_status {
  GTSTORAGE_OK = 0,                       /**< Success. */
  GTSTORAGE_ERROR_INVALID_ARGUMENT = -1,  /**< A parameter is NULL, out of range or malformed. */
  GTSTORAGE_ERROR_INVALID_HANDLE = -2,    /**< Handle never issued, already released, or 0. */
  GTSTORAGE_ERROR_OUT_OF_MEMORY = -3,     /**< An allocation failed (host or device). */
  GTSTORAGE_ERROR_OVERFLOW = -4,          /**< A size computation does not fit in 64 bits. */
  GTSTORAGE_ERROR_NO_SUCH_BUFFER = -5,    /**< The storage has no buffer on the requested side. */
  GTSTORAGE_ERROR_NO_DEVICE = -6,         /**< No usable device (no driver, no GPU, not built). */
  GTSTORAGE_ERROR_DEVICE = -7,            /**< The device runtime reported a failure. */
  GTSTORAGE_ERROR_UNKNOWN_PRESET = -8,    /**< Preset name not registered; message lists names. */
  GTSTORAGE_ERROR_SHAPE_MISMATCH = -9,    /**< Two storages/buffers of different shape. */
  GTSTORAGE_ERROR_SYNC_CONFLICT = -10,    /**< Host and device both modified without a sync. */
  GTSTORAGE_ERROR_READONLY = -11,         /**< Write requested on a read-only storage. */
  GTSTORAGE_ERROR_UNSUPPORTED = -12,      /**< Valid request this build or storage cannot do. */
  GTSTORAGE_ERROR_BUFFER_TOO_SMALL = -13, /**< A caller-provided output buffer is too small. */
  /** The GPU driver is older than the CUDA runtime this library was built with; the message
   *  names both versions (update the driver, or use a build made with an older toolkit). */
  GTSTORAGE_ERROR_DRIVER_TOO_OLD = -14,
  /** Communication between processes failed (libgtstorage_mpi: an MPI call returned an error,
   *  or another process of the collective call failed); the message names the MPI function,
   *  the MPI error string or the process that failed. Since 1.1. */
  GTSTORAGE_ERROR_COMMUNICATION = -15,
  /** Python code called through libgtstorage_python raised an exception, or the interpreter
   *  could not start or is not running (gtstorage_python.h); the message names the function,
   *  the exception type and text, and the innermost traceback frame. Since 1.1. */
  GTSTORAGE_ERROR_PYTHON = -16,
  GTSTORAGE_ERROR_INTERNAL = -99 /**< A bug in gtstorage; please report it. */
} gtstorage_status;

/**
 * Message of the last failed call on the calling thread, or "" if the last call succeeded.
 *
 * It names the offending parameter first ("shape: extent -1 of dimension 0 … must be ≥ 0").
 *
 * @return The message (not a status; never NULL). The string is owned by the library and valid
 *         until the next gtstorage call on this thread.
 */
GTSTORAGE_API const char* gtstorage_last_error(void);

/**
 * Static name of a status code, e.g. "GTSTORAGE_ERROR_INVALID_HANDLE".
 *
 * @param status A ::gtstorage_status value; any other integer is accepted too.
 * @return The name of @p status, "GTSTORAGE_UNKNOWN_STATUS" for a value that is not a
 *         ::gtstorage_status (not a status; never NULL; do not free).
 */
GTSTORAGE_API const char* gtstorage_status_name(int status);

/**
 * Records a message as the calling thread's last error, for libraries built on gtstorage.
 *
 * Records @p message as what gtstorage_last_error() returns and returns @p status, for libraries
 * built on gtstorage (libgtstorage_mpi, bindings) that report their failures through the same
 * channel. Since 1.1.
 *
 * @param status The ::gtstorage_status to report. #GTSTORAGE_OK clears the message (@p message is
 *        then ignored).
 * @param message NUL-terminated text to record, copied (the caller keeps its string); messages
 *        longer than 1023 bytes are cut. NULL records the name of @p status
 *        (gtstorage_status_name()).
 * @return @p status itself. Never fails.
 */
GTSTORAGE_API int gtstorage_set_error(int status, const char* message);

/** @} */

/* ============================================================================================== */
/** @name Handles
 *
 * A storage is referred to by a ::gtstorage_handle: a 64-bit integer that encodes a slot and a
 * generation in the library's handle table. Handles are not pointers; a handle that was released
 * (or never issued, or is 0) is detected and reported as #GTSTORAGE_ERROR_INVALID_HANDLE in
 * every build. Each handle carries a reference count starting at 1; every view is a new handle
 * that keeps the underlying buffers alive. Handles are valid in every thread. Retain and release
 * are atomic with the generation check: when threads release the last reference at once, one
 * release succeeds and the others return #GTSTORAGE_ERROR_INVALID_HANDLE, and a stale release
 * never touches the handle that reuses the slot. Using a handle (a query, a copy) while another
 * thread drops its last reference is still a race in the caller.
 * */
/** @{ */

/** Opaque handle to a storage or view. 0 (#GTSTORAGE_NULL_HANDLE) is never a valid handle. */
typedef uint64_t gtstorage_handle;

/** The null handle. */
#define GTSTORAGE_NULL_HANDLE ((gtstorage_handle)0)

/**
 * Adds a reference to a storage or view handle.
 *
 * @param handle The handle.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is 0, was never issued or was released;
 *         #GTSTORAGE_ERROR_OVERFLOW if @p handle already has 2^32 - 1 references.
 */
GTSTORAGE_API int gtstorage_retain(gtstorage_handle handle);

/**
 * Drops a reference to a storage or view handle.
 *
 * At zero the handle becomes invalid and, once no other view refers to them, the buffers are
 * freed (or the wrap release callback runs).
 *
 * @param handle The handle.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is 0, was never issued or was already
 *         released (releasing a handle twice changes nothing).
 */
GTSTORAGE_API int gtstorage_release(gtstorage_handle handle);

/* gtstorage_refcount() (a test hook) is declared in gtstorage_experimental.h. */

/** @} */

/* ============================================================================================== */
/** @name Enumerations (fixed values) */
/** @{ */

/** Initial contents of a new storage. */
typedef enum gtstorage_init {
  GTSTORAGE_INIT_UNINITIALIZED = 0, /**< Leave memory as allocated (like numpy.empty). */
  GTSTORAGE_INIT_ZEROS = 1,         /**< All bytes zero (halo and padding included). */
  GTSTORAGE_INIT_ONES = 2,          /**< Every element 1 of the dtype (true for `|b1`). */
  GTSTORAGE_INIT_VALUE = 3,         /**< Every element equals `fill_value`. */
  GTSTORAGE_INIT_COPY = 4           /**< Copy from `source` (any strides, converting dtype). */
} gtstorage_init;

/** Where a storage lives. DEFAULT takes the preset's device. */
typedef enum gtstorage_device {
  GTSTORAGE_DEVICE_DEFAULT = 0, /**< As the preset says. */
  GTSTORAGE_DEVICE_CPU = 1,     /**< Host memory only. */
  GTSTORAGE_DEVICE_GPU = 2      /**< A GPU (CUDA, HIP or the emulated device). */
} gtstorage_device;

/** How host and device copies relate for a GPU storage (GDP-3 `managed`). */
typedef enum gtstorage_managed {
  GTSTORAGE_MANAGED_DEFAULT = 0, /**< NONE for device-only presets. */
  GTSTORAGE_MANAGED_NONE = 1,    /**< Device buffer only (GDP-3 `managed=False`). */
  GTSTORAGE_MANAGED_MIRROR = 2,  /**< Host + device, library tracks the modified side. */
  GTSTORAGE_MANAGED_UNIFIED = 3  /**< One unified-memory buffer (cudaMallocManaged). */
} gtstorage_managed;

/** Whether a storage uses the memory pools (gtstorage_create_options.pool; since 1.1). */
typedef enum gtstorage_pool_use {
  GTSTORAGE_POOL_DEFAULT = 0, /**< As the process is set (pooled unless the limit is 0). */
  GTSTORAGE_POOL_OFF = 1      /**< Fresh memory, freed when released (never kept for reuse). */
} gtstorage_pool_use;

/**
 * How the strides of a created storage are chosen (gtstorage_create_options.pitch_padding; since
 * 1.1). Either way only the plan changes: every kernel, view and export takes any strides.
 */
typedef enum gtstorage_pitch_padding {
  /** GT4Py's strides (the default): the contiguous dimension's extent is padded to the alignment
   *  and every other stride is the product of the (padded) extents of the faster dimensions. */
  GTSTORAGE_PITCH_PADDING_NONE = 0,
  /**
   * Also raises every other stride of 4096 bytes or more to the smallest odd multiple of
   * u = lcm(64, alignment, itemsize) bytes not below it, so that no such stride is a multiple
   * of 4 KiB (each stride is computed from the padded one below it, as with NONE).
   * With GT4Py's strides a field of power-of-two extents has pitches of whole 4 KiB multiples,
   * so the lines a layout-changing copy or a stencil reads across those pitches share one L1
   * set; the padded strides spread them over all sets (why, and measured figures: docs/guide.md,
   * "Alignment and padding"). Each padded stride grows by less than 2u bytes (under 3.2% of
   * 4 KiB for u = 64); strides below 4 KiB, the contiguous dimension and the alignment of the
   * aligned element are kept. Nothing is padded where u is a multiple of 4096 (an alignment of
   * 4 KiB or more). The strides differ from gt4py.storage's: code that computes strides itself
   * instead of reading them must not ask for this.
   */
  GTSTORAGE_PITCH_PADDING_AVOID_ALIASING = 1
} gtstorage_pitch_padding;

/** Kind of host memory. */
typedef enum gtstorage_host_memory {
  GTSTORAGE_HOST_PAGEABLE = 0, /**< Ordinary aligned memory (2 MiB-aligned huge pages if large). */
  GTSTORAGE_HOST_PINNED = 1    /**< Page-locked memory (cudaHostAlloc); needs a device backend. */
} gtstorage_host_memory;

/** Side of a storage. */
typedef enum gtstorage_side {
  GTSTORAGE_SIDE_HOST = 0,  /**< The host buffer. */
  GTSTORAGE_SIDE_DEVICE = 1 /**< The device buffer. */
} gtstorage_side;

/** Synchronization state of a host/device pair, shared by every view of the buffers. */
typedef enum gtstorage_sync_state {
  GTSTORAGE_SYNC_CLEAN = 0,       /**< Both sides hold the same data (or only one side exists). */
  GTSTORAGE_SYNC_HOST_DIRTY = 1,  /**< Host was modified since the last sync. */
  GTSTORAGE_SYNC_DEVICE_DIRTY = 2 /**< Device was modified since the last sync. */
} gtstorage_sync_state;

/**
 * Operations of the deprecated gtstorage_sync() and gtstorage_sync_async() (GDP-3's methods
 * plus acquire/touch). **Deprecated**: every value stays valid for existing callers, but new
 * code uses the smaller vocabulary of the "Host/device synchronization" functions:
 * HOST_TO_DEVICE / ACQUIRE_DEVICE = gtstorage_sync_to(h, #GTSTORAGE_SIDE_DEVICE, flags);
 * DEVICE_TO_HOST / ACQUIRE_HOST = gtstorage_sync_to(h, #GTSTORAGE_SIDE_HOST, flags);
 * SET_*_MODIFIED / TOUCH_* = gtstorage_modify(); SET_SYNCHRONIZED =
 * gtstorage_mark_synchronized(); SYNCHRONIZE = gtstorage_sync_to() of the side that
 * gtstorage_need_sync() names; WAIT_STREAM = gtstorage_wait_stream().
 */
typedef enum gtstorage_sync_op {
  GTSTORAGE_SYNC_HOST_TO_DEVICE = 1,      /**< Copy host -> device if host is dirty (or force). */
  GTSTORAGE_SYNC_DEVICE_TO_HOST = 2,      /**< Copy device -> host if device is dirty (or force). */
  GTSTORAGE_SYNC_SYNCHRONIZE = 3,         /**< Copy whichever side is dirty to the other. */
  GTSTORAGE_SYNC_SET_HOST_MODIFIED = 4,   /**< Mark the host side modified. */
  GTSTORAGE_SYNC_SET_DEVICE_MODIFIED = 5, /**< Mark the device side modified. */
  GTSTORAGE_SYNC_SET_SYNCHRONIZED = 6,    /**< Declare both sides equal, without copying. */
  GTSTORAGE_SYNC_ACQUIRE_HOST = 7,        /**< Make the host current before host compute. */
  GTSTORAGE_SYNC_ACQUIRE_DEVICE = 8,      /**< Make the device current before device compute. */
  GTSTORAGE_SYNC_TOUCH_HOST = 9,          /**< Host compute wrote: same as SET_HOST_MODIFIED. */
  GTSTORAGE_SYNC_TOUCH_DEVICE = 10,       /**< Device compute wrote: as SET_DEVICE_MODIFIED. */
  /** Block until the work queued on a stream has completed; no transfer, no state change.
   *  gtstorage_sync() waits for the storage's stream; gtstorage_sync_async() for the stream it
   *  is given (e.g. the producer's stream of a CUDA Array Interface v3 buffer, 1 = legacy
   *  default, 2 = per-thread default), and blocks too. A valid no-op for host-only storages. */
  GTSTORAGE_SYNC_WAIT_STREAM = 11
} gtstorage_sync_op;

/** Flags of gtstorage_sync_to() and gtstorage_modify() (and the deprecated gtstorage_sync()). */
typedef enum gtstorage_sync_flags {
  GTSTORAGE_SYNC_FLAG_NONE = 0,
  /** gtstorage_sync_to(): copy even if the other side is not marked modified.
   *  gtstorage_modify(): discard the other side's unsynchronized changes instead of failing
   *  with #GTSTORAGE_ERROR_SYNC_CONFLICT. */
  GTSTORAGE_SYNC_FLAG_FORCE = 1
} gtstorage_sync_flags;

/** Layout rule of a preset. */
typedef enum gtstorage_layout_rule {
  GTSTORAGE_RULE_BY_DIMS =
      0, /**< GT4Py rule: base ranks of I, J, K by name, data dims outermost. */
  GTSTORAGE_RULE_C_ORDER = 1,      /**< Positional C order (0, 1, …, n-1) whatever the dims. */
  GTSTORAGE_RULE_FORTRAN_ORDER = 2 /**< Positional Fortran order (n-1, …, 0) whatever the dims. */
} gtstorage_layout_rule;

/** Unit of a preset's alignment. */
typedef enum gtstorage_alignment_unit {
  GTSTORAGE_ALIGN_ELEMENTS = 0, /**< Alignment counted in elements (GT4Py): bytes = n * itemsize. */
  GTSTORAGE_ALIGN_BYTES = 1     /**< Alignment counted in bytes (GridTools). */
} gtstorage_alignment_unit;

/** DLPack device type codes (DLDeviceType) used in ::gtstorage_interface_info. */
typedef enum gtstorage_dl_device {
  GTSTORAGE_DL_CPU = 1,  /**< Host memory (also the emulated device's pinned and unified memory). */
  GTSTORAGE_DL_CUDA = 2, /**< CUDA device memory. */
  GTSTORAGE_DL_CUDA_HOST = 3,  /**< Pinned host memory of the CUDA backend. */
  GTSTORAGE_DL_ROCM = 10,      /**< ROCm device (and managed) memory. */
  GTSTORAGE_DL_ROCM_HOST = 11, /**< Pinned host memory of the HIP backend. */
  /** kDLExtDev: device memory of the emulated device. It is host memory playing a GPU, and says
   *  so: consumers (CuPy, PyTorch) refuse it instead of taking it for a CUDA pointer. */
  GTSTORAGE_DL_EXT_DEV = 12,
  GTSTORAGE_DL_CUDA_MANAGED = 13 /**< CUDA managed (unified) memory. */
} gtstorage_dl_device;

/** Slice kinds for ::gtstorage_slice_spec. */
typedef enum gtstorage_slice_kind {
  GTSTORAGE_SLICE_RANGE = 0, /**< start:stop:step, keeps the dimension. */
  GTSTORAGE_SLICE_INDEX = 1  /**< Single index `start`, drops the dimension. */
} gtstorage_slice_kind;

/** "Not given" value for ::gtstorage_slice_spec start/stop (Python's None). */
#define GTSTORAGE_SLICE_NONE INT64_MIN

/** @} */

/* ============================================================================================== */
/** @name Describing caller memory */
/** @{ */

/**
 * A strided N-d array in caller memory (used as a copy source or destination).
 * Nothing is owned: the library never frees anything reachable from this struct.
 */
typedef struct gtstorage_array {
  uint32_t struct_size; /**< sizeof(gtstorage_array). */
  uint32_t ndim;        /**< Number of dimensions, 0 … #GTSTORAGE_MAX_NDIM. */
  void* data;           /**< Address of element (0, …, 0). May be NULL only if an extent is 0. */
  const int64_t* shape; /**< ndim extents in elements. */
  const int64_t* strides; /**< ndim strides in bytes (may be negative); NULL = C-contiguous. */
  const char* dtype;      /**< Typestr of the elements; NULL = the storage's dtype. */
} gtstorage_array;

/** Initializer for ::gtstorage_array. */
#define GTSTORAGE_ARRAY_INIT \
  { sizeof(gtstorage_array), 0, NULL, NULL, NULL, NULL }

/** @} */

/* ============================================================================================== */
/** @name Creating storages */
/** @{ */

/** Parameters of gtstorage_create() and gtstorage_plan(). Start from
 * #GTSTORAGE_CREATE_OPTIONS_INIT. */
typedef struct gtstorage_create_options {
  uint32_t struct_size; /**< sizeof(gtstorage_create_options). */
  /** Number of dimensions, 0 … #GTSTORAGE_MAX_NDIM. 0 is a scalar (NumPy's shape ()): exactly
   *  one element, no extents, no padding; its per-dimension arrays may be NULL. */
  uint32_t ndim;
  /**
   * ndim extents in elements, halo included; each ≥ 0. A storage with an extent 0 has no
   * elements and allocates no bytes (allocation_bytes 0); its `data` is still a valid, non-null
   * address, never dereferenced, and every copy, fill, sync, view and export of it succeeds and
   * touches nothing. Its strides are those of the same layout with every extent 0 counted as 1
   * (NumPy's rule: a C-order (4, 0, 5) of `<f8` has strides (40, 40, 8)), so they keep the
   * layout's order; its only aligned index in an empty dimension is 0.
   */
  const int64_t* shape;
  /** Typestr; NULL = "<f8". */
  const char* dtype;
  /**
   * Dims labels: either one character per dimension ("IJK", "KJI", "IJK0") or a comma separated
   * list ("I,J,K,0,1,10"). Labels are I, J, K and data dims "0", "1", …; each at most once.
   * NULL = GT4Py's default: "IJK"[:ndim] for ndim ≤ 3, else I, J, K, "0", "1", ….
   */
  const char* dims;
  /** Preset name (see gtstorage_preset_count()); NULL = "numpy". */
  const char* preset;
  /**
   * Explicit layout map (overrides the preset's rule): ndim ranks, a permutation of 0 … ndim-1,
   * where layout[d] is the rank of dimension d in stride order (0 = largest stride,
   * ndim-1 = contiguous). NULL = from the preset.
   */
  const int32_t* layout;
  /** 2*ndim halo widths in elements: halo[2*d] lower, halo[2*d+1] upper. NULL = no halo. */
  const int64_t* halo;
  /** ndim indices of the element whose address is aligned. NULL = the lower halo widths. */
  const int64_t* aligned_index;
  /**
   * Alignment in bytes of the aligned element's address, overriding the preset; 0 = the
   * preset's. Any positive value up to 2^30 that GT4Py accepts: gcd(alignment, itemsize) must
   * be the alignment or the item size, i.e. a multiple of the item size (24 bytes for `<f8`:
   * 3 items per aligned block) or a divisor of it (4 bytes for `<f8`); 12 bytes for `<f8` is
   * refused. It need not be a power of two: the contiguous dimension is padded to a multiple of
   * alignment / itemsize items (or 1), and a block for an alignment that is not a power of two
   * is over-allocated by alignment - 1 bytes, as GT4Py does, on the host and the device.
   */
  int64_t alignment_bytes;
  /** Initial contents, a ::gtstorage_init value. */
  int32_t init;
  /** A ::gtstorage_device value. */
  int32_t device;
  /** Device ordinal for GPU storages; -1 = the calling thread's current device (cudaGetDevice,
   *  as set by cudaSetDevice or gtstorage_set_device()). */
  int32_t device_id;
  /** A ::gtstorage_managed value. */
  int32_t managed;
  /** A ::gtstorage_host_memory value. */
  int32_t host_memory;
  /** Non-zero: the storage is read-only (writes through the API fail). */
  int32_t readonly;
  /** With #GTSTORAGE_INIT_VALUE: address of one element of the storage's dtype. */
  const void* fill_value;
  /** With #GTSTORAGE_INIT_COPY: the source; its shape must equal `shape`. */
  const gtstorage_array* source;
  /* Since 1.1 (a caller built against 1.0 passes the 1.0 struct_size; the field is then
     #GTSTORAGE_POOL_DEFAULT). */
  /** A ::gtstorage_pool_use value: whether this storage's memory comes from and returns to the
   *  memory pools (see "Memory pools"). */
  int32_t pool;
  /** A ::gtstorage_pitch_padding value: GT4Py's strides (the default) or strides padded off
   *  multiples of 4 KiB. Appended in 1.1 after `pool`, in what was that struct's tail padding:
   *  the struct's size did not change. */
  int32_t pitch_padding;
} gtstorage_create_options;

/** Initializer for ::gtstorage_create_options (all defaults; ndim 0, a scalar, until set). */
#define GTSTORAGE_CREATE_OPTIONS_INIT                                                          \
  {                                                                                            \
    sizeof(gtstorage_create_options), 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0,          \
        GTSTORAGE_INIT_UNINITIALIZED, GTSTORAGE_DEVICE_DEFAULT, -1, GTSTORAGE_MANAGED_DEFAULT, \
        GTSTORAGE_HOST_PAGEABLE, 0, NULL, NULL, GTSTORAGE_POOL_DEFAULT,                        \
        GTSTORAGE_PITCH_PADDING_NONE                                                           \
  }

/**
 * Writes the defaults of #GTSTORAGE_CREATE_OPTIONS_INIT into an options struct of a given size.
 *
 * Writes the first @p struct_size bytes of the defaults into @p options and sets
 * options->struct_size to @p struct_size; nothing past @p struct_size bytes is written.
 *
 * @param options The struct to initialize; not NULL.
 * @param struct_size Its size in bytes (pass `sizeof *options`): a size
 *        ::gtstorage_create_options had in a released version or this one.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p options is NULL or @p struct_size is not such a
 *         size (nothing is written then).
 */
GTSTORAGE_API int gtstorage_create_options_init_sized(gtstorage_create_options* options,
                                                      size_t struct_size);

/**
 * Writes the defaults of the 1.0 layout of ::gtstorage_create_options.
 *
 * Writes 112 bytes on LP64 and sets struct_size to that size. Prefer
 * gtstorage_create_options_init_sized().
 *
 * @param options The struct to initialize (at least the 1.0 size); not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p options is NULL.
 */
GTSTORAGE_API int gtstorage_create_options_init(gtstorage_create_options* options);

/**
 * Creates a storage.
 *
 * @param options What to create (see ::gtstorage_create_options); not NULL. Read only during the
 *        call: the caller keeps it and every array it points to.
 * @param[out] out Receives the new handle, with reference count 1; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p options or @p out is NULL, options->struct_size
 *         is not an accepted size, or a field is out of range or malformed (ndim, shape, dtype,
 *         dims, layout, halo, aligned_index, alignment_bytes, a value that is not of its enum,
 *         a NULL fill_value with #GTSTORAGE_INIT_VALUE or source with #GTSTORAGE_INIT_COPY,
 *         managed memory for a CPU storage, device_id below -1 or not a device);
 *         #GTSTORAGE_ERROR_UNKNOWN_PRESET if the preset is not registered;
 *         #GTSTORAGE_ERROR_OVERFLOW if the size of the storage does not fit in 64 bits;
 *         #GTSTORAGE_ERROR_SHAPE_MISMATCH if the source of #GTSTORAGE_INIT_COPY has another shape;
 *         #GTSTORAGE_ERROR_OUT_OF_MEMORY if the host or device memory cannot be allocated;
 *         #GTSTORAGE_ERROR_NO_DEVICE (or #GTSTORAGE_ERROR_DRIVER_TOO_OLD) if a GPU storage or
 *         #GTSTORAGE_HOST_PINNED memory is asked for without a usable device;
 *         #GTSTORAGE_ERROR_UNSUPPORTED if the device runtime does not support the memory asked for;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_create(const gtstorage_create_options* options, gtstorage_handle* out);

/** Release callback of gtstorage_wrap(): called once, with `user_data`, after the last reference.
 */
typedef void (*gtstorage_release_fn)(void* user_data);

/**
 * Parameters of gtstorage_wrap() (GDP-3 `as_storage`): describe caller-owned memory.
 * Start from #GTSTORAGE_WRAP_OPTIONS_INIT.
 */
typedef struct gtstorage_wrap_options {
  uint32_t struct_size; /**< sizeof(gtstorage_wrap_options). */
  uint32_t ndim;        /**< Number of dimensions, 0 (one element) … #GTSTORAGE_MAX_NDIM. */
  /** Host address of element (0, …, 0); NULL if only device_data, or for an array without
   *  elements (the descriptors then report an address of the library's own, never NULL).
   *  Once a device backend is in use, memory its runtime reports as device memory is refused
   *  here (host code would address it); managed and pinned memory are accepted, and where
   *  the runtime knows their allocation every element must lie inside it. */
  void* data;
  const int64_t* shape;   /**< ndim extents in elements, halo included. */
  const int64_t* strides; /**< ndim host strides in bytes; NULL = C-contiguous. */
  const char* dtype;      /**< Typestr; NULL = "<f8". */
  const char* dims;       /**< As in ::gtstorage_create_options. */
  const int64_t* halo;    /**< As in ::gtstorage_create_options. */
  int32_t readonly;       /**< Non-zero: the memory must not be written through gtstorage. */
  /** Device ordinal of device_data; -1 = where the runtime says device_data lives
   *  (cudaPointerGetAttributes). A given ordinal must agree with it; without device_data it
   *  must be -1 (#GTSTORAGE_ERROR_INVALID_ARGUMENT otherwise). */
  int32_t device_id;
  gtstorage_release_fn release; /**< Called once after the last reference; may be NULL. */
  void* user_data;              /**< Passed to `release`. */
  /** Device address of element (0, …, 0), or NULL: device, managed or pinned host memory of the
   *  active device backend (its kind and device come from the runtime and are what the
   *  descriptors report); ordinary host memory is refused. Where the backend knows the
   *  allocation behind the address (its own memory; the runtime's range of any device,
   *  managed or pinned allocation: cuMemGetAddressRange, hipMemGetAddressRange), every
   *  element must lie inside it. */
  void* device_data;
  const int64_t* device_strides; /**< Strides of device_data in bytes; NULL = same as host. */
  /** Initial ::gtstorage_sync_state of a host+device pair; a wrap of one buffer must pass
   *  #GTSTORAGE_SYNC_CLEAN (a dirty side needs two sides). */
  int32_t sync_state;
  int32_t reserved; /**< Must be 0. */
} gtstorage_wrap_options;

/** Initializer for ::gtstorage_wrap_options. */
#define GTSTORAGE_WRAP_OPTIONS_INIT                                                           \
  {                                                                                           \
    sizeof(gtstorage_wrap_options), 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, -1, NULL, NULL, \
        NULL, NULL, GTSTORAGE_SYNC_CLEAN, 0                                                   \
  }

/**
 * Writes the defaults of #GTSTORAGE_WRAP_OPTIONS_INIT into an options struct of a given size.
 *
 * As gtstorage_create_options_init_sized(), for ::gtstorage_wrap_options.
 *
 * @param options The struct to initialize; not NULL.
 * @param struct_size Its size in bytes (pass `sizeof *options`): a size ::gtstorage_wrap_options
 *        had in a released version or this one.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p options is NULL or @p struct_size is not such a
 *         size (nothing is written then).
 */
GTSTORAGE_API int gtstorage_wrap_options_init_sized(gtstorage_wrap_options* options,
                                                    size_t struct_size);

/**
 * Writes the defaults of the 1.0 layout of ::gtstorage_wrap_options.
 *
 * Writes 104 bytes on LP64 and sets struct_size to that size. Prefer
 * gtstorage_wrap_options_init_sized().
 *
 * @param options The struct to initialize (at least the 1.0 size); not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p options is NULL.
 */
GTSTORAGE_API int gtstorage_wrap_options_init(gtstorage_wrap_options* options);

/**
 * Wraps caller-owned memory as a storage, without copying (GDP-3 `as_storage`).
 *
 * Strides must be multiples of the item size and must not make two elements overlap. `data` and
 * `device_data` need not be aligned to the item size (see "Alignment of caller memory" at the
 * top of this header); extents may be 0. The memory stays the caller's: it must stay valid until
 * the release callback runs (after the last reference), which is not called when gtstorage_wrap()
 * fails.
 *
 * @param options The memory to wrap (see ::gtstorage_wrap_options); not NULL. Read only during the
 *        call, except the memory it describes.
 * @param[out] out Receives the new handle, with reference count 1; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p options or @p out is NULL, options->struct_size
 *         is not an accepted size, `reserved` is not 0, or a field is out of range or malformed
 *         (ndim, shape, strides not multiples of the item size or overlapping, dtype, dims,
 *         halo, no address for an array with elements, memory of the wrong kind for `data` or
 *         `device_data` or elements outside its known allocation, a device_id that disagrees,
 *         a sync_state that is not a ::gtstorage_sync_state or not CLEAN for one buffer);
 *         #GTSTORAGE_ERROR_OVERFLOW if the array's span does not fit the address space;
 *         #GTSTORAGE_ERROR_NO_DEVICE (or #GTSTORAGE_ERROR_DRIVER_TOO_OLD) if `device_data` is
 *         given without a usable device;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_wrap(const gtstorage_wrap_options* options, gtstorage_handle* out);

/** @} */

/* ============================================================================================== */
/** @name Allocation plan (pure; allocates nothing) */
/** @{ */

/** Result of gtstorage_plan(): how gtstorage_create() lays out a storage. */
typedef struct gtstorage_plan_info {
  uint32_t struct_size;                      /**< sizeof(gtstorage_plan_info), set by the caller. */
  uint32_t ndim;                             /**< Number of dimensions. */
  int64_t shape[GTSTORAGE_MAX_NDIM];         /**< Extents in elements (halo included). */
  int64_t padded_shape[GTSTORAGE_MAX_NDIM];  /**< Extents after padding the contiguous dim. */
  int64_t strides[GTSTORAGE_MAX_NDIM];       /**< Strides in bytes. */
  int32_t layout[GTSTORAGE_MAX_NDIM];        /**< Layout map (0 = largest stride). */
  int64_t halo[GTSTORAGE_MAX_NDIM][2];       /**< Halo widths (lower, upper) in elements. */
  int64_t aligned_index[GTSTORAGE_MAX_NDIM]; /**< Index of the aligned element. */
  char dims[GTSTORAGE_MAX_NDIM][GTSTORAGE_DIM_LABEL_SIZE]; /**< Dims labels. */
  char typestr[GTSTORAGE_TYPESTR_SIZE];                    /**< Normalized typestr, e.g. "<f8". */
  char preset[GTSTORAGE_PRESET_NAME_SIZE];                 /**< Preset used. */
  int64_t itemsize;                                        /**< Bytes per element. */
  int64_t alignment_bytes;                                 /**< Effective alignment in bytes. */
  /** Offset of element (0, …, 0) from the start of a block whose address is a multiple of
   *  alignment_bytes (0 for a storage without elements). */
  int64_t byte_offset;
  int64_t padded_bytes;     /**< Bytes spanned by the padded shape (0 if an extent is 0). */
  int64_t allocation_bytes; /**< Bytes allocated: byte_offset + padded_bytes. */
  int32_t contiguous_dim;   /**< The padded (contiguous) dimension, -1 if ndim == 0. */
  int32_t device;           /**< Resolved ::gtstorage_device (CPU or GPU). */
} gtstorage_plan_info;

/** Initializer of ::gtstorage_plan_info (an output struct: only struct_size matters). */
#define GTSTORAGE_PLAN_INFO_INIT                                                                 \
  {                                                                                              \
    sizeof(gtstorage_plan_info), 0, {0}, {0}, {0}, {0}, {{0}}, {0}, {{0}}, {0}, {0}, 0, 0, 0, 0, \
        0, 0, 0                                                                                  \
  }

/**
 * Computes how gtstorage_create() would lay out a storage; allocates nothing.
 *
 * @param options The storage to plan (as for gtstorage_create(); only the fields of the layout and
 *        `device` are read); not NULL.
 * @param[out] out Receives the plan, up to the struct_size the caller set; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p options or @p out is NULL, a struct_size is not
 *         an accepted size, or a field of the layout is out of range or malformed (ndim, shape,
 *         dtype, dims, layout, halo, aligned_index, alignment_bytes, pitch_padding, device);
 *         #GTSTORAGE_ERROR_UNKNOWN_PRESET if the preset is not registered;
 *         #GTSTORAGE_ERROR_OVERFLOW if the size of the storage does not fit in 64 bits.
 */
GTSTORAGE_API int gtstorage_plan(const gtstorage_create_options* options, gtstorage_plan_info* out);

/** @} */

/* ============================================================================================== */
/** @name Presets */
/** @{ */

/** A preset: alignment, device and layout rule (GT4Py's backend layout info). */
typedef struct gtstorage_preset_info {
  uint32_t struct_size;                  /**< sizeof(gtstorage_preset_info). */
  uint32_t reserved;                     /**< Must be 0. */
  char name[GTSTORAGE_PRESET_NAME_SIZE]; /**< Name, e.g. "gt:cpu_kfirst". */
  /** Alignment value, 1 … 2^30, in `alignment_unit` (any value, not only powers of two; a plan
   *  refuses one that in bytes is neither a multiple nor a divisor of its item size). */
  int64_t alignment;
  int32_t alignment_unit; /**< ::gtstorage_alignment_unit. */
  int32_t device;         /**< #GTSTORAGE_DEVICE_CPU or #GTSTORAGE_DEVICE_GPU. */
  int32_t rule;           /**< ::gtstorage_layout_rule. */
  int32_t base_layout[3]; /**< Ranks of I, J, K with RULE_BY_DIMS (0 = slowest). */
} gtstorage_preset_info;

/** Initializer for ::gtstorage_preset_info. */
#define GTSTORAGE_PRESET_INFO_INIT                                                            \
  {                                                                                           \
    sizeof(gtstorage_preset_info), 0, {0}, 1, GTSTORAGE_ALIGN_ELEMENTS, GTSTORAGE_DEVICE_CPU, \
        GTSTORAGE_RULE_BY_DIMS, {                                                             \
      0, 1, 2                                                                                 \
    }                                                                                         \
  }

/**
 * Number of registered presets (built-in and registered at run time).
 *
 * @param[out] out_count Receives the count; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out_count is NULL.
 */
GTSTORAGE_API int gtstorage_preset_count(int32_t* out_count);

/**
 * Describes the preset at a position of the registration order.
 *
 * @param index 0 … count-1 (gtstorage_preset_count()), in registration order.
 * @param[out] out Receives the preset, up to the struct_size the caller set; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out is NULL, out->struct_size is not an
 *         accepted size or @p index is out of range.
 */
GTSTORAGE_API int gtstorage_preset_at(int32_t index, gtstorage_preset_info* out);

/**
 * Describes the preset of a given name.
 *
 * @param name NUL-terminated preset name, e.g. "gt:cpu_kfirst"; not NULL.
 * @param[out] out Receives the preset, up to the struct_size the caller set; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p name or @p out is NULL or out->struct_size is
 *         not an accepted size;
 *         #GTSTORAGE_ERROR_UNKNOWN_PRESET if no preset has that name (the message lists the
 *         known names).
 */
GTSTORAGE_API int gtstorage_preset_find(const char* name, gtstorage_preset_info* out);

/**
 * Registers (or replaces) a preset at run time. Built-in presets cannot be replaced.
 *
 * @param info The preset; not NULL. Copied: the caller keeps it.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p info is NULL, info->struct_size is not an
 *         accepted size, `reserved` is not 0, the name is empty, not NUL-terminated or that of a
 *         built-in preset, the alignment is not in 1 … 2^30, `alignment_unit`, `device` or
 *         `rule` is not a value of its enum, or `base_layout` is not a permutation of (0, 1, 2).
 */
GTSTORAGE_API int gtstorage_preset_register(const gtstorage_preset_info* info);

/** @} */

/* ============================================================================================== */
/** @name Views
 * A view is a new handle over the same buffers and sync state; it keeps them alive. */
/** @{ */

/** One dimension of a slice, Python semantics (negative start/stop count from the end). */
typedef struct gtstorage_slice_spec {
  int64_t start;    /**< First index, or #GTSTORAGE_SLICE_NONE; the index for SLICE_INDEX. */
  int64_t stop;     /**< One past the last index, or #GTSTORAGE_SLICE_NONE. */
  int64_t step;     /**< Non-zero step; ignored for SLICE_INDEX. */
  int32_t kind;     /**< ::gtstorage_slice_kind. */
  int32_t reserved; /**< Must be 0. */
} gtstorage_slice_spec;

/** Full-range slice of one dimension. */
#define GTSTORAGE_SLICE_ALL \
  { GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 1, GTSTORAGE_SLICE_RANGE, 0 }

/**
 * Makes a view of a storage sliced per dimension, with Python semantics.
 *
 * Halo widths shrink to what remains inside the view (0 for dims with step ≠ 1). A range that
 * selects nothing gives an empty view (extent 0), as in Python.
 *
 * @param src The storage or view to slice.
 * @param spec @p nspec slices (::gtstorage_slice_spec), one per dimension of @p src; may be NULL
 *        when @p nspec is 0. Read only during the call.
 * @param nspec Number of entries of @p spec: the ndim of @p src.
 * @param[out] out Receives the new view's handle, with reference count 1; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p src is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out is NULL, @p spec is NULL with @p nspec > 0,
 *         @p nspec is not the ndim of @p src, or a spec is invalid (a kind that is not a
 *         ::gtstorage_slice_kind, reserved not 0, a step of 0, an index out of range).
 */
GTSTORAGE_API int gtstorage_slice(gtstorage_handle src, const gtstorage_slice_spec* spec,
                                  uint32_t nspec, gtstorage_handle* out);

/**
 * Makes a view with the dimensions permuted: new dimension d is old dimension perm[d].
 *
 * @param src The storage or view to transpose.
 * @param perm @p nperm entries, a permutation of 0 … ndim-1; may be NULL when @p nperm is 0.
 * @param nperm Number of entries of @p perm: the ndim of @p src.
 * @param[out] out Receives the new view's handle, with reference count 1; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p src is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out is NULL, @p perm is NULL with @p nperm > 0,
 *         @p nperm is not the ndim of @p src or @p perm is not a permutation.
 */
GTSTORAGE_API int gtstorage_transpose(gtstorage_handle src, const int32_t* perm, uint32_t nperm,
                                      gtstorage_handle* out);

/**
 * Makes a view without the halo (GDP-3 `domain_view`): every halo width becomes 0.
 *
 * @param src The storage or view.
 * @param[out] out Receives the new view's handle, with reference count 1; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p src is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out is NULL.
 */
GTSTORAGE_API int gtstorage_domain_view(gtstorage_handle src, gtstorage_handle* out);

/** @} */

/* ============================================================================================== */
/** @name Buffer descriptors */
/** @{ */

/**
 * Descriptor of one side of a storage (what `__array_interface__`, `__cuda_array_interface__`,
 * DLPack and Fortran pointers are built from). Filled by gtstorage_interface(); entries of the
 * per-dimension arrays at index ≥ ndim are left unspecified. Nothing in it is owned by the caller.
 */
typedef struct gtstorage_interface_info {
  uint32_t struct_size; /**< sizeof(gtstorage_interface_info), set by the caller. */
  uint32_t ndim;        /**< Number of dimensions of the view. */
  /** Address of element (0, …, 0) of the view on this side; a valid, non-null address (not to
   *  be dereferenced) also for a view without elements. */
  void* data;
  int64_t shape[GTSTORAGE_MAX_NDIM];   /**< Extents in elements. */
  int64_t strides[GTSTORAGE_MAX_NDIM]; /**< Strides in bytes (may be negative for views). */
  int32_t layout[GTSTORAGE_MAX_NDIM];  /**< Layout map: rank of each dim by |stride| (0 largest). */
  int64_t halo[GTSTORAGE_MAX_NDIM][2]; /**< Halo widths (lower, upper) in elements. */
  int64_t origin[GTSTORAGE_MAX_NDIM];  /**< Default origin = lower halo (GT4Py `__gt_origin__`). */
  /** Index of the aligned element within this view, -1 where it lies outside the view. */
  int64_t aligned_index[GTSTORAGE_MAX_NDIM];
  char dims[GTSTORAGE_MAX_NDIM][GTSTORAGE_DIM_LABEL_SIZE]; /**< Dims labels. */
  char typestr[GTSTORAGE_TYPESTR_SIZE];                    /**< Typestr, e.g. "<f8". */
  int64_t itemsize;                                        /**< Bytes per element. */
  int64_t nbytes;           /**< Bytes of the view's elements: product(shape) * itemsize. */
  void* allocation;         /**< Start of the underlying allocation on this side. */
  int64_t allocation_bytes; /**< Size of the underlying allocation in bytes. */
  int64_t byte_offset;      /**< data - allocation, in bytes. */
  int32_t readonly;         /**< Non-zero if writes are not allowed. */
  int32_t device_type;      /**< DLPack device type (::gtstorage_dl_device). */
  int32_t device_id;        /**< DLPack device id (0 for CPU). */
  int32_t side;             /**< ::gtstorage_side described. */
  int32_t sync_state;       /**< ::gtstorage_sync_state of the buffers at the time of the call. */
  int32_t is_c_contiguous;  /**< Non-zero if the view is C-contiguous (no padding, no gaps). */
  uint64_t stream;          /**< Stream for CUDA Array Interface v3 (0 = legacy default). */
} gtstorage_interface_info;

/** Initializer of ::gtstorage_interface_info (an output struct: only struct_size matters). */
#define GTSTORAGE_INTERFACE_INFO_INIT                                                            \
  {                                                                                              \
    sizeof(gtstorage_interface_info), 0, NULL, {0}, {0}, {0}, {{0}}, {0}, {0}, {{0}}, {0}, 0, 0, \
        NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0                                                          \
  }

/**
 * Describes one side of a storage or view: address, shape, strides, halo, dtype, device.
 *
 * A descriptor hands the memory out: work the library left queued on it (an asynchronous sync or
 * copy) is waited for first, as by gtstorage_data() and the DLPack exports.
 *
 * @param handle The storage or view.
 * @param side The side to describe, a ::gtstorage_side.
 * @param[out] out Receives the descriptor, up to the struct_size the caller set; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out is NULL, out->struct_size is not an
 *         accepted size or @p side is not a ::gtstorage_side;
 *         #GTSTORAGE_ERROR_NO_SUCH_BUFFER if the storage has no buffer on @p side;
 *         #GTSTORAGE_ERROR_DEVICE if waiting for the queued work fails.
 */
GTSTORAGE_API int gtstorage_interface(gtstorage_handle handle, int32_t side,
                                      gtstorage_interface_info* out);

/**
 * Address of element (0, …, 0) of one side of a storage or view (the cheapest query).
 *
 * Waits for the work the library left queued on the memory first, as gtstorage_interface().
 *
 * @param handle The storage or view.
 * @param side A ::gtstorage_side.
 * @param[out] out_data Receives the address (not to be dereferenced for a view without elements);
 *        not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out_data is NULL or @p side is not a
 *         ::gtstorage_side;
 *         #GTSTORAGE_ERROR_NO_SUCH_BUFFER if the storage has no buffer on @p side;
 *         #GTSTORAGE_ERROR_DEVICE if waiting for the queued work fails.
 */
GTSTORAGE_API int gtstorage_data(gtstorage_handle handle, int32_t side, void** out_data);

/**
 * Whether a storage has a buffer on a side.
 *
 * @param handle The storage or view.
 * @param side A ::gtstorage_side.
 * @param[out] out_has Receives 1 if @p handle has a buffer on @p side, else 0; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out_has is NULL or @p side is not a
 *         ::gtstorage_side.
 */
GTSTORAGE_API int gtstorage_has_side(gtstorage_handle handle, int32_t side, int32_t* out_has);

/** @} */

/* ============================================================================================== */
/** @name Data movement */
/** @{ */

/**
 * Deep copy of every element of one storage into another.
 *
 * Equal shapes, any layouts, any dtypes (converted like NumPy's unsafe casting). Host sides are
 * used; device storages are handled by their current side (see gtstorage_sync_to()), and the
 * side of @p dst written is marked modified.
 *
 * @param dst The storage or view written.
 * @param src The storage or view read.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p dst or @p src is not a live handle;
 *         #GTSTORAGE_ERROR_SHAPE_MISMATCH if their shapes differ;
 *         #GTSTORAGE_ERROR_READONLY if @p dst is read-only;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_copy(gtstorage_handle dst, gtstorage_handle src);

/**
 * Copies caller memory into a storage (equal shape, any strides and dtype).
 *
 * @param dst The storage or view written.
 * @param src The caller's array (::gtstorage_array; its dtype NULL = that of @p dst); not NULL.
 *        Read only during the call.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p dst is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p src is NULL, src->struct_size is not an
 *         accepted size or a field of @p src is out of range or malformed (ndim, a NULL shape or
 *         data, strides, dtype);
 *         #GTSTORAGE_ERROR_OVERFLOW if the array's span does not fit the address space;
 *         #GTSTORAGE_ERROR_SHAPE_MISMATCH if the shapes differ;
 *         #GTSTORAGE_ERROR_READONLY if @p dst is read-only;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_copy_from_array(gtstorage_handle dst, const gtstorage_array* src);

/**
 * Copies a storage into caller memory (equal shape, any strides and dtype).
 *
 * @param dst The caller's array (::gtstorage_array; its dtype NULL = that of @p src); not NULL.
 *        The memory it describes is written; the struct is read only during the call.
 * @param src The storage or view read.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p src is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p dst is NULL, dst->struct_size is not an
 *         accepted size or a field of @p dst is out of range or malformed (ndim, a NULL shape or
 *         data, strides, dtype);
 *         #GTSTORAGE_ERROR_OVERFLOW if the array's span does not fit the address space;
 *         #GTSTORAGE_ERROR_SHAPE_MISMATCH if the shapes differ;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_copy_to_array(const gtstorage_array* dst, gtstorage_handle src);

/** Flags of gtstorage_copy_sides(). */
typedef enum gtstorage_copy_flags {
  GTSTORAGE_COPY_FLAG_NONE = 0,
  /** Return once a copy that involves device memory is enqueued on the stream, instead of
   *  waiting for it (copies that convert dtypes, and host-only copies, still complete before
   *  the call returns); wait with gtstorage_wait_stream() (on either storage) before the host
   *  touches either side directly. The library records an event after the copy on both
   *  storages' memory, so nothing is lost whatever comes next: their release (and the reuse of
   *  pooled memory), host access through the library, descriptors and DLPack exports, and any
   *  later operation on either storage wait for it (later asynchronous ones on the device). */
  GTSTORAGE_COPY_FLAG_ASYNC = 1,
  /** The destination is not read again soon (a halo's pack buffer handed to MPI, a face
   *  unpacked into a field larger than the cache): host copies write every whole destination
   *  cache line with non-temporal stores, whatever the copy's size, instead of only from half
   *  the last-level cache up. That saves reading each line before writing it and leaves the
   *  cache to the caller's working set (measured figures: docs/architecture.md, "memory, device
   *  and kernels"). A hint: the values copied are the same with or without it, and device
   *  copies ignore it. Since 1.1. */
  GTSTORAGE_COPY_FLAG_STREAMING = 2
} gtstorage_copy_flags;

/**
 * Copies one side of a storage into one side of another, without consulting the sync state.
 *
 * Equal shapes, any layouts, dtypes converted as by gtstorage_copy(); exactly those sides:
 * unlike gtstorage_copy(), the sync state is neither consulted nor changed, so the caller decides
 * which copy of a mirrored field is read or written and marks what it wrote with
 * gtstorage_modify(). This is the building block of communication libraries (libgtstorage_mpi
 * packs and unpacks halos with it on the side that is current, on the device without a round
 * trip through the host mirror).
 *
 * Work that involves device memory is enqueued on @p stream; where the other storage's stream
 * differs, the work already queued there is waited for first. Without
 * #GTSTORAGE_COPY_FLAG_ASYNC the call returns when the copy is complete. Asynchronous syncs in
 * flight on either storage are waited for; unified memory is accessed as host memory after its
 * stream's work is done. Since 1.1.
 *
 * @param dst The storage or view written.
 * @param dst_side The side of @p dst written, a ::gtstorage_side.
 * @param src The storage or view read.
 * @param src_side The side of @p src read, a ::gtstorage_side.
 * @param stream A cudaStream_t / hipStream_t as an integer; 0 = the stream of @p src, or of
 *        @p dst when @p src_side is the host (see gtstorage_set_stream()).
 * @param flags A combination of ::gtstorage_copy_flags.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p dst or @p src is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if a side is not a ::gtstorage_side, @p flags has
 *         other bits, or @p stream is one the backend knows to be dead (the emulated device);
 *         #GTSTORAGE_ERROR_NO_SUCH_BUFFER if a storage has no buffer on its side;
 *         #GTSTORAGE_ERROR_SHAPE_MISMATCH if the shapes differ;
 *         #GTSTORAGE_ERROR_READONLY if @p dst (or its side) is read-only;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_copy_sides(gtstorage_handle dst, int32_t dst_side, gtstorage_handle src,
                                       int32_t src_side, uint64_t stream, uint32_t flags);

/**
 * Sets every element of a storage or view to one value of its dtype.
 *
 * @param handle The storage or view written.
 * @param value Address of one element of the storage's dtype (itemsize bytes); not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p value is NULL;
 *         #GTSTORAGE_ERROR_READONLY if the storage is read-only;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_fill(gtstorage_handle handle, const void* value);

/**
 * Sets every element of a storage or view to a number converted to its dtype.
 *
 * @param handle The storage or view written.
 * @param value The value, converted to the storage's dtype as by gtstorage_copy().
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_READONLY if the storage is read-only;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_fill_double(gtstorage_handle handle, double value);

/** @} */

/* ============================================================================================== */
/** @name Host/device synchronization
 * The sync state is one object shared by all views of a buffer pair; a sync from any view
 * brings the whole buffer current. The vocabulary is Kokkos DualView's: before computing on a
 * side, gtstorage_sync_to() that side; after writing on it, gtstorage_modify() it;
 * gtstorage_need_sync() asks whether a sync_to would copy. On host-only and device-only
 * storages every one of them is a valid no-op (need_sync answers 0); for unified memory
 * (#GTSTORAGE_MANAGED_UNIFIED) sync_to prefetches the pages to that side.
 *
 * @p side is a ::gtstorage_side; @p flags a combination of ::gtstorage_sync_flags; @p stream a
 * cudaStream_t / hipStream_t as an integer, where 0 means the storage's stream
 * (gtstorage_set_stream(), by default the legacy default stream), 1 the legacy default stream
 * and 2 the per-thread default stream. Each function returns #GTSTORAGE_OK,
 * #GTSTORAGE_ERROR_INVALID_HANDLE, #GTSTORAGE_ERROR_INVALID_ARGUMENT (a bad side, flag or
 * NULL output), #GTSTORAGE_ERROR_READONLY (a copy into memory wrapped read-only),
 * #GTSTORAGE_ERROR_SYNC_CONFLICT (gtstorage_modify() while the other side is modified, without
 * #GTSTORAGE_SYNC_FLAG_FORCE) or #GTSTORAGE_ERROR_DEVICE. Thread-safe (the state has a lock). */
/** @{ */

/**
 * Makes one side of a storage current, copying the other side into it if needed.
 *
 * Copies the other side into @p side if the other side is marked modified (or always with
 * #GTSTORAGE_SYNC_FLAG_FORCE), then both sides are clean. Waits until the copy is done. GDP-3's
 * `host_to_device()` is sync_to(DEVICE), `device_to_host()` sync_to(HOST).
 *
 * @param handle The storage or view (the whole buffer pair is synchronized).
 * @param side The side to make current, a ::gtstorage_side.
 * @param flags A combination of ::gtstorage_sync_flags.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p side is not a ::gtstorage_side or @p flags has
 *         other bits;
 *         #GTSTORAGE_ERROR_READONLY if @p side is memory wrapped read-only and would be written;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_sync_to(gtstorage_handle handle, int32_t side, uint32_t flags);

/**
 * Like gtstorage_sync_to() but the copy is only enqueued on a stream.
 *
 * A later host access through the library, or any later sync, waits for it.
 *
 * @param handle The storage or view.
 * @param side The side to make current, a ::gtstorage_side.
 * @param flags A combination of ::gtstorage_sync_flags.
 * @param stream The stream (see "Host/device synchronization"); 0 = the storage's.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p side is not a ::gtstorage_side, @p flags has
 *         other bits, or @p stream is one the backend knows to be dead (the emulated device);
 *         #GTSTORAGE_ERROR_READONLY if @p side is memory wrapped read-only and would be written;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_sync_to_async(gtstorage_handle handle, int32_t side, uint32_t flags,
                                          uint64_t stream);

/**
 * Marks one side of a storage modified (written since the last sync).
 *
 * @param handle The storage or view (the mark holds for the whole buffer pair).
 * @param side The side written, a ::gtstorage_side.
 * @param flags A combination of ::gtstorage_sync_flags: with #GTSTORAGE_SYNC_FLAG_FORCE the
 *        other side's unsynchronized changes are discarded instead of failing.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p side is not a ::gtstorage_side or @p flags has
 *         other bits;
 *         #GTSTORAGE_ERROR_SYNC_CONFLICT if the other side is already marked modified and
 *         @p flags lacks #GTSTORAGE_SYNC_FLAG_FORCE;
 *         #GTSTORAGE_ERROR_DEVICE if waiting for work queued on the storage fails.
 */
GTSTORAGE_API int gtstorage_modify(gtstorage_handle handle, int32_t side, uint32_t flags);

/**
 * Whether gtstorage_sync_to() of a side would copy, i.e. the other side is marked modified.
 *
 * @param handle The storage or view.
 * @param side A ::gtstorage_side.
 * @param[out] out_need Receives 1 if gtstorage_sync_to(@p handle, @p side, 0) would copy, else 0;
 *        not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out_need is NULL or @p side is not a
 *         ::gtstorage_side.
 */
GTSTORAGE_API int gtstorage_need_sync(gtstorage_handle handle, int32_t side, int32_t* out_need);

/**
 * Declares both sides equal without copying (GDP-3 `set_synchronized`, DualView
 * `clear_sync_state`).
 *
 * @param handle The storage or view.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_DEVICE if waiting for work queued on the storage fails.
 */
GTSTORAGE_API int gtstorage_mark_synchronized(gtstorage_handle handle);

/**
 * Blocks until the work queued on a stream, and the library's own queued work, has completed.
 *
 * Waits for the work queued on @p stream and for the work the library itself left queued on the
 * storage's memory on any stream (asynchronous syncs and copies): no transfer, no state change. A
 * consumer calls it before using a buffer a producer filled on its own stream (e.g. the `stream`
 * of a CUDA Array Interface v3 buffer) and before the last release of a storage other streams
 * still use. On a host-only storage it waits only for the library's own queued work (an
 * asynchronous copy from a device into it).
 *
 * @param handle The storage or view.
 * @param stream The stream (see "Host/device synchronization"); 0 = the storage's.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p stream is one the backend knows to be dead (the
 *         emulated device);
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_wait_stream(gtstorage_handle handle, uint64_t stream);

/**
 * Current synchronization state of a storage's buffers.
 *
 * @param handle The storage or view.
 * @param[out] out_state Receives a ::gtstorage_sync_state value; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out_state is NULL.
 */
GTSTORAGE_API int gtstorage_get_sync_state(gtstorage_handle handle, int32_t* out_state);

/**
 * Sets the stream of a handle: what its descriptors report and the functions above use for 0.
 *
 * A view made later starts with it. The stream must stay live while a handle uses it: CUDA
 * offers no way to check a handle, and a real runtime may crash on a destroyed one (the emulated
 * device refuses it). When a handle leaves a stream (set to another one, or released), the
 * library records an event there: the storage's memory is released (and, pooled, reused) only
 * after the work queued on each stream until its handles left it, and never touches the stream
 * again, so the application may destroy the stream as soon as no handle uses it.
 *
 * @param handle The storage or view (other handles of the same buffers keep their streams).
 * @param stream 0 (the legacy default stream, as a new storage has), 1 (legacy default),
 *        2 (per-thread default) or a live cudaStream_t / hipStream_t of the backend as an integer.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p stream is one the backend knows to be dead (the
 *         emulated device).
 */
GTSTORAGE_API int gtstorage_set_stream(gtstorage_handle handle, uint64_t stream);

/** @} */

/* ============================================================================================== */
/** @name Devices */
/** @{ */

/**
 * Number of usable devices of the active device backend (0 without a driver).
 *
 * Where a GPU is held back by a driver older than the CUDA runtime this library was built with,
 * the count is 0 and the status is #GTSTORAGE_ERROR_DRIVER_TOO_OLD (the message names both
 * versions), so a GPU job does not silently run on the CPU.
 *
 * @param[out] out_count Receives the count; not NULL.
 * @return #GTSTORAGE_OK (also with a count of 0: no GPU is not an error);
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out_count is NULL;
 *         #GTSTORAGE_ERROR_DRIVER_TOO_OLD as said above (@p *out_count is then 0).
 */
GTSTORAGE_API int gtstorage_device_count(int32_t* out_count);

/* gtstorage_set_device_backend() (switching backends, for tests) is declared in
 * gtstorage_experimental.h; the environment variable GTSTORAGE_DEVICE_BACKEND ("cuda", "hip",
 * "emulated", "auto") selects the backend once at start. */

/**
 * Name of the active device backend: "cuda", "hip", "emulated" or "none".
 *
 * @param[out] buf Receives the NUL-terminated name; not NULL.
 * @param size Size of @p buf in bytes, the terminating NUL included.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p buf is NULL;
 *         #GTSTORAGE_ERROR_BUFFER_TOO_SMALL if the name does not fit in @p size bytes (@p buf is
 *         not written then).
 */
GTSTORAGE_API int gtstorage_get_device_backend(char* buf, size_t size);

/**
 * Makes a device the calling thread's current device of the active backend.
 *
 * As cudaSetDevice / hipSetDevice: storages this thread creates with device_id -1 go there.
 * Other threads keep their own current device; a cudaSetDevice() by the application has the same
 * effect.
 *
 * @param device_id Device ordinal, 0 … gtstorage_device_count() - 1.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_NO_DEVICE (or #GTSTORAGE_ERROR_DRIVER_TOO_OLD) if the backend has no
 *         usable device (the message says why);
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p device_id is out of range;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_set_device(int32_t device_id);

/**
 * The calling thread's current device of the active backend (cudaGetDevice / hipGetDevice).
 *
 * That is where storages this thread creates with device_id -1 go, as set by
 * gtstorage_set_device() or the application's own cudaSetDevice(); 0 in a thread that set none.
 * Since 1.1.
 *
 * @param[out] out_device_id Receives the ordinal; not NULL. Unchanged when the call fails.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out_device_id is NULL;
 *         #GTSTORAGE_ERROR_NO_DEVICE (or #GTSTORAGE_ERROR_DRIVER_TOO_OLD) if the backend has no
 *         usable device, as for gtstorage_set_device();
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_get_device(int32_t* out_device_id);

/** @} */

/* ============================================================================================== */
/** @name Statistics
 * Live counts for leak checks, transfer counters to prove that no redundant copy happened. */
/** @{ */

/** Library-wide counters. */
typedef struct gtstorage_stats {
  uint32_t struct_size; /**< sizeof(gtstorage_stats), set by the caller. */
  uint32_t reserved;    /**< Set to 0 by the library. */
  int64_t live_handles; /**< Handles (storages and views) not yet released. */
  int64_t live_buffers; /**< Buffers (allocations or wrapped memory) still referenced. */
  int64_t host_bytes;   /**< Host bytes currently allocated by the library. */
  int64_t device_bytes; /**< Device bytes currently allocated by the library. */
  int64_t h2d_count;    /**< Host-to-device transfers since start (or reset). */
  int64_t h2d_bytes;    /**< Bytes moved host-to-device. */
  int64_t d2h_count;    /**< Device-to-host transfers. */
  int64_t d2h_bytes;    /**< Bytes moved device-to-host. */
  /* Since 1.1 (a caller built against 1.0 passes struct_size 72 and gets the fields above). */
  int64_t pool_held_bytes; /**< Bytes of released blocks the memory pools keep for reuse (host,
                                pinned and device together; see gtstorage_pool_get_stats()). */
  int64_t pool_hits;       /**< Allocations served from a pool since start (or reset). */
  int64_t pool_misses;     /**< Allocations a pool could not serve (fresh memory). */
  int64_t pool_high_water_bytes; /**< Sum of the pools' peaks of bytes in use plus held. */
} gtstorage_stats;

/** Initializer of ::gtstorage_stats (an output struct: only struct_size matters). */
#define GTSTORAGE_STATS_INIT \
  { sizeof(gtstorage_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/** Per-buffer transfer counters of a storage (shared by its views). */
typedef struct gtstorage_transfer_stats {
  uint32_t struct_size; /**< sizeof(gtstorage_transfer_stats), set by the caller. */
  uint32_t reserved;    /**< Set to 0 by the library. */
  int64_t h2d_count;    /**< Host-to-device transfers of this buffer pair. */
  int64_t h2d_bytes;    /**< Bytes moved host-to-device. */
  int64_t d2h_count;    /**< Device-to-host transfers. */
  int64_t d2h_bytes;    /**< Bytes moved device-to-host. */
} gtstorage_transfer_stats;

/** Initializer of ::gtstorage_transfer_stats (an output struct: only struct_size matters). */
#define GTSTORAGE_TRANSFER_STATS_INIT \
  { sizeof(gtstorage_transfer_stats), 0, 0, 0, 0, 0 }

/**
 * Library-wide counters: live handles, buffers and bytes, transfers, pools.
 *
 * @param[out] out Receives the counters, up to the struct_size the caller set (a 1.0 struct gets
 *        no pool counters); not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out is NULL or out->struct_size is not an
 *         accepted size.
 */
GTSTORAGE_API int gtstorage_get_stats(gtstorage_stats* out);

/* gtstorage_reset_transfer_stats() (a test hook) is declared in gtstorage_experimental.h. */

/**
 * Transfer counters of the buffers behind a storage or view (shared by all its views).
 *
 * @param handle The storage or view.
 * @param[out] out Receives the counters, up to the struct_size the caller set; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out is NULL or out->struct_size is not an
 *         accepted size.
 */
GTSTORAGE_API int gtstorage_get_transfer_stats(gtstorage_handle handle,
                                               gtstorage_transfer_stats* out);

/** @} */

/* ============================================================================================== */
/** @name Memory pools
 * Released storage memory is kept and reused (Umpire's pools, CuPy's and PyTorch's caching
 * allocators): models allocate the same temporaries in every time step, and a fresh block costs
 * page faults and kernel zeroing on the host and a device-wide synchronization on a GPU.
 *
 * - Host memory (pageable and pinned): a released block of 4 KiB or more is kept; a request takes
 *   the smallest kept block of at least its size, of the same device and at least its alignment,
 *   and at most 1/8 larger than a fresh block for it would be (large blocks are never split, so
 *   at most 12.5% of a reused block is unused). A reused block is not zero: #GTSTORAGE_INIT_ZEROS
 *   fills it; #GTSTORAGE_INIT_UNINITIALIZED touches nothing.
 * - Device memory: the runtime's stream-ordered pool (cudaMallocAsync from a pool of the
 *   library, one per device, freed with cudaFreeAsync on the storage's stream), whose release
 *   threshold is the limit, so memory is not returned to the device at every synchronization.
 *   Reuse follows stream order: a block is handed out again only after the work queued before
 *   its last release on the stream it was allocated on and on every stream its handles used,
 *   until they left it (gtstorage_set_stream()). Work on other streams that still uses a
 *   storage must be waited for (gtstorage_wait_stream()) before its last release, as with any
 *   stream-ordered allocator. Without pool support (old driver, HIP without pools) device
 *   memory is not pooled.
 * - Pinned host memory is written by the host as soon as a new storage takes a kept block, so
 *   the release of a pinned storage first waits on the host for the work queued on the streams
 *   its handles used, until they left them (gtstorage_set_stream()); work on other streams
 *   that reads it must be waited for before its last release.
 * - A per-process limit on the bytes kept (not in use) per memory: by default 1/8 of the
 *   machine's memory for pageable and pinned host memory and 1/4 of each device's memory for a
 *   device; the environment variable `GTSTORAGE_POOL_LIMIT` (bytes, optional K/M/G/T suffix,
 *   powers of 1024; a value not of that form is ignored) sets all of them at start,
 *   `GTSTORAGE_POOL=0` turns pooling off. A release beyond the limit frees the least recently
 *   kept blocks.
 * - Thread-safe. Live counts (gtstorage_stats.host_bytes, device_bytes) count storages' memory
 *   only, never kept blocks; after gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0) with no storage
 *   alive, held_bytes is 0 everywhere.
 */
/** @{ */

/** The memory a pool holds. */
typedef enum gtstorage_memory {
  GTSTORAGE_MEMORY_HOST = 0,        /**< Pageable host memory. */
  GTSTORAGE_MEMORY_PINNED_HOST = 1, /**< Page-locked host memory (#GTSTORAGE_HOST_PINNED). */
  GTSTORAGE_MEMORY_DEVICE = 2,      /**< Device memory of the active backend, every device. */
  GTSTORAGE_MEMORY_ALL = 3          /**< All of the above (not for gtstorage_pool_get_stats()). */
} gtstorage_memory;

/** Counters of one pool (all devices together for #GTSTORAGE_MEMORY_DEVICE). */
typedef struct gtstorage_pool_stats {
  uint32_t struct_size;     /**< sizeof(gtstorage_pool_stats), set by the caller. */
  uint32_t reserved;        /**< Set to 0 by the library. */
  int64_t held_bytes;       /**< Bytes of released blocks kept for reuse (not in use). */
  int64_t held_blocks;      /**< Number of kept blocks (-1 where the runtime does not say). */
  int64_t in_use_bytes;     /**< Bytes of pooled blocks in use by storages. */
  int64_t high_water_bytes; /**< Peak of in_use_bytes + held_bytes since start (or reset). */
  int64_t hits;             /**< Allocations served from kept blocks. */
  int64_t misses;           /**< Allocations that needed fresh memory. */
  int64_t evictions;        /**< Kept blocks freed because of the limit or a trim. */
  /** Limit on held_bytes; 0: this memory is not pooled. A device pool's runtime gives back
   *  what it keeps above the limit at the device's next synchronization: until then held_bytes
   *  may exceed it by the blocks released since (a block larger than the limit is never
   *  pooled). */
  int64_t limit_bytes;
} gtstorage_pool_stats;

/** Initializer of ::gtstorage_pool_stats (an output struct: only struct_size matters). */
#define GTSTORAGE_POOL_STATS_INIT \
  { sizeof(gtstorage_pool_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/**
 * Counters of one memory pool.
 *
 * @param memory The pool, a ::gtstorage_memory value other than #GTSTORAGE_MEMORY_ALL.
 * @param[out] out Receives the counters, up to the struct_size the caller set; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out is NULL, out->struct_size is not an
 *         accepted size or @p memory is not a ::gtstorage_memory value other than ALL.
 */
GTSTORAGE_API int gtstorage_pool_get_stats(int32_t memory, gtstorage_pool_stats* out);

/**
 * Sets the limit on the bytes a pool keeps, freeing kept blocks beyond it at once.
 *
 * 0 turns pooling off for that memory (blocks in use are freed when released).
 *
 * @param memory The pool, a ::gtstorage_memory value (#GTSTORAGE_MEMORY_ALL: every pool).
 * @param limit_bytes The limit in bytes, ≥ 0.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p memory is not a ::gtstorage_memory value or
 *         @p limit_bytes is negative.
 */
GTSTORAGE_API int gtstorage_pool_set_limit(int32_t memory, int64_t limit_bytes);

/**
 * Frees kept blocks of a pool, least recently kept first, down to a number of bytes.
 *
 * Blocks in use are not affected. Device blocks whose release is still queued on a stream are
 * freed when the device reaches it.
 *
 * @param memory The pool, a ::gtstorage_memory value (#GTSTORAGE_MEMORY_ALL: every pool).
 * @param keep_bytes Bytes that may stay kept, ≥ 0 (0: free all).
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p memory is not a ::gtstorage_memory value or
 *         @p keep_bytes is negative.
 */
GTSTORAGE_API int gtstorage_pool_trim(int32_t memory, int64_t keep_bytes);

/** @} */

/* ============================================================================================== */
/** @name DLPack export
 * Structs are those of the official dlpack.h (1.x); only pointers appear here, so this header
 * does not depend on it. The returned tensor holds a reference to the storage; the consumer calls
 * its `deleter` exactly once. */
/** @{ */

struct DLManagedTensor;
struct DLManagedTensorVersioned;

/**
 * Exports one side of a storage or view as a versioned DLPack 1.x tensor.
 *
 * Work the library left queued on the memory is waited for first.
 *
 * @param handle The storage or view (the tensor holds a reference to it).
 * @param side The side to export, a ::gtstorage_side.
 * @param[out] out Receives a new `struct DLManagedTensorVersioned*`, owned by the caller, who
 *        calls its `deleter` exactly once; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out is NULL or @p side is not a
 *         ::gtstorage_side;
 *         #GTSTORAGE_ERROR_NO_SUCH_BUFFER if the storage has no buffer on @p side;
 *         #GTSTORAGE_ERROR_DEVICE if waiting for the queued work fails.
 */
GTSTORAGE_API int gtstorage_to_dlpack_versioned(gtstorage_handle handle, int32_t side,
                                                struct DLManagedTensorVersioned** out);

/**
 * Exports one side of a storage or view as a legacy (pre-1.0) DLPack tensor.
 *
 * As gtstorage_to_dlpack_versioned(), for consumers of DLPack before 1.0 (the legacy struct has
 * no version and no read-only flag).
 *
 * @param handle The storage or view (the tensor holds a reference to it).
 * @param side The side to export, a ::gtstorage_side.
 * @param[out] out Receives a new `struct DLManagedTensor*`, owned by the caller, who calls its
 *        `deleter` exactly once; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out is NULL or @p side is not a
 *         ::gtstorage_side;
 *         #GTSTORAGE_ERROR_NO_SUCH_BUFFER if the storage has no buffer on @p side;
 *         #GTSTORAGE_ERROR_DEVICE if waiting for the queued work fails.
 */
GTSTORAGE_API int gtstorage_to_dlpack(gtstorage_handle handle, int32_t side,
                                      struct DLManagedTensor** out);

/** @} */

/* ============================================================================================== */
/** @name DLPack import
 * Wrapping the tensor of any DLPack producer (NumPy, PyTorch, CuPy, JAX, gtstorage itself)
 * without copying: gtstorage_wrap() for a `DLManagedTensor` (DLPack 0.x, "legacy") or a
 * `DLManagedTensorVersioned` (DLPack 1.x), with the tensor's deleter as release callback. */
/** @{ */

/** Which dlpack.h struct the tensor given to gtstorage_wrap_dlpack() is. */
typedef enum gtstorage_dlpack_kind {
  /** `struct DLManagedTensor` (DLPack < 1.0; Python capsule "dltensor"). */
  GTSTORAGE_DLPACK_LEGACY = 0,
  /** `struct DLManagedTensorVersioned` (DLPack 1.x; Python capsule "dltensor_versioned"). */
  GTSTORAGE_DLPACK_VERSIONED = 1
} gtstorage_dlpack_kind;

/** Optional parameters of gtstorage_wrap_dlpack(). Start from #GTSTORAGE_DLPACK_OPTIONS_INIT. */
typedef struct gtstorage_dlpack_options {
  uint32_t struct_size; /**< sizeof(gtstorage_dlpack_options). */
  /** Non-zero: the storage is read-only even where the producer allows writes. */
  int32_t readonly;
  /** Dims labels, as in ::gtstorage_create_options; NULL = the default for the tensor's ndim. */
  const char* dims;
  /** 2*ndim halo widths in elements (halo[2*d] lower, halo[2*d+1] upper), as in
   *  ::gtstorage_wrap_options; they are part of the tensor's shape. NULL = no halo. */
  const int64_t* halo;
} gtstorage_dlpack_options;

/** Initializer for ::gtstorage_dlpack_options. */
#define GTSTORAGE_DLPACK_OPTIONS_INIT \
  { sizeof(gtstorage_dlpack_options), 0, NULL, NULL }

/**
 * Writes the defaults of #GTSTORAGE_DLPACK_OPTIONS_INIT into an options struct of a given size.
 *
 * As gtstorage_create_options_init_sized(), for ::gtstorage_dlpack_options.
 *
 * @param options The struct to initialize; not NULL.
 * @param struct_size Its size in bytes (pass `sizeof *options`): a size
 *        ::gtstorage_dlpack_options had in a released version or this one.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p options is NULL or @p struct_size is not such a
 *         size (nothing is written then).
 */
GTSTORAGE_API int gtstorage_dlpack_options_init_sized(gtstorage_dlpack_options* options,
                                                      size_t struct_size);

/**
 * Writes the defaults of the 1.1 layout of ::gtstorage_dlpack_options.
 *
 * Writes 24 bytes on LP64 and sets struct_size to that size. Prefer
 * gtstorage_dlpack_options_init_sized().
 *
 * @param options The struct to initialize (at least the 1.1 size); not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p options is NULL.
 */
GTSTORAGE_API int gtstorage_dlpack_options_init(gtstorage_dlpack_options* options);

/**
 * Wraps the tensor of a DLPack producer as a storage, without copying.
 *
 * On success @p *out holds a new handle with reference count 1 (release it with
 * gtstorage_release()).
 *
 * **Ownership.** On success the library owns @p managed_tensor: it calls its `deleter` (unless
 * NULL) exactly once, with @p managed_tensor, when the last handle and view of the storage is
 * released and no DLPack export of it (gtstorage_to_dlpack(), gtstorage_to_dlpack_versioned())
 * is alive any more, on whichever thread drops that last reference. Until then the producer's
 * memory stays valid; the caller must not use the tensor or call its deleter any more (a Python
 * consumer renames the capsule "used_dltensor[_versioned]"). On failure the library takes
 * nothing: the deleter is not called and the caller still owns the tensor (DLPack asks a
 * consumer that refuses a tensor to call its deleter: that is then the caller's job).
 *
 * **What is read** (units as in dlpack.h: shape and strides in elements, byte_offset in bytes):
 * - `version.major` (versioned only) must be 1 (#GTSTORAGE_ERROR_UNSUPPORTED otherwise, and no
 *   other field is read); any minor version is accepted.
 * - `flags` (versioned only): DLPACK_FLAG_BITMASK_READ_ONLY makes the storage read-only (writes
 *   through the library fail with #GTSTORAGE_ERROR_READONLY, and no sync copies into it);
 *   DLPACK_FLAG_BITMASK_IS_COPIED and unknown bits are ignored. A legacy tensor is writable.
 * - `dl_tensor.ndim`: 0 … #GTSTORAGE_MAX_NDIM; `shape`: ndim extents ≥ 0.
 * - `dl_tensor.dtype`: lanes 1 and kDLInt / kDLUInt of 8, 16, 32 or 64 bits (`<i1` … `<u8`),
 *   kDLFloat of 16, 32 or 64 bits (`<f2`, `<f4`, `<f8`), kDLComplex of 64 or 128 bits (`<c8`,
 *   `<c16`), kDLBool of 8 bits (`|b1`); anything else is #GTSTORAGE_ERROR_UNSUPPORTED.
 * - `dl_tensor.data + byte_offset` is the address of element (0, …, 0). A tensor without
 *   elements may have `data` NULL (a device one then becomes an empty device storage on its
 *   `device_id`); its descriptors report a valid non-null address all the same. Where the
 *   backend knows the allocation behind device memory (its own, the simulated runtime's, or
 *   what CUDA's and HIP's address-range queries report), the elements must lie inside it
 *   (#GTSTORAGE_ERROR_INVALID_ARGUMENT naming `dl_tensor.data` otherwise), as for
 *   `device_data` of gtstorage_wrap(). A kDLCPU tensor whose memory the device backend in use
 *   reports as device memory is refused, as for `data` of gtstorage_wrap().
 * - `dl_tensor.strides`: NULL means compact row-major (allowed since DLPack 0.8). Negative
 *   strides are accepted. A zero stride of a dimension of extent > 1 (a broadcast) is refused
 *   with #GTSTORAGE_ERROR_UNSUPPORTED: storages never alias elements (copy the tensor first).
 *   Strides that make elements overlap are #GTSTORAGE_ERROR_INVALID_ARGUMENT, as in
 *   gtstorage_wrap(). The strides of extent-1 dimensions are kept but never dereferenced.
 * - `dl_tensor.device`: kDLCPU memory becomes the host buffer (`data` of gtstorage_wrap()).
 *   Device memory of the active device backend becomes the device buffer and is checked like
 *   `device_data` of gtstorage_wrap() (the runtime tells its kind and device; a device_id that
 *   disagrees is #GTSTORAGE_ERROR_INVALID_ARGUMENT): kDLCUDA, kDLCUDAManaged and kDLCUDAHost
 *   with the CUDA backend, kDLROCM and kDLROCMHost with HIP, kDLExtDev (#GTSTORAGE_DL_EXT_DEV)
 *   only with the emulated one. Other device types are #GTSTORAGE_ERROR_UNSUPPORTED.
 *
 * Messages name the offending field ("managed_tensor->dl_tensor.dtype: …").
 *
 * @param managed_tensor A `struct DLManagedTensor*` if @p kind is #GTSTORAGE_DLPACK_LEGACY, a
 *        `struct DLManagedTensorVersioned*` if it is #GTSTORAGE_DLPACK_VERSIONED; not NULL. Owned
 *        by the library on success only (see **Ownership**).
 * @param kind Which struct @p managed_tensor is, a ::gtstorage_dlpack_kind value.
 * @param options Dims labels, halo and read-only flag (::gtstorage_dlpack_options); NULL = all
 *        defaults. Read only during the call.
 * @param[out] out Receives the new handle; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p managed_tensor or @p out is NULL, @p kind is
 *         not a ::gtstorage_dlpack_kind, options->struct_size is not an accepted size, or the
 *         tensor or an option is refused as listed above (ndim, shape, overlapping strides, dims,
 *         halo, memory outside its allocation or of the wrong kind, a device_id that disagrees);
 *         #GTSTORAGE_ERROR_UNSUPPORTED for a DLPack major version, dtype, broadcast stride or
 *         device type the library does not take, as listed above;
 *         #GTSTORAGE_ERROR_OVERFLOW if a stride in bytes or the tensor's span does not fit in
 *         64 bits;
 *         #GTSTORAGE_ERROR_NO_DEVICE (or #GTSTORAGE_ERROR_DRIVER_TOO_OLD) for device memory
 *         without a usable device;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API int gtstorage_wrap_dlpack(void* managed_tensor, int32_t kind,
                                        const gtstorage_dlpack_options* options,
                                        gtstorage_handle* out);

/** @} */

/* ============================================================================================== */
/** @name Deprecated
 * Exported and working until the next major version; each names its replacement (the
 * DualView-style synchronization above). They carry #GTSTORAGE_DEPRECATED. */
/** @{ */

/**
 * **Deprecated**: applies one synchronization operation and waits for its completion.
 *
 * Use gtstorage_sync_to(), gtstorage_modify(), gtstorage_need_sync(),
 * gtstorage_mark_synchronized() or gtstorage_wait_stream() instead; ::gtstorage_sync_op names
 * the replacement of each operation.
 *
 * @param handle The storage or view.
 * @param op The operation, a ::gtstorage_sync_op value.
 * @param flags A combination of ::gtstorage_sync_flags.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p op is not a ::gtstorage_sync_op or @p flags
 *         has other bits;
 *         #GTSTORAGE_ERROR_READONLY if a copy would write memory wrapped read-only;
 *         #GTSTORAGE_ERROR_SYNC_CONFLICT if a side is marked modified while the other one is,
 *         without #GTSTORAGE_SYNC_FLAG_FORCE;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API GTSTORAGE_DEPRECATED("see gtstorage_sync_op for the replacements") int gtstorage_sync(
    gtstorage_handle handle, int32_t op, uint32_t flags);

/**
 * **Deprecated**: like gtstorage_sync() but a copy is only enqueued on a stream.
 *
 * Use gtstorage_sync_to_async() or gtstorage_wait_stream() instead.
 *
 * @param handle The storage or view.
 * @param op The operation, a ::gtstorage_sync_op value.
 * @param flags A combination of ::gtstorage_sync_flags.
 * @param stream The stream (see "Host/device synchronization"); 0 = the storage's.
 * @return As gtstorage_sync(), and #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p stream is one the
 *         backend knows to be dead (the emulated device).
 */
GTSTORAGE_API GTSTORAGE_DEPRECATED("use gtstorage_sync_to_async") int gtstorage_sync_async(
    gtstorage_handle handle, int32_t op, uint32_t flags, uint64_t stream);

/**
 * **Deprecated**: makes a side current before computing on it (GDP-3 `acquire`).
 *
 * Use gtstorage_sync_to() instead.
 *
 * @param handle The storage or view.
 * @param side The side to make current, a ::gtstorage_side.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p side is not a ::gtstorage_side;
 *         #GTSTORAGE_ERROR_READONLY if @p side is memory wrapped read-only and would be written;
 *         #GTSTORAGE_ERROR_DEVICE if the device runtime fails.
 */
GTSTORAGE_API GTSTORAGE_DEPRECATED("use gtstorage_sync_to") int gtstorage_acquire(
    gtstorage_handle handle, int32_t side);

/**
 * **Deprecated**: marks a side modified after computing on it (GDP-3 `touch`).
 *
 * Use gtstorage_modify() instead.
 *
 * @param handle The storage or view.
 * @param side The side written, a ::gtstorage_side.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p side is not a ::gtstorage_side;
 *         #GTSTORAGE_ERROR_SYNC_CONFLICT if the other side is already marked modified;
 *         #GTSTORAGE_ERROR_DEVICE if waiting for work queued on the storage fails.
 */
GTSTORAGE_API GTSTORAGE_DEPRECATED("use gtstorage_modify") int gtstorage_touch(
    gtstorage_handle handle, int32_t side);

/** @} */

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The experimental tier (no ABI promise), on request. */
#if defined(GTSTORAGE_EXPERIMENTAL)
#include "gtstorage_experimental.h"
#endif

#endif /* GTSTORAGE_GTSTORAGE_H */
