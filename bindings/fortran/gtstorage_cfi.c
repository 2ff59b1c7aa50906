/*
 * gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
/*
 * C shim of the Fortran binding (part of libgtstorage_fortran, not of libgtstorage).
 *
 * It is compiled against the Fortran compiler's own ISO_Fortran_binding.h, because the layout of
 * a C descriptor (CFI_cdesc_t) and the CFI_* functions belong to that compiler's runtime. Keeping
 * them here, built per compiler like the .mod file, keeps libgtstorage itself compiler-neutral.
 *
 * What needs a descriptor:
 *  - gtstorage_get_pointer: a storage's layout is any permutation of the dimensions with padding
 *    (K-first, I-first, padded rows, views with negative strides), which c_f_pointer cannot
 * express: it only makes contiguous column-major pointers. A descriptor with one byte stride and
 * one lower bound per dimension can, so the pointer indexes p(i, j, k) in the storage's semantic
 *    order with the halo-aware bounds 1 - halo_lower … whatever the memory order.
 *  - gtstorage_wrap and the array copies: an assumed-shape Fortran array may be a non-contiguous
 *    section; its descriptor gives its address, extents and byte strides.
 *
 * Errors found here get a thread-local message (like the core's gtstorage_last_error()), which the
 * Fortran layer reads through gtstorage_fortran_last_error(). The shim also keeps the error mode
 * of the Fortran layer (process-wide, atomic) and the status of each thread's last call.
 */
#include <ISO_Fortran_binding.h>
#include <gtstorage/gtstorage.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GTSTORAGE_FORTRAN_API __attribute__((visibility("default")))

/* -------------------------------------------------------------------------------------------- */
/* Messages                                                                                      */
/* -------------------------------------------------------------------------------------------- */

enum { kMessageSize = 1024 };
static _Thread_local char g_message[kMessageSize];
static _Thread_local int g_has_message;

static void set_error(const char* format, ...) __attribute__((format(printf, 1, 2)));
static void set_error(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(g_message, sizeof g_message, format, args);
  va_end(args);
  g_has_message = 1;
}

GTSTORAGE_FORTRAN_API void gtstorage_fortran_clear_error(void) {
  g_has_message = 0;
  g_message[0] = '\0';
}

GTSTORAGE_FORTRAN_API void gtstorage_fortran_set_error(const char* message) {
  set_error("%s", message ? message : "");
}

/* The core numbers dimensions from 0, as C does; the Fortran API passes them in the same
 * (semantic) order but counts from 1. Copies @p in to @p out with every "dimension <n>" written
 * as "dimension <n+1>" (the only way core messages name a dimension by number). */
static void one_based_dimensions(const char* in, char* out, size_t size) {
  static const char word[] = "dimension ";
  const size_t wlen = sizeof word - 1;
  size_t o = 0;
  while (*in != '\0' && o + 1 < size) {
    if (strncmp(in, word, wlen) == 0 && in[wlen] >= '0' && in[wlen] <= '9') {
      char* end = NULL;
      const unsigned long d = strtoul(in + wlen, &end, 10);
      const int n = snprintf(out + o, size - o, "%s%lu", word, d + 1);
      if (n < 0 || (size_t)n >= size - o) break;
      o += (size_t)n;
      in = end;
    } else {
      out[o++] = *in++;
    }
  }
  out[o < size ? o : size - 1] = '\0';
}

/* Keeps the core's current message (prefixed by the Fortran procedure, dimensions counted from
 * 1) unless this call already has one: the core resets its message on the next successful call,
 * e.g. a cleanup release. */
GTSTORAGE_FORTRAN_API void gtstorage_fortran_capture_error(const char* where) {
  if (g_has_message) return;
  char core[kMessageSize];
  one_based_dimensions(gtstorage_last_error(), core, sizeof core);
  set_error("%s: %s", where ? where : "gtstorage", core);
}

GTSTORAGE_FORTRAN_API const char* gtstorage_fortran_last_error(void) {
  static _Thread_local char core[kMessageSize];
  if (g_has_message) return g_message;
  one_based_dimensions(gtstorage_last_error(), core, sizeof core);
  return core;
}

/* -------------------------------------------------------------------------------------------- */
/* Error mode and last status                                                                    */
/* -------------------------------------------------------------------------------------------- */

/* The values of GTSTORAGE_ERRORS_RETURN and GTSTORAGE_ERRORS_ARE_FATAL in the module. */
enum { kErrorsReturn = 0, kErrorsAreFatal = 1, kErrorsUnset = -1 };

/* Process-wide, like MPI's error handler: set by gtstorage_fortran_set_error_mode or, until
 * then, taken once from GTSTORAGE_FORTRAN_ERRORS. */
