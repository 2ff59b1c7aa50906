/*
 * gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * @file gtstorage_mpi.h
 * @brief libgtstorage_mpi: domain decomposition and halo exchange of storages over MPI.
 *
 * An optional component, built when an MPI is found: `libgtstorage_mpi.so` (CMake target
 * `gtstorage::mpi`, component `MPI`; pkg-config `gtstorage-mpi`) links libgtstorage and one MPI.
 * gtstorage.h and libgtstorage never depend on an MPI, and this header includes no `mpi.h`: the
 * communicator crosses the ABI as its **Fortran handle** (an `MPI_Fint` widened to `int64_t`),
 * which every language produces the same way:
 *
 * | caller     | communicator argument                               |
 * |------------|-----------------------------------------------------|
 * | C / C++    | `MPI_Comm_c2f(comm)`                                |
 * | Fortran    | `comm` (`integer`) or `comm%MPI_VAL` (`mpi_f08`)    |
 * | mpi4py     | `comm.py2f()`                                       |
 *
 * The library works on a duplicate of the communicator with `MPI_ERRORS_RETURN` set, so the
 * caller's communicator and its error handler are left as they are, and an MPI failure is a
 * status (#GTSTORAGE_ERROR_COMMUNICATION, the message naming the MPI function and its error
 * string), never an abort. Everything else follows gtstorage.h: every function returns a status,
 * gtstorage_last_error() holds the calling thread's message, structs begin with `struct_size`
 * and have `*_INIT` macros, handles are generation-checked 64-bit integers (0 is never valid).
 * Each function's `@return` lists its own statuses; #GTSTORAGE_ERROR_OUT_OF_MEMORY and
 * #GTSTORAGE_ERROR_INTERNAL, which any function can return, are said once in gtstorage.h
 * (@ref gtstorage_common_statuses).
 *
 * **Collective calls.** gtstorage_decomp_create() and gtstorage_exchange_create() are
 * collective over the communicator: every process calls them, in the same order. They check
 * their arguments everywhere, then the processes agree before anything is built:
 * - When any process failed, every process returns a failure: the one at fault its own status
 *   and message, the others #GTSTORAGE_ERROR_COMMUNICATION with a message naming the first
 *   process that failed and its message.
 * - The arguments that describe the grid or the exchange must be the same on every process
 *   (gtstorage_decomp_create(): ndim, dims, proc_dims, periodic, reorder;
 *   gtstorage_exchange_create(): pattern, nfields). Where they differ, every process returns
 *   #GTSTORAGE_ERROR_INVALID_ARGUMENT naming the parameter, two of its values and the ranks that
 *   passed them.
 * - A process that cannot take part at all returns at once, naming its argument: one without a
 *   valid communicator (gtstorage_decomp_create()), decomposition handle
 *   (gtstorage_exchange_create()) or readable options struct. The others wait for it until a
 *   **deadline**, then return #GTSTORAGE_ERROR_COMMUNICATION with a message saying that not
 *   every process joined within it. The deadline is the environment variable
 *   `GTSTORAGE_MPI_AGREE_TIMEOUT`, in seconds (decimals allowed; default 60; 0 = none: wait as
 *   long as it takes), read at every call and applied to each collective step; a value that is
 *   not a number of seconds is #GTSTORAGE_ERROR_INVALID_ARGUMENT naming the variable (reported
 *   collectively, like a bad argument).
 *
 * So a bad argument on one process never leaves the others waiting. What a deadline leaves
 * behind: MPI cannot cancel a collective operation, so the one the waiting processes started
 * stays pending for good on its communicator, and the library keeps its buffers until the
 * process exits. After gtstorage_decomp_create() passed the deadline, the communicator it was
 * given must not be used for a collective call again; after gtstorage_exchange_create() passed
 * it, that decomposition refuses further exchanges (#GTSTORAGE_ERROR_COMMUNICATION: create a new
 * one). Such an error means the program called the processes differently: report it and end
 * (MPI_Abort) rather than go on. Choose the deadline well above the time between the first and
 * the last process reaching a collective call: a process later than that makes the call fail
 * everywhere, and one that arrives just as the deadline passes can still leave the others
 * waiting in the following step. What an MPI does when handed a communicator handle it never
 * issued differs (Open MPI: the library sees it and refuses it; MPICH: its own error checking,
 * when compiled in, raises MPI_ERR_COMM on its default error handler): see docs/scale-out.md.
 *
 * **Halo exchange.** A decomposition splits up to three labelled dims (I, J and optionally K) of
 * a global domain over a Cartesian grid of processes. Every process holds its block of a field as
 * a storage whose interior (shape minus halo) is its local extent and whose halo is filled from the
 * neighbours: faces only (#GTSTORAGE_EXCHANGE_STAR) or faces, edges and corners
 * (#GTSTORAGE_EXCHANGE_BOX) from the diagonal neighbours too. An exchange is bound once to any
 * number of storages (any dtype, layout, padding, preset; wrapped memory and views that have a
 * halo; host, device, mirrored or unified memory) and then run every time step with
 * gtstorage_exchange_start() / gtstorage_exchange_wait() (computation can go on in between), or
 * gtstorage_exchange_run(). Everything is built once: derived datatypes from the storages' byte
 * strides, persistent requests, pack buffers; a step allocates nothing. Each step sends one
 * message per neighbouring direction carrying every field (plus one of device memory per
 * direction when device halos go to a GPU-aware MPI directly). Dims that are not decomposed (K
 * when only I and J are, data dims) are exchanged whole, halo included.
 *
 * **Threads.** Handles are valid in every thread, but one exchange is driven by one thread at a
 * time (start, test, wait and release of the same exchange must not race), as an MPI request
 * is; different exchanges may run in different threads where the MPI was initialized with
 * `MPI_THREAD_MULTIPLE`.
 */
