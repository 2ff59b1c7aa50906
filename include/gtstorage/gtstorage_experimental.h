/*
 * gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * @file gtstorage_experimental.h
 * @brief The experimental tier of libgtstorage: test, diagnostic and tuning hooks.
 *
 * **No ABI promise.** What is declared here may change or disappear in any minor version (like
 * zstd's `ZSTD_STATIC_LINKING_ONLY` section or libgit2's `git2/sys/` headers); a program that
 * uses it must be rebuilt against each new version of the library. The functions are exported
 * by the same library, under the symbol version GTSTORAGE_EXPERIMENTAL (the stable tier's is
 * GTSTORAGE_1), and follow the conventions of gtstorage.h (status codes, thread-local messages,
 * never aborting).
 *
 * Include this header (it includes gtstorage.h), or define `GTSTORAGE_EXPERIMENTAL` before
 * including gtstorage.h.
 */
#ifndef GTSTORAGE_GTSTORAGE_EXPERIMENTAL_H
#define GTSTORAGE_GTSTORAGE_EXPERIMENTAL_H

#include "gtstorage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================== */
/** @name Experimental: handles */
/** @{ */

/**
 * Current reference count of a handle (a test and leak-hunting hook).
 *
 * The count can change at any time in a program with other threads.
 *
 * @param handle The storage or view.
 * @param[out] out_count Receives the count; not NULL.
 * @return #GTSTORAGE_OK;
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p out_count is NULL;
 *         #GTSTORAGE_ERROR_INVALID_HANDLE if @p handle is not a live handle.
 */
GTSTORAGE_API int gtstorage_refcount(gtstorage_handle handle, int64_t* out_count);

/** @} */

/* ============================================================================================== */
/** @name Experimental: devices */
/** @{ */

/**
 * Selects the device backend (a test hook).
 *
 * Also read once from the environment variable GTSTORAGE_DEVICE_BACKEND. Only allowed while no
 * device storage is alive. Meant for tests (switching to the emulated device); a program sets the
 * environment variable instead.
 *
 * @param name NUL-terminated, case-insensitive: "cuda", "hip", "emulated", "none" or "auto"; not
 *        NULL.
 * @return #GTSTORAGE_OK (also when @p name is the active backend, storages alive or not);
 *         #GTSTORAGE_ERROR_INVALID_ARGUMENT if @p name is NULL or not a backend's name, or if
 *         device storages of another backend are alive;
 *         #GTSTORAGE_ERROR_UNSUPPORTED for a backend this build lacks.
 */
GTSTORAGE_API int gtstorage_device_set_backend(const char* name);

/** @} */

/* ============================================================================================== */
/** @name Experimental: statistics */
/** @{ */

/**
 * Resets the global transfer counters and the pools' hits, misses, evictions and high-water
 * marks.
 *
 * Live counts and held bytes are not counters and are kept. Process-wide: it races with any other
 * thread that reads the counters.
 *
 * @return #GTSTORAGE_OK (it has no failure of its own).
 */
GTSTORAGE_API int gtstorage_reset_transfer_stats(void);

/** @} */

/* ============================================================================================== */
/** @name Experimental: deprecated */
/** @{ */

/**
 * **Deprecated** name of gtstorage_device_set_backend() (the same function).
 *
 * @param name As for gtstorage_device_set_backend().
 * @return As gtstorage_device_set_backend().
 */
GTSTORAGE_API GTSTORAGE_DEPRECATED(
    "use gtstorage_device_set_backend") int gtstorage_set_device_backend(const char* name);

/** @} */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GTSTORAGE_GTSTORAGE_EXPERIMENTAL_H */