static atomic_int g_error_mode = kErrorsUnset;
static _Thread_local int g_last_status = GTSTORAGE_OK;

/* The mode GTSTORAGE_FORTRAN_ERRORS selects: "fatal" or "return"; anything else is ignored. */
static int mode_from_environment(void) {
  const char* value = getenv("GTSTORAGE_FORTRAN_ERRORS");
  if (value && strcmp(value, "fatal") == 0) return kErrorsAreFatal;
  return kErrorsReturn;
}

GTSTORAGE_FORTRAN_API int gtstorage_fortran_error_mode(void) {
  int mode = atomic_load(&g_error_mode);
  if (mode != kErrorsUnset) return mode;
  /* First use: read the environment once. If another thread (or a set_error_mode call) got
   * there first, its value wins and is returned. */
  int expected = kErrorsUnset;
  mode = mode_from_environment();
  if (!atomic_compare_exchange_strong(&g_error_mode, &expected, mode)) mode = expected;
  return mode;
}

/* The module validates mode (its message goes through the usual error path). */
GTSTORAGE_FORTRAN_API void gtstorage_fortran_set_error_mode(int mode) {
  atomic_store(&g_error_mode, mode);
}

GTSTORAGE_FORTRAN_API void gtstorage_fortran_set_last_status(int status) {
  g_last_status = status;
}

GTSTORAGE_FORTRAN_API int gtstorage_fortran_last_status(void) {
  return g_last_status;
}

/* -------------------------------------------------------------------------------------------- */
/* Element types                                                                                 */
/* -------------------------------------------------------------------------------------------- */

typedef struct type_entry {
  CFI_type_t type;
  const char* typestr;
  const char* fortran;
} type_entry;

static const type_entry k_types[] = {
#define GTSTORAGE_FORTRAN_TYPE(tag, cfi, typestr, ftype) {cfi, typestr, ftype},
#include "gtstorage_cfi_types.h"
#undef GTSTORAGE_FORTRAN_TYPE
};

static const type_entry* find_type(CFI_type_t type) {
  for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; ++i)
    if (k_types[i].type == type) return &k_types[i];
  return NULL;
}

/* Typestrs equal up to the byte-order character ('<', '|' and '=' all mean native here). */
static int same_dtype(const char* a, const char* b) {
  if (!a[0] || !b[0]) return 0;
  return strcmp(a + 1, b + 1) == 0;
}

/* -------------------------------------------------------------------------------------------- */
/* Pointers                                                                                      */
/* -------------------------------------------------------------------------------------------- */