#ifndef GTSTORAGE_GTSTORAGE_MPI_H
#define GTSTORAGE_GTSTORAGE_MPI_H

#include "gtstorage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================== */
/** @name Version and limits */
/** @{ */

/**
 * Version of the loaded libgtstorage_mpi, encoded like #GTSTORAGE_VERSION_NUMBER.
 *
 * The component has the version of the core library it was built with.
 *
 * @return MAJOR * 10000 + MINOR * 100 + PATCH (not a status; never fails).
 */
GTSTORAGE_API uint32_t gtstorage_mpi_version(void);

/** Largest number of decomposed dims (I, J, K). */
#define GTSTORAGE_MPI_MAX_DIMS 3
/** Number of neighbouring directions of a 3-D decomposition (3^3 - 1). */
#define GTSTORAGE_MPI_MAX_DIRECTIONS 26
/** The `comm` of #GTSTORAGE_DECOMP_OPTIONS_INIT: no communicator (it must be set). */
#define GTSTORAGE_MPI_COMM_UNSET INT64_MIN

/** @} */

/* ============================================================================================== */
/** @name Decomposition */
/** @{ */

/** Handle of a decomposition (same scheme as ::gtstorage_handle; 0 is never valid). */
typedef uint64_t gtstorage_decomp;

/** Parameters of gtstorage_decomp_create(). Start from #GTSTORAGE_DECOMP_OPTIONS_INIT. */
typedef struct gtstorage_decomp_options {
  uint32_t struct_size; /**< sizeof(gtstorage_decomp_options). */
  /** Number of decomposed dims, 1 … #GTSTORAGE_MPI_MAX_DIMS. */
  uint32_t ndim;
  /** Fortran handle of the communicator (see the table at the top); required. The caller's
   *  communicator is duplicated, never modified. */
  int64_t comm;
  /** Labels of the decomposed dims, in grid order: one character each ("IJ", "IJK", "J") or
   *  comma separated; each of I, J, K at most once. NULL = "IJK"[:ndim]. */
  const char* dims;
  /** ndim process counts of the grid; an entry 0 is chosen by `MPI_Dims_create`; NULL = all 0.
   *  The product must equal the communicator's size. */
  const int32_t* proc_dims;
  /** ndim flags: non-zero = periodic in that dim; NULL = none is periodic. */
  const int32_t* periodic;
  /** Non-zero: `MPI_Cart_create` may renumber the processes (query the new rank with
   *  gtstorage_decomp_get_info()). */
  int32_t reorder;
  int32_t reserved; /**< Must be 0. */
} gtstorage_decomp_options;

