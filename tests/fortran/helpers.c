/*
 * gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
/*
 * C side of the Fortran tests: reads and writes storage elements the way a C host model would,
 * through gtstorage_interface() and manual byte addressing (data + sum(index * stride)), so a
 * Fortran pointer that got the layout wrong shows up as a value mismatch. Also reports the C
 * sizes and offsets of the ABI structs for the struct-mirroring test.
 *
 * Indices are 0-based C indices over the whole view, halo included, in the storage's (semantic)
 * dimension order.
 */
#include <gtstorage/gtstorage.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Address of the element at idx, or NULL (with *status set) if the storage cannot be described
 * or idx is out of range. */
static char* element(gtstorage_handle h, const int64_t* idx, gtstorage_interface_info* info,
                     int* status) {
  memset(info, 0, sizeof *info);
  info->struct_size = sizeof *info;
  *status = gtstorage_interface(h, GTSTORAGE_SIDE_HOST, info);
  if (*status != GTSTORAGE_OK) return NULL;
  char* p = (char*)info->data;
  for (uint32_t d = 0; d < info->ndim; ++d) {
    if (idx[d] < 0 || idx[d] >= info->shape[d]) {
      *status = GTSTORAGE_ERROR_INVALID_ARGUMENT;
      return NULL;
    }
    p += idx[d] * info->strides[d];
  }
  return p;
}

/* Kind character and size of a typestr such as "<f8" or "|b1". */
static int kind_is(const gtstorage_interface_info* info, char kind, int64_t size) {
  return info->typestr[1] == kind && info->itemsize == size;
}

/* The dtypes converted by value: X(kind character, size, C type of a number). A complex dtype
 * (kind 'c') is two numbers of its type, a real one the first of them; booleans are read as 0 or
 * 1 whatever byte they hold, so they have their own conversion. */
#define TFH_NUMBER_DTYPES(X) \
  X('f', 4, float)           \
  X('f', 8, double)          \
  X('i', 1, int8_t)          \
  X('i', 2, int16_t)         \
  X('i', 4, int32_t)         \
  X('i', 8, int64_t)         \
  X('c', 8, float)           \
  X('c', 16, double)

/* Reads the element at idx as (re, im); im is 0 except for complex dtypes. */
int tfh_read(gtstorage_handle h, const int64_t* idx, double* re, double* im) {
  gtstorage_interface_info info;
  int status;
  const char* p = element(h, idx, &info, &status);
  if (!p) return status;
#define TFH_READ(kind, size, type)  \
  if (kind_is(&info, kind, size)) { \
    type v[2] = {0, 0};             \
    memcpy(v, p, size);             \
    *re = (double)v[0];             \
    *im = (double)v[1];             \
    return GTSTORAGE_OK;            \
  }
  TFH_NUMBER_DTYPES(TFH_READ)
#undef TFH_READ
  *im = 0.0;
  if (!kind_is(&info, 'b', 1)) return GTSTORAGE_ERROR_UNSUPPORTED;
  *re = *p ? 1.0 : 0.0;
  return GTSTORAGE_OK;
}

/* Writes (re, im) converted to the storage's dtype at idx. */
int tfh_write(gtstorage_handle h, const int64_t* idx, double re, double im) {
  gtstorage_interface_info info;
  int status;
  char* p = element(h, idx, &info, &status);
  if (!p) return status;
#define TFH_WRITE(kind, size, type)         \
  if (kind_is(&info, kind, size)) {         \
    const type v[2] = {(type)re, (type)im}; \
    memcpy(p, v, size);                     \
    return GTSTORAGE_OK;                    \
  }
  TFH_NUMBER_DTYPES(TFH_WRITE)
#undef TFH_WRITE
  if (!kind_is(&info, 'b', 1)) return GTSTORAGE_ERROR_UNSUPPORTED;
  *p = re != 0.0;
  return GTSTORAGE_OK;
}

/* Address of the element at idx (0 on failure), to compare with c_loc of a pointer element. */
intptr_t tfh_address(gtstorage_handle h, const int64_t* idx) {
  gtstorage_interface_info info;
  int status;
  char* p = element(h, idx, &info, &status);
  return (intptr_t)p;
}

/* Size and field offsets of every struct of the header, generated from it (tools/gen_bindings.py)
 * like the bind(C) types they are compared with. which and field count from 1; -1 if out of
 * range. */
#include "abi_layout_gen.h"

int64_t tfh_abi_size(int32_t which) {
  return which >= 1 && which <= tfh_abi_nstructs ? tfh_abi_sizes[which - 1] : -1;
}

int64_t tfh_abi_offset(int32_t which, int32_t field) {
  if (which < 1 || which > tfh_abi_nstructs || field < 1 || field > tfh_abi_nfields[which - 1])
    return -1;
  return tfh_abi_offsets[which - 1][field - 1];
}
