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

/* Reads the element at idx as (re, im); im is 0 except for complex dtypes. */
int tfh_read(gtstorage_handle h, const int64_t* idx, double* re, double* im) {
  gtstorage_interface_info info;
  int status;
  char* p = element(h, idx, &info, &status);
  if (!p) return status;
  *im = 0.0;
  if (kind_is(&info, 'f', 4)) {
    float v;
    memcpy(&v, p, 4);
    *re = v;
  } else if (kind_is(&info, 'f', 8)) {
    double v;
    memcpy(&v, p, 8);
    *re = v;
  } else if (kind_is(&info, 'i', 1)) {
    int8_t v;
    memcpy(&v, p, 1);
    *re = v;
  } else if (kind_is(&info, 'i', 2)) {
    int16_t v;
    memcpy(&v, p, 2);
    *re = v;
  } else if (kind_is(&info, 'i', 4)) {
    int32_t v;
    memcpy(&v, p, 4);
    *re = v;
  } else if (kind_is(&info, 'i', 8)) {
    int64_t v;
    memcpy(&v, p, 8);
    *re = (double)v;
  } else if (kind_is(&info, 'b', 1)) {
    unsigned char v;
    memcpy(&v, p, 1);
    *re = v ? 1.0 : 0.0;
  } else if (kind_is(&info, 'c', 8)) {
    float v[2];
    memcpy(v, p, 8);
    *re = v[0];
    *im = v[1];
  } else if (kind_is(&info, 'c', 16)) {
    double v[2];
    memcpy(v, p, 16);
    *re = v[0];
    *im = v[1];
  } else
    return GTSTORAGE_ERROR_UNSUPPORTED;
  return GTSTORAGE_OK;
}

/* Writes (re, im) converted to the storage's dtype at idx. */
int tfh_write(gtstorage_handle h, const int64_t* idx, double re, double im) {
  gtstorage_interface_info info;
  int status;
  char* p = element(h, idx, &info, &status);
  if (!p) return status;
  if (kind_is(&info, 'f', 4)) {
    float v = (float)re;
    memcpy(p, &v, 4);
  } else if (kind_is(&info, 'f', 8)) {
    memcpy(p, &re, 8);
  } else if (kind_is(&info, 'i', 1)) {
    int8_t v = (int8_t)re;
    memcpy(p, &v, 1);
  } else if (kind_is(&info, 'i', 2)) {
    int16_t v = (int16_t)re;
    memcpy(p, &v, 2);
  } else if (kind_is(&info, 'i', 4)) {
    int32_t v = (int32_t)re;
    memcpy(p, &v, 4);
  } else if (kind_is(&info, 'i', 8)) {
    int64_t v = (int64_t)re;
    memcpy(p, &v, 8);
  } else if (kind_is(&info, 'b', 1)) {
    _Bool v = re != 0.0;
    memcpy(p, &v, 1);
  } else if (kind_is(&info, 'c', 8)) {
    float v[2] = {(float)re, (float)im};
    memcpy(p, v, 8);
  } else if (kind_is(&info, 'c', 16)) {
    double v[2] = {re, im};
    memcpy(p, v, 16);
  } else
    return GTSTORAGE_ERROR_UNSUPPORTED;
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