/** Initializer for ::gtstorage_decomp_options (2-D, not periodic; comm must be set). */
#define GTSTORAGE_DECOMP_OPTIONS_INIT \
  { sizeof(gtstorage_decomp_options), 2, GTSTORAGE_MPI_COMM_UNSET, NULL, NULL, NULL, 0, 0 }

/**
 * Writes the defaults of #GTSTORAGE_DECOMP_OPTIONS_INIT into an options struct of a given size.
 *
 * As gtstorage_create_options_init_sized(), for ::gtstorage_decomp_options.
 *
 * @param options The struct to initialize; not NULL.
 * @param struct_size Its size in bytes (pass `sizeof *options`): a size
 *        ::gtstorage_decomp_options had in a released version or this one.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p options is NULL or @p struct_size is not such a
 *         size (nothing is written then).
 */
GTSTORAGE_API int gtstorage_decomp_options_init_sized(gtstorage_decomp_options* options,
                                                      size_t struct_size);

/**
 * Creates the Cartesian process grid of a decomposition over a duplicate of a communicator.
 *
 * **Collective** (see "Collective calls" above: ndim, dims, proc_dims, periodic and reorder must
 * be the same on every process). A process whose @p options cannot be read returns at once, the
 * others #GTSTORAGE_ERROR_COMMUNICATION at the deadline.
 *
 * @param options The grid (see ::gtstorage_decomp_options); not NULL. Read only during the call.
 * @param[out] out Receives the new handle, with reference count 1; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p options is NULL or options->struct_size is not
 *         an accepted size (at once), or, on every process: @p out is NULL, `reserved` is not 0,
 *         ndim is not 1 … 3, dims are malformed, a process count is negative, the product of the
 *         process counts is not the number of processes (overflow-checked), `comm` is not a
 *         valid communicator (that process returns at once) or an intercommunicator, the
 *         arguments that describe the grid differ between processes, or
 *         GTSTORAGE_MPI_AGREE_TIMEOUT is not a number of seconds;
 *         #GTSTORAGE_ERROR_COMMUNICATION if MPI is not initialized or already finalized, an MPI
 *         call fails, another process failed (the message names it) or not every process joined
 *         before the deadline.
 */
GTSTORAGE_API int gtstorage_decomp_create(const gtstorage_decomp_options* options,
                                          gtstorage_decomp* out);

/**
 * Adds a reference to a decomposition.
 *
 * @param decomp The decomposition.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p decomp is 0, was never issued or was released;
 *         #GTSTORAGE_ERROR_OVERFLOW if @p decomp already has 2^32 - 1 references.
 */
GTSTORAGE_API int gtstorage_decomp_retain(gtstorage_decomp decomp);

/**
 * Drops a reference to a decomposition.
 *
 * The grid's communicator is freed when the last reference goes (exchanges created from it hold
 * one each).
 *
 * @param decomp The decomposition.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p decomp is 0, was never issued or was already
 *         released.
 */
GTSTORAGE_API int gtstorage_decomp_release(gtstorage_decomp decomp);

/** What a decomposition is, as seen by the calling process. */
typedef struct gtstorage_decomp_info {
  uint32_t struct_size; /**< sizeof(gtstorage_decomp_info), set by the caller. */
  uint32_t ndim;        /**< Number of decomposed dims. */
  int32_t rank;         /**< This process's rank in the grid's communicator. */
  int32_t size;         /**< Number of processes. */
  int32_t proc_dims[GTSTORAGE_MPI_MAX_DIMS]; /**< Processes per decomposed dim. */
  int32_t periodic[GTSTORAGE_MPI_MAX_DIMS];  /**< 1 where periodic. */
  int32_t coords[GTSTORAGE_MPI_MAX_DIMS];    /**< This process's coordinates in the grid. */
  int32_t reserved;                          /**< Set to 0 by the library. */
  /** Labels of the decomposed dims ("I", "J", "K"), in grid order. */
  char dims[GTSTORAGE_MPI_MAX_DIMS][GTSTORAGE_DIM_LABEL_SIZE];
  /** Rank of the lower [0] and upper [1] neighbour per decomposed dim; -1 at the edge of a
   *  dim that is not periodic. */
  int32_t neighbors[GTSTORAGE_MPI_MAX_DIMS][2];
  /** Fortran handle of the grid's Cartesian communicator, owned by the decomposition (valid
   *  while it lives; do not free it). */
  int64_t comm;
} gtstorage_decomp_info;

