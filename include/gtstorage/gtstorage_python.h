/*
 * gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * @file gtstorage_python.h
 * @brief libgtstorage_python: a C or Fortran model calls Python (GT4Py) code on its own fields.
 *
 * The model owns the time loop, the memory and the MPI decomposition. It wraps its arrays as
 * storages (gtstorage_wrap(): host or device addresses, any strides, halos, a stream), starts
 * the Python interpreter once, resolves `"package.module:function"` once into a function
 * handle, and then calls it every step with an ordered list of storage handles and named
 * scalars. Python sees the model's memory, never a copy: NumPy or CuPy views, GDP-3 storages or
 * gt4py.next fields, as the function declares (`gtstorage.bridge`, docs/fortran-to-python.md).
 *
 * The library embeds CPython through its C API: the interpreter it was built with
 * (`gtstorage_python_build_python()` names it), with the prefix, virtual environment and module
 * path chosen at run time (::gtstorage_python_options, `VIRTUAL_ENV`, `PYTHONHOME`,
 * `PYTHONPATH`). When the process already runs that Python (the host program is a Python
 * script), gtstorage_python_init() attaches to it instead of starting another.
 *
 * Errors follow gtstorage.h: every function returns a ::gtstorage_status and records a message
 * that gtstorage_last_error() returns on the calling thread. An exception raised by Python code
 * is #GTSTORAGE_ERROR_PYTHON (or the status of a gtstorage exception, or
 * #GTSTORAGE_ERROR_INVALID_ARGUMENT for an argument that does not match the function's
 * declaration); its message names the function, the exception type, its text and the innermost
 * traceback frame. The interpreter stays usable after any failure. Each function's `@return`
 * lists its own statuses; #GTSTORAGE_ERROR_OUT_OF_MEMORY and #GTSTORAGE_ERROR_INTERNAL, which any
 * function can return, are said once in gtstorage.h (@ref gtstorage_common_statuses).
 *
 * Threads: any thread may call; each call takes the GIL and gives it back before returning, so
 * calls from an OpenMP region run one at a time, in some order. No function here aborts or exits.
 *
 * Linking: `-lgtstorage_python -lgtstorage` (pkg-config `gtstorage-python`, CMake component
 * `Python`: target `gtstorage::python`). Symbols carry the version node GTSTORAGE_PYTHON_1.
 */
#ifndef GTSTORAGE_PYTHON_H
#define GTSTORAGE_PYTHON_H

#include "gtstorage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================== */
/** @name The interpreter
 * Started (or attached to) once per process. */
/** @{ */

/** Parameters of gtstorage_python_init(). Start from #GTSTORAGE_PYTHON_OPTIONS_INIT. */
typedef struct gtstorage_python_options {
  uint32_t struct_size; /**< sizeof(gtstorage_python_options). */
  uint32_t reserved;    /**< Must be 0. */
  /** Python's prefix (what `PYTHONHOME` sets: the directory holding `lib/python3.X`). NULL: the
   *  environment's `PYTHONHOME` when `use_environment` is non-zero, else the prefix of the
   *  Python the library was built with. Not used when attaching to a running interpreter. */
  const char* python_home;
  /** A virtual environment made with the library's Python (`python3.X -m venv DIR`): its
   *  site-packages are used. NULL: the environment's `VIRTUAL_ENV` when `use_environment` is
   *  non-zero; "": none. Not used when attaching. */
  const char* virtual_env;
  /** Directories put first on `sys.path`, in this order, separated by ':' as in `PYTHONPATH`
   *  (also when attaching), or NULL. */
  const char* sys_path;
  /** Non-zero (the default): Python reads its environment variables (`PYTHONPATH`,
   *  `PYTHONHOME`, …) as the `python3` command does. 0: isolated from them. */
  int32_t use_environment;
  /** Non-zero: Python installs its signal handlers (SIGINT raises KeyboardInterrupt). 0 (the
   *  default): the model's handlers stay. */
  int32_t install_signal_handlers;
} gtstorage_python_options;

/** Initializer for ::gtstorage_python_options. */
#define GTSTORAGE_PYTHON_OPTIONS_INIT \
  { sizeof(gtstorage_python_options), 0, NULL, NULL, NULL, 1, 0 }

/**
 * Starts the Python interpreter, or attaches to the one running in the process.
 *
 * A second call while initialized does nothing and returns #GTSTORAGE_OK (its options are
 * ignored, except `sys_path`, whose directories are added). After gtstorage_python_finalize() the
 * interpreter this library started cannot be started again (extension modules such as NumPy do
 * not survive a restart). A Python that cannot start (a wrong `python_home`, a broken
 * installation) gives #GTSTORAGE_ERROR_PYTHON with Python's own reason, and the process goes on.
 *
 * @param options Where Python and its modules are (see ::gtstorage_python_options); NULL = the
 *        defaults. Read only during the call.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if options->struct_size is not an accepted size,
 *         `reserved` is not 0, or `python_home` or `virtual_env` is not a directory, not a virtual
 *         environment or one of another Python version;
 *         #GTSTORAGE_ERROR_UNSUPPORTED after gtstorage_python_finalize() finalized the
 *         interpreter this library started;
 *         #GTSTORAGE_ERROR_PYTHON if the interpreter cannot start (also on every later call once
 *         it failed), the process already runs another Python version, or a `sys_path` entry
 *         cannot be added.
 */
GTSTORAGE_API int gtstorage_python_init(const gtstorage_python_options* options);