static int make_pointer(gtstorage_handle handle, int32_t side, int32_t for_reading, CFI_cdesc_t* p,
                        CFI_type_t expected) {
  static const char where[] = "gtstorage_get_pointer";
  /* The Fortran caller cannot nullify an assumed-rank pointer (nullify() takes no p(..)), so
   * the pointer is disassociated here, first: every failure below leaves it so. */
  if (p && p->attribute == CFI_attribute_pointer) (void)CFI_setpointer(p, NULL, NULL);
  const type_entry* type = find_type(expected);
  if (!p || !type) {
    set_error("%s: internal error: no pointer descriptor or unknown type code %d", where,
              (int)expected);
    return GTSTORAGE_ERROR_INTERNAL;
  }
  if (p->attribute != CFI_attribute_pointer || p->type != expected) {
    set_error("%s: internal error: descriptor attribute %d / type %d, expected a %s pointer", where,
              (int)p->attribute, (int)p->type, type->fortran);
    return GTSTORAGE_ERROR_INTERNAL;
  }

  gtstorage_interface_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  int status = gtstorage_interface(handle, side, &info);
  if (status != GTSTORAGE_OK) return status; /* the core's message names the problem */

  if (!same_dtype(info.typestr, type->typestr)) {
    set_error(
        "%s: the storage holds '%s' elements but the pointer is %s ('%s'); pass a pointer of the "
        "storage's element type",
        where, info.typestr, type->fortran, type->typestr);
    return GTSTORAGE_ERROR_INVALID_ARGUMENT;
  }
  if ((int)info.ndim != (int)p->rank) {
    set_error("%s: the storage has %u dimensions but the pointer has rank %d", where,
              (unsigned)info.ndim, (int)p->rank);
    return GTSTORAGE_ERROR_INVALID_ARGUMENT;
  }
  if (info.readonly && !for_reading) {
    set_error(
        "%s: the storage is read-only; pass readonly=.true. to promise that the pointer is only "
        "read",
        where);
    return GTSTORAGE_ERROR_READONLY;
  }
  if (info.itemsize != (int64_t)p->elem_len) {
    set_error("%s: internal error: item size %lld of '%s' differs from the pointer's %zu", where,
              (long long)info.itemsize, info.typestr, (size_t)p->elem_len);
    return GTSTORAGE_ERROR_INTERNAL;
  }

  CFI_index_t extents[CFI_MAX_RANK];
  CFI_index_t lower_bounds[CFI_MAX_RANK];
  for (int d = 0; d < p->rank; ++d) {
    /* A Fortran descriptor counts strides in elements once back in Fortran; a byte stride that
     * is not a multiple of the element size has no Fortran equivalent. */
    if (info.strides[d] % info.itemsize != 0) {
      set_error(
          "%s: dimension %d has a stride of %lld bytes, not a multiple of the element size %lld; "
          "a Fortran pointer cannot describe it",
          where, d + 1, (long long)info.strides[d], (long long)info.itemsize);
      return GTSTORAGE_ERROR_UNSUPPORTED;
    }
    extents[d] = (CFI_index_t)info.shape[d];
    /* The halo-aware bounds: the interior starts at 1, the lower halo at 1 - width. */
    lower_bounds[d] = (CFI_index_t)(1 - info.halo[d][0]);
  }

  CFI_CDESC_T(CFI_MAX_RANK) view;
  CFI_cdesc_t* v = (CFI_cdesc_t*)&view;
  int rc = CFI_establish(v, info.data, CFI_attribute_pointer, p->type, p->elem_len, p->rank,
                         info.data ? extents : NULL);
  if (rc != CFI_SUCCESS) {
    set_error("%s: CFI_establish failed with code %d", where, rc);
    return GTSTORAGE_ERROR_INTERNAL;
  }
  /* CFI_establish assumes a contiguous column-major array; the storage's real strides replace
   * that here, which is what lets one descriptor express any layout (and padding). */
  if (info.data)
    for (int d = 0; d < p->rank; ++d) v->dim[d].sm = (CFI_index_t)info.strides[d];
  rc = CFI_setpointer(p, v, info.data ? lower_bounds : NULL);
  if (rc != CFI_SUCCESS) {
    set_error("%s: CFI_setpointer failed with code %d", where, rc);
    return GTSTORAGE_ERROR_INTERNAL;
  }
  return GTSTORAGE_OK;
}

/* One entry point per element type, because a Fortran interface gives its pointer dummy one
 * declared type; the pointer is assumed rank (p(..)), so p->rank is the caller's rank, 0 to 15. */
#define GTSTORAGE_FORTRAN_TYPE(tag, cfi, typestr, ftype)                                           \
  GTSTORAGE_FORTRAN_API int gtstorage_fortran_pointer_##tag(gtstorage_handle handle, int32_t side, \
                                                            int32_t for_reading, CFI_cdesc_t* p) { \
    return make_pointer(handle, side, for_reading, p, cfi);                                        \
  }
#include "gtstorage_cfi_types.h"
#undef GTSTORAGE_FORTRAN_TYPE

/* -------------------------------------------------------------------------------------------- */
/* Fortran arrays as storages and copy sources/destinations                                      */
/* -------------------------------------------------------------------------------------------- */

/* Shape and byte strides of the array described by a; message and status on failure. */
static int array_geometry(const CFI_cdesc_t* a, const char* typestr, const char* where,
                          int64_t* shape, int64_t* strides) {
  if (!a || !typestr) {
    set_error("%s: internal error: no array descriptor or typestr", where);
    return GTSTORAGE_ERROR_INTERNAL;
  }
  /* Rank 0 (a scalar) is a 0-d storage of one element. */
  /* The generated callers pass the typestr of their own declared type; the element length of
   * the descriptor must agree, or the typestr table and the descriptor disagree. */
  const type_entry* type = NULL;
  for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; ++i)
    if (same_dtype(k_types[i].typestr, typestr)) type = &k_types[i];
  if (!type) {
    set_error("%s: internal error: typestr '%s' is not one of the binding's types", where, typestr);
    return GTSTORAGE_ERROR_INTERNAL;
  }
  const size_t itemsize = (size_t)strtoul(typestr + 2, NULL, 10);
  if (a->elem_len != itemsize) {
    set_error("%s: internal error: element length %zu of the array differs from '%s'", where,
              (size_t)a->elem_len, typestr);
    return GTSTORAGE_ERROR_INTERNAL;
  }
  for (int d = 0; d < a->rank; ++d) {
    shape[d] = (int64_t)a->dim[d].extent;
    strides[d] = (int64_t)a->dim[d].sm;
  }
  return GTSTORAGE_OK;
}