/** Initializer of ::gtstorage_decomp_info (an output struct: only struct_size matters). */
#define GTSTORAGE_DECOMP_INFO_INIT \
  { sizeof(gtstorage_decomp_info), 0, 0, 0, {0}, {0}, {0}, 0, {{0}}, {{0}}, 0 }

/**
 * Describes a decomposition as seen by the calling process.
 *
 * @param decomp The decomposition.
 * @param[out] out Receives the description, up to the struct_size the caller set; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out is NULL or out->struct_size is not an
 *         accepted size;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p decomp is not a live handle.
 */
GTSTORAGE_API int gtstorage_decomp_get_info(gtstorage_decomp decomp, gtstorage_decomp_info* out);

/**
 * The block of a global domain that a process owns, per decomposed dim.
 *
 * A dim of N points over p processes gives N / p points to each and one more to the first N % p
 * (uneven splits are fine). Not collective.
 *
 * @param decomp The decomposition.
 * @param rank The process, a rank of the grid's communicator; -1 = the calling one.
 * @param global_shape @p n global extents in elements, of the decomposed dims in grid order;
 *        not NULL.
 * @param n Number of entries of @p global_shape, @p out_offset and @p out_extent: the ndim of
 *        @p decomp.
 * @param[out] out_offset Receives @p n first global indices of the block; not NULL.
 * @param[out] out_extent Receives @p n extents of the block in elements; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p decomp is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p n is not the ndim of @p decomp, a pointer is
 *         NULL, @p rank is out of range, or a global extent is smaller than its number of
 *         processes (every process must own at least one point).
 */
GTSTORAGE_API int gtstorage_decomp_local_extent(gtstorage_decomp decomp, int32_t rank,
                                                const int64_t* global_shape, uint32_t n,
                                                int64_t* out_offset, int64_t* out_extent);

/** @} */

/* ============================================================================================== */
/** @name Halo exchange */
/** @{ */

/** Handle of a persistent halo exchange (same scheme as ::gtstorage_handle). */
typedef uint64_t gtstorage_exchange;

/** Which neighbours fill the halo. */
typedef enum gtstorage_exchange_pattern {
  /** Faces, edges and corners (PETSc's DMDA_STENCIL_BOX): every one of the 3^n - 1 neighbours. */
  GTSTORAGE_EXCHANGE_BOX = 0,
  /** Faces only (DMDA_STENCIL_STAR): the 2n neighbours along one dim; corners are not written. */
  GTSTORAGE_EXCHANGE_STAR = 1
} gtstorage_exchange_pattern;

/** How host halo regions travel (device halos are always packed on the device). */
typedef enum gtstorage_exchange_method {
  /** Per field and direction: a datatype, except where the region is made of short runs
   *  (e.g. the I faces of an I-contiguous field), which the library's copy kernels pack
   *  (docs/scale-out.md says why, and when each is chosen). */
  GTSTORAGE_EXCHANGE_AUTO = 0,
  /** MPI derived datatypes built from the storages' byte strides: no copy by the library. */
  GTSTORAGE_EXCHANGE_DATATYPE = 1,
  /** The library's copy kernels pack each region into a buffer (allocated once) and unpack it. */
  GTSTORAGE_EXCHANGE_PACK = 2
} gtstorage_exchange_method;