/**
 * Releases every function handle and, when this library started the interpreter, finalizes it.
 *
 * When it attached, the interpreter keeps running. Calling it is optional: a process may exit
 * with the interpreter running. Without an interpreter it does nothing.
 *
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if the interpreter this library started is finalized
 *         from another thread than the one that started it (nothing is done then).
 */
GTSTORAGE_API int gtstorage_python_finalize(void);

/**
 * Whether the interpreter is usable by this library, and how it got there.
 *
 * @param[out] out_state Receives 1 (started here) or 2 (attached) while the interpreter is
 *        usable, 0 if it is not initialized or was finalized; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out_state is NULL.
 */
GTSTORAGE_API int gtstorage_python_state(int32_t* out_state);

/**
 * The Python this library was built with.
 *
 * @return A static string "3.12.1 (/path/to/prefix)" (not a status; never NULL; do not free).
 */
GTSTORAGE_API const char* gtstorage_python_build_python(void);

/** @} */

/* ============================================================================================== */
/** @name Functions
 * Resolve once, call every step. */
/** @{ */

/** A resolved Python function. 0 is never a valid one. */
typedef uint64_t gtstorage_python_function;

/**
 * Imports a module and looks a function up once, into a function handle.
 *
 * Calls through the handle do no import and no lookup. A function decorated with
 * `gtstorage.bridge.export` declares its arguments; any other callable gets every storage as a
 * NumPy (host) or CuPy (device) view.
 *
 * @param target NUL-terminated `"package.module:function"` or `"module:Class.attribute"`; not
 *        NULL.
 * @param[out] out Receives the handle (release it with gtstorage_python_release_function()); 0
 *        when the call fails; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out or @p target is NULL, @p target is
 *         malformed, or gtstorage.bridge refuses the function's declaration;
 *         #GTSTORAGE_ERROR_PYTHON if the interpreter is not running, the module cannot be
 *         imported or an attribute is missing (the message has the exception).
 */
GTSTORAGE_API int gtstorage_python_resolve(const char* target, gtstorage_python_function* out);

/**
 * Forgets a function handle (and the views it cached).
 *
 * @param fn The function handle.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_PYTHON if the interpreter is not running (gtstorage_python_finalize()
 *         has released every handle);
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p fn is 0, was never issued or was released.
 */
GTSTORAGE_API int gtstorage_python_release_function(gtstorage_python_function fn);

/** Kind of a named scalar argument (::gtstorage_python_arg). */
typedef enum gtstorage_python_arg_kind {
  GTSTORAGE_PYTHON_INT64 = 1,  /**< `int_value` as a Python int. */
  GTSTORAGE_PYTHON_DOUBLE = 2, /**< `real_value` as a Python float. */
  GTSTORAGE_PYTHON_BOOL = 3,   /**< `int_value` != 0 as a Python bool. */
  GTSTORAGE_PYTHON_STRING = 4  /**< `string_value` (NUL-terminated UTF-8) as a Python str. */
} gtstorage_python_arg_kind;

/** A named scalar argument, passed to the Python function as a keyword argument. */
typedef struct gtstorage_python_arg {
  const char* name;         /**< The keyword (an identifier), not NULL. */
  int32_t kind;             /**< A ::gtstorage_python_arg_kind. */
  int32_t reserved;         /**< Must be 0. */
  int64_t int_value;        /**< For #GTSTORAGE_PYTHON_INT64 and #GTSTORAGE_PYTHON_BOOL. */
  double real_value;        /**< For #GTSTORAGE_PYTHON_DOUBLE. */
  const char* string_value; /**< For #GTSTORAGE_PYTHON_STRING: UTF-8, not NULL. */
} gtstorage_python_arg;

/**
 * Calls a resolved Python function with storages and named scalars.
 *
 * Each storage is referenced for the duration of the call. What Python receives is what the
 * function declared; views made for a handle are cached with the function and reused while the
 * same handle comes back at the same position. The views are valid during the call: Python
 * code that keeps one longer must hold a storage (`gtstorage.Storage.from_handle`).
 *
 * A storage with a device side is made current on the side the function declared (host or
 * device) before the call and marked modified there unless declared read-only; device work in
 * Python is ordered after the storage's stream (gtstorage_set_stream()), without a device-wide
 * synchronization.
 *
 * @param fn The function handle (gtstorage_python_resolve()).
 * @param storages @p nstorages storage or view handles, the positional arguments in order; may
 *        be NULL when @p nstorages is 0.
 * @param nstorages Number of entries of @p storages.
 * @param args @p nargs named scalars (::gtstorage_python_arg), the keyword arguments; may be NULL
 *        when @p nargs is 0. Read only during the call.
 * @param nargs Number of entries of @p args.
 * @param flags Must be 0.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_PYTHON if the interpreter is not running or the function raised (the
 *         message names the function, the exception and the innermost traceback frame);
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p fn is not a live function handle, or a storage
 *         is not a live handle (the message names its position);
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p flags is not 0, @p storages or @p args is NULL
 *         with a count above 0, an argument is malformed (an empty name, reserved not 0, a kind
 *         that is not a ::gtstorage_python_arg_kind, a NULL string), or an argument does not
 *         match the function's declaration;
 *         the status of a gtstorage exception the function raised (e.g. making a side current).
 */
GTSTORAGE_API int gtstorage_python_call(gtstorage_python_function fn,
                                        const gtstorage_handle* storages, uint32_t nstorages,
                                        const gtstorage_python_arg* args, uint32_t nargs,
                                        uint32_t flags);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* GTSTORAGE_PYTHON_H */
