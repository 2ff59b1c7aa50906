/*
 * basic.c: the smallest complete use of gtstorage from C.
 *
 * Creates a gt:cpu_kfirst field (K contiguous, the layout GridTools' CPU backend wants) with a
 * two-point halo in I and J, fills its interior through the buffer descriptor, reads it back
 * through a halo-free view, and prints what it sees. Build: see examples/CMakeLists.txt, or
 *   cc basic.c $(pkg-config --cflags --libs gtstorage)
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
#include <gtstorage/gtstorage.h>
#include <inttypes.h>
#include <stdio.h>

#include "check.h" /* CHECK(call): returns 1 from main when a call fails */

/* Address of element (i, j, k) of a 3-d descriptor: strides are in bytes. */
static double* at(const gtstorage_interface_info* d, int64_t i, int64_t j, int64_t k) {
  return (double*)((char*)d->data + i * d->strides[0] + j * d->strides[1] + k * d->strides[2]);
}

static void print_vec(const char* name, const int64_t* v, uint32_t n) {
  uint32_t d;
  printf("%-14s(", name);
  for (d = 0; d < n; ++d) printf("%s%" PRId64, d ? ", " : "", v[d]);
  printf(")\n");
}

int main(void) {
  /* 6 x 5 interior points in I and J plus a halo of 2 on each side; 4 levels in K, no halo. */
  const int64_t shape[3] = {10, 9, 4};
  const int64_t halo[6] = {2, 2, 2, 2, 0, 0};
  gtstorage_create_options opts = GTSTORAGE_CREATE_OPTIONS_INIT;
  gtstorage_interface_info full, inner;
  gtstorage_handle field = GTSTORAGE_NULL_HANDLE, domain = GTSTORAGE_NULL_HANDLE;
  gtstorage_stats stats;
  int64_t i, j, k, errors = 0;
  double sum = 0.0;

  printf("gtstorage %s\n", gtstorage_version_string());

  opts.ndim = 3;
  opts.shape = shape;
  opts.dtype = "<f8";
  opts.dims = "IJK";
  opts.preset = "gt:cpu_kfirst";
  opts.halo = halo;
  opts.init = GTSTORAGE_INIT_ZEROS; /* halo points stay 0 below */
  CHECK(gtstorage_create(&opts, &field));

  /* The descriptor of the whole field, halo included. */
  full.struct_size = sizeof full;
  CHECK(gtstorage_interface(field, GTSTORAGE_SIDE_HOST, &full));
  printf("field         %s %s, dims %s%s%s\n", opts.preset, full.typestr, full.dims[0],
         full.dims[1], full.dims[2]);
  print_vec("shape", full.shape, full.ndim);
  print_vec("strides (B)", full.strides, full.ndim);
  print_vec("origin", full.origin, full.ndim);

  /* Fill the interior: the origin (= lower halo) is where the interior starts. */
  for (i = 0; i < full.shape[0] - halo[0] - halo[1]; ++i)
    for (j = 0; j < full.shape[1] - halo[2] - halo[3]; ++j)
      for (k = 0; k < full.shape[2] - halo[4] - halo[5]; ++k)
        *at(&full, full.origin[0] + i, full.origin[1] + j, full.origin[2] + k) =
            100.0 * (double)i + 10.0 * (double)j + (double)k;

  /* A view without the halo: same memory, shape of the interior, origin 0. */
  CHECK(gtstorage_domain_view(field, &domain));
  inner.struct_size = sizeof inner;
  CHECK(gtstorage_interface(domain, GTSTORAGE_SIDE_HOST, &inner));
  print_vec("domain shape", inner.shape, inner.ndim);
  print_vec("domain origin", inner.origin, inner.ndim);

  for (i = 0; i < inner.shape[0]; ++i)
    for (j = 0; j < inner.shape[1]; ++j)
      for (k = 0; k < inner.shape[2]; ++k) {
        double v = *at(&inner, i, j, k);
        sum += v;
        if (v != 100.0 * (double)i + 10.0 * (double)j + (double)k) ++errors;
      }
  printf("domain[1][2][3] = %g (expected 123)\n", *at(&inner, 1, 2, 3));
  printf("halo corner     = %g (expected 0)\n", *at(&full, 0, 0, 0));
  printf("interior sum    = %g over %" PRId64 " points, %" PRId64 " wrong\n", sum,
         inner.shape[0] * inner.shape[1] * inner.shape[2], errors);

  CHECK(gtstorage_release(domain));
  CHECK(gtstorage_release(field));

  /* Nothing is left behind once every handle is released. */
  stats.struct_size = sizeof stats;
  CHECK(gtstorage_get_stats(&stats));
  printf("live handles after release: %" PRId64 "\n", stats.live_handles);
  return errors == 0 && stats.live_handles == 0 ? 0 : 1;
}