/** Which side of a field with a host and a device copy (a mirror) is exchanged. */
typedef enum gtstorage_exchange_side {
  /** The current one, decided at every start: the device when it is modified or when both are
   *  clean, the host when the host is modified. */
  GTSTORAGE_EXCHANGE_SIDE_CURRENT = 0,
  /** Always the host; a start while the device is modified fails (#GTSTORAGE_ERROR_SYNC_CONFLICT).
   */
  GTSTORAGE_EXCHANGE_SIDE_HOST = 1,
  /** Always the device; a start while the host is modified fails (#GTSTORAGE_ERROR_SYNC_CONFLICT).
   */
  GTSTORAGE_EXCHANGE_SIDE_DEVICE = 2
} gtstorage_exchange_side;

/** Whether device halos are handed to MPI as device memory. */
typedef enum gtstorage_gpu_aware {
  /** As gtstorage_mpi_gpu_aware() says (`MPIX_Query_cuda_support()`, overridden by the
   *  environment variable GTSTORAGE_MPI_GPU_AWARE=0/1); all processes must agree. */
  GTSTORAGE_GPU_AWARE_AUTO = -1,
  /** Stage the packed halo bytes (only those) through pinned host memory. */
  GTSTORAGE_GPU_AWARE_NO = 0,
  /** Pass device buffers to MPI (a CUDA-aware MPI, or the emulated device whose memory is host
   *  memory). */
  GTSTORAGE_GPU_AWARE_YES = 1
} gtstorage_gpu_aware;

/** Parameters of gtstorage_exchange_create(). Start from #GTSTORAGE_EXCHANGE_OPTIONS_INIT. */
typedef struct gtstorage_exchange_options {
  uint32_t struct_size; /**< sizeof(gtstorage_exchange_options). */
  uint32_t reserved;    /**< Must be 0. */
  /** 2 * ndim widths in elements, (lower, upper) per decomposed dim in grid order: how many
   *  points of each side of the halo are filled. Each must be at most every field's halo on
   *  that side and its interior extent. NULL = each field's own halo. */
  const int64_t* width;
  int32_t pattern;   /**< A ::gtstorage_exchange_pattern. */
  int32_t method;    /**< A ::gtstorage_exchange_method. */
  int32_t side;      /**< A ::gtstorage_exchange_side. */
  int32_t gpu_aware; /**< A ::gtstorage_gpu_aware value. */
} gtstorage_exchange_options;

/** Initializer for ::gtstorage_exchange_options (faces, edges and corners; each field's halo). */
#define GTSTORAGE_EXCHANGE_OPTIONS_INIT                                                           \
  {                                                                                               \
    sizeof(gtstorage_exchange_options), 0, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_AUTO, \
        GTSTORAGE_EXCHANGE_SIDE_CURRENT, GTSTORAGE_GPU_AWARE_AUTO                                 \
  }

/**
 * Writes the defaults of #GTSTORAGE_EXCHANGE_OPTIONS_INIT into an options struct of a given size.
 *
 * As gtstorage_create_options_init_sized(), for ::gtstorage_exchange_options.
 *
 * @param options The struct to initialize; not NULL.
 * @param struct_size Its size in bytes (pass `sizeof *options`): a size
 *        ::gtstorage_exchange_options had in a released version or this one.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p options is NULL or @p struct_size is not such a
 *         size (nothing is written then).
 */
GTSTORAGE_API int gtstorage_exchange_options_init_sized(gtstorage_exchange_options* options,
                                                        size_t struct_size);

