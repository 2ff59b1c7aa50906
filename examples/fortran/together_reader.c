/*
 * gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
/*
 * The C part of the three-language example (see together.py): a host-model routine that reads
 * a storage through its descriptor, gtstorage_interface(), with nothing but the byte strides and
 * halo widths it reports: element (i, j, k), counted like the Fortran pointer (interior from 1),
 * lies at data + sum((halo_lower[d] + index[d] - 1) * strides[d]).
 */
#include <gtstorage/gtstorage.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define TOGETHER_API __attribute__((visibility("default")))
#else
#define TOGETHER_API
#endif

/* Describes a 3-d float64 host storage into *info. */
static int describe(gtstorage_handle handle, gtstorage_interface_info* info) {
  memset(info, 0, sizeof *info);
  info->struct_size = sizeof *info;
  int status = gtstorage_interface(handle, GTSTORAGE_SIDE_HOST, info);
  if (status != GTSTORAGE_OK) return status;
  if (info->ndim != 3 || strcmp(info->typestr + 1, "f8") != 0)
    return GTSTORAGE_ERROR_INVALID_ARGUMENT;
  return GTSTORAGE_OK;
}

static const char* address_of(const gtstorage_interface_info* info, const int64_t index[3]) {
  const char* p = (const char*)info->data;
  for (int d = 0; d < 3; ++d) p += (info->halo[d][0] + index[d] - 1) * info->strides[d];
  return p;
}

/* Value at (i, j, k), interior from 1 (halo indices 1 - width … 0 and beyond the interior). */
TOGETHER_API int together_c_read(gtstorage_handle handle, int64_t i, int64_t j, int64_t k,
                                 double* out) {
  gtstorage_interface_info info;
  int status = describe(handle, &info);
  if (status != GTSTORAGE_OK) return status;
  const int64_t index[3] = {i, j, k};
  for (int d = 0; d < 3; ++d) {
    int64_t position = info.halo[d][0] + index[d] - 1;
    if (position < 0 || position >= info.shape[d]) return GTSTORAGE_ERROR_INVALID_ARGUMENT;
  }
  memcpy(out, address_of(&info, index), sizeof *out);
  return GTSTORAGE_OK;
}

/* Address C computes for (i, j, k), to compare with Fortran's and NumPy's. */
TOGETHER_API intptr_t together_c_address(gtstorage_handle handle, int64_t i, int64_t j, int64_t k) {
  gtstorage_interface_info info;
  if (describe(handle, &info) != GTSTORAGE_OK) return 0;
  const int64_t index[3] = {i, j, k};
  return (intptr_t)address_of(&info, index);
}

/* Sum and number of the interior elements. */
TOGETHER_API int together_c_sum_interior(gtstorage_handle handle, double* sum, int64_t* count) {
  gtstorage_interface_info info;
  int status = describe(handle, &info);
  if (status != GTSTORAGE_OK) return status;
  int64_t n[3];
  for (int d = 0; d < 3; ++d) n[d] = info.shape[d] - info.halo[d][0] - info.halo[d][1];
  double s = 0.0;
  for (int64_t i = 1; i <= n[0]; ++i)
    for (int64_t j = 1; j <= n[1]; ++j)
      for (int64_t k = 1; k <= n[2]; ++k) {
        const int64_t index[3] = {i, j, k};
        double v;
        memcpy(&v, address_of(&info, index), sizeof v);
        s += v;
      }
  *sum = s;
  *count = n[0] * n[1] * n[2];
  return GTSTORAGE_OK;
}