/* gtstorage_wrap of the array `a` describes, its address as the host side (`data`) or, when
 * `on_device`, as the device side (`device_data`); the caller's `options` bring the rest. */
static int wrap_array(CFI_cdesc_t* a, const char* typestr, const char* where, int on_device,
                      gtstorage_wrap_options* options, gtstorage_handle* out) {
  int64_t shape[CFI_MAX_RANK];
  int64_t strides[CFI_MAX_RANK];
  if (out) *out = GTSTORAGE_NULL_HANDLE;
  const int status = array_geometry(a, typestr, where, shape, strides);
  if (status != GTSTORAGE_OK) return status;
  options->ndim = (uint32_t)a->rank;
  if (on_device) {
    options->device_data = a->base_addr;
  } else {
    options->data = a->base_addr;
  }
  options->shape = shape;
  options->strides = strides;
  options->dtype = typestr;
  return gtstorage_wrap(options, out);
}

GTSTORAGE_FORTRAN_API int gtstorage_fortran_wrap(CFI_cdesc_t* a, const char* typestr,
                                                 const char* dims, const int64_t* halo,
                                                 int32_t readonly, gtstorage_release_fn release,
                                                 void* user_data, gtstorage_handle* out) {
  gtstorage_wrap_options options = GTSTORAGE_WRAP_OPTIONS_INIT;
  options.dims = dims;
  options.halo = halo;
  options.readonly = readonly;
  options.release = release;
  options.user_data = user_data;
  return wrap_array(a, typestr, "gtstorage_wrap", 0, &options, out);
}

/* gtstorage_wrap_device: the array's address is a device address (inside OpenACC's
 * `host_data use_device(a)`, or a CUDA Fortran device array), wrapped as the device side of a
 * storage; its work runs on `stream` (acc_get_cuda_stream(queue); NULL: the default stream). */
GTSTORAGE_FORTRAN_API int gtstorage_fortran_wrap_device(CFI_cdesc_t* a, const char* typestr,
                                                        const char* dims, const int64_t* halo,
                                                        int32_t readonly, void* stream,
                                                        int32_t device_id, gtstorage_handle* out) {
  gtstorage_wrap_options options = GTSTORAGE_WRAP_OPTIONS_INIT;
  options.dims = dims;
  options.halo = halo;
  options.readonly = readonly;
  options.device_id = device_id;
  gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
  int status = wrap_array(a, typestr, "gtstorage_wrap_device", 1, &options, &h);
  if (status != GTSTORAGE_OK) return status;
  if (stream != NULL) {
    status = gtstorage_set_stream(h, (uint64_t)(uintptr_t)stream);
    if (status != GTSTORAGE_OK) {
      char message[kMessageSize];
      snprintf(message, sizeof message, "stream: %s", gtstorage_last_error());
      gtstorage_release(h);
      set_error("%s", message);
      return status;
    }
  }
  if (out) *out = h;
  return GTSTORAGE_OK;
}

/* The caller array a as a gtstorage_array (its geometry in shape and strides, each of
 * CFI_MAX_RANK elements), for the copy named in messages by where. */
static int caller_array(CFI_cdesc_t* a, const char* typestr, const char* where, int64_t* shape,
                        int64_t* strides, gtstorage_array* array) {
  int status = array_geometry(a, typestr, where, shape, strides);
  if (status != GTSTORAGE_OK) return status;
  const gtstorage_array init = GTSTORAGE_ARRAY_INIT;
  *array = init;
  array->ndim = (uint32_t)a->rank;
  array->data = a->base_addr;
  array->shape = shape;
  array->strides = strides;
  array->dtype = typestr;
  return GTSTORAGE_OK;
}

GTSTORAGE_FORTRAN_API int gtstorage_fortran_copy_from_array(gtstorage_handle handle, CFI_cdesc_t* a,
                                                            const char* typestr) {
  int64_t shape[CFI_MAX_RANK];
  int64_t strides[CFI_MAX_RANK];
  gtstorage_array array;
  int status = caller_array(a, typestr, "gtstorage_copy_from_array", shape, strides, &array);
  return status != GTSTORAGE_OK ? status : gtstorage_copy_from_array(handle, &array);
}

GTSTORAGE_FORTRAN_API int gtstorage_fortran_copy_to_array(CFI_cdesc_t* a, gtstorage_handle handle,
                                                          const char* typestr) {
  int64_t shape[CFI_MAX_RANK];
  int64_t strides[CFI_MAX_RANK];
  gtstorage_array array;
  int status = caller_array(a, typestr, "gtstorage_copy_to_array", shape, strides, &array);
  return status != GTSTORAGE_OK ? status : gtstorage_copy_to_array(&array, handle);
}