/**
 * Binds a persistent exchange of the halos of storages over a decomposition.
 *
 * **Collective** (see "Collective calls" above: `pattern` and @p nfields must be the same on
 * every process; a process whose @p decomp is not a valid handle returns at once, the others at
 * the deadline). Each field must be a storage or view whose dims labels include every decomposed
 * dim and that is not read-only; its halo on each side of a decomposed dim must be at least the
 * width exchanged there, and its interior extent at least the widths (a neighbour's neighbour is
 * never needed). Fields may differ in every other respect. Neighbouring processes must agree,
 * field by field, on the dtype, the layout (stride order), the extents of the regions they
 * exchange (the interior extents of the dims along the shared face) and whether the field has
 * device memory: this is checked with the neighbours, and a mismatch fails on every process with
 * a message naming the field, the direction and both shapes.
 *
 * @param decomp The decomposition (the exchange holds a reference to it).
 * @param fields @p nfields storage or view handles; not NULL. Each is retained
 *        (gtstorage_retain()) until the exchange is released, so releasing a field's handle while
 *        it is bound is safe.
 * @param nfields Number of fields, 1 … 4096.
 * @param options The exchange (see ::gtstorage_exchange_options); NULL = the defaults. Read only
 *        during the call.
 * @param[out] out Receives the new handle, with reference count 1; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p decomp is not a live handle (at once), or a field
 *         is not one;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out or @p fields is NULL, @p nfields is out of
 *         range, options->struct_size is not an accepted size, `reserved` is not 0, `pattern`,
 *         `method`, `side` or `gpu_aware` is not a value of its enum, a width or a field does not
 *         fit as said above, neighbours disagree on a field's dtype, layout or device memory,
 *         `pattern` or @p nfields differ between processes, or GTSTORAGE_MPI_AGREE_TIMEOUT or
 *         GTSTORAGE_MPI_GPU_AWARE has a bad value;
 *         #GTSTORAGE_ERROR_READONLY if a field is read-only;
 *         #GTSTORAGE_ERROR_SHAPE_MISMATCH if neighbours disagree on the extents of a region;
 *         #GTSTORAGE_ERROR_UNSUPPORTED if a region is too large for an MPI count (an `int`);
 *         #GTSTORAGE_ERROR_COMMUNICATION if MPI is not initialized or already finalized, the
 *         decomposition was left behind by a deadline, an MPI call fails, another process failed
 *         or not every process joined before the deadline;
 *         and the statuses of the libgtstorage calls that build it (gtstorage_create() of the
 *         pack buffers, gtstorage_wrap(), gtstorage_slice()), e.g. #GTSTORAGE_ERROR_DEVICE.
 */
GTSTORAGE_API int gtstorage_exchange_create(gtstorage_decomp decomp, const gtstorage_handle* fields,
                                            uint32_t nfields,
                                            const gtstorage_exchange_options* options,
                                            gtstorage_exchange* out);

/**
 * Starts one exchange: packs what is packed and posts every receive and send.
 *
 * Picks each field's side from its sync state (see ::gtstorage_exchange_side; a conflict fails
 * here, before anything is posted), packs (on the device for device halos, on the field's
 * stream), and posts every receive and send. Returns without waiting for the neighbours. Between
 * start and wait, the halos of the bound fields and the interior points next to them must not be
 * written.
 *
 * @param exchange The exchange.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p exchange is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if the exchange is in flight already;
 *         #GTSTORAGE_ERROR_SYNC_CONFLICT if a field's other side than the one the exchange is
 *         bound to is modified (nothing is sent);
 *         #GTSTORAGE_ERROR_COMMUNICATION if MPI is finalized (no MPI call is made then) or an
 *         MPI call fails;
 *         #GTSTORAGE_ERROR_DEVICE if packing on the device fails.
 */
GTSTORAGE_API int gtstorage_exchange_start(gtstorage_exchange exchange);

/**
 * Completes the exchange gtstorage_exchange_start() began.
 *
 * Waits for every message, unpacks, and marks the exchanged side of each field modified
 * (gtstorage_modify(): a mirror's other side is then stale, as after any write). Device halos are
 * in place when it returns.
 *
 * @param exchange The exchange.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p exchange is not a live handle;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if the exchange is not in flight;
 *         #GTSTORAGE_ERROR_COMMUNICATION if MPI is finalized (no MPI call is made then) or an
 *         MPI call fails (the exchange is then no longer in flight);
 *         #GTSTORAGE_ERROR_SYNC_CONFLICT if a field's other side was marked modified meanwhile;
 *         #GTSTORAGE_ERROR_DEVICE if unpacking on the device fails.
 */
GTSTORAGE_API int gtstorage_exchange_wait(gtstorage_exchange exchange);

/**
 * Non-blocking wait: completes the exchange if every message has arrived.
 *
 * If every message has arrived, completes the exchange as gtstorage_exchange_wait() does.
 *
 * @param exchange The exchange.
 * @param[out] out_done Receives 1 if the exchange was completed, else 0; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out_done is NULL or the exchange is not in
 *         flight;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p exchange is not a live handle;
 *         otherwise the statuses of gtstorage_exchange_wait().
 */
GTSTORAGE_API int gtstorage_exchange_test(gtstorage_exchange exchange, int32_t* out_done);

/**
 * One whole exchange: gtstorage_exchange_start() then gtstorage_exchange_wait().
 *
 * @param exchange The exchange.
 * @return #GTSTORAGE_OK; the statuses of gtstorage_exchange_start() and
 *         gtstorage_exchange_wait().
 */
GTSTORAGE_API int gtstorage_exchange_run(gtstorage_exchange exchange);

/**
 * Releases an exchange.
 *
 * Completes it first if it is in flight, then frees its requests, datatypes and buffers and
 * releases its fields and decomposition.
 *
 * @param exchange The exchange.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p exchange is not a live handle;
 *         the statuses of gtstorage_exchange_wait() if completing an exchange in flight fails
 *         (it is released all the same).
 */
GTSTORAGE_API int gtstorage_exchange_release(gtstorage_exchange exchange);

/** What an exchange does per step, as built on the calling process. */
typedef struct gtstorage_exchange_info {
  uint32_t struct_size;     /**< sizeof(gtstorage_exchange_info), set by the caller. */
  uint32_t nfields;         /**< Fields bound. */
  int32_t pattern;          /**< The ::gtstorage_exchange_pattern. */
  int32_t gpu_aware;        /**< 1 if device halos go to MPI as device memory, 0 if staged. */
  int32_t in_flight;        /**< 1 between start and wait. */
  int32_t directions;       /**< Directions with a neighbour (MPI_PROC_NULL ones not counted). */
  int32_t messages;         /**< Messages sent per step (as many are received). */
  int32_t datatype_regions; /**< Field × direction regions sent as MPI datatypes per step. */
  int32_t packed_regions;   /**< Field × direction regions packed by the library per step. */
  int32_t reserved;         /**< Set to 0 by the library. */
  int64_t bytes_sent;       /**< Halo bytes sent per step. */
  int64_t bytes_received;   /**< Halo bytes received per step. */
  /** Bytes the last step moved from device to pinned host memory for staging (0 with a
   *  GPU-aware MPI or without device fields): the packed halo bytes only. */
  int64_t staged_d2h_bytes;
  int64_t staged_h2d_bytes; /**< The same from pinned host to device memory. */
  int64_t steps;            /**< Exchanges completed. */
} gtstorage_exchange_info;

/** Initializer of ::gtstorage_exchange_info (an output struct: only struct_size matters). */
#define GTSTORAGE_EXCHANGE_INFO_INIT \
  { sizeof(gtstorage_exchange_info), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/**
 * Describes what an exchange does per step, as built on the calling process.
 *
 * @param exchange The exchange.
 * @param[out] out Receives the description, up to the struct_size the caller set; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out is NULL or out->struct_size is not an
 *         accepted size;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p exchange is not a live handle.
 */
GTSTORAGE_API int gtstorage_exchange_get_info(gtstorage_exchange exchange,
                                              gtstorage_exchange_info* out);

/**
 * Whether this MPI passes device memory.
 *
 * `MPIX_Query_cuda_support()` where the MPI has it, else 0, unless the environment variable
 * GTSTORAGE_MPI_GPU_AWARE=0 or 1 says otherwise. Needs MPI initialized only for the query itself.
 *
 * @param[out] out_aware Receives 1 if device memory is passed to MPI, else 0; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out_aware is NULL or GTSTORAGE_MPI_GPU_AWARE is
 *         set to something other than 0 or 1.
 */
GTSTORAGE_API int gtstorage_mpi_gpu_aware(int32_t* out_aware);

/** @} */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GTSTORAGE_GTSTORAGE_MPI_H */
