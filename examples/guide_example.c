/*
 * guide_example.c: the worked example of docs/guide.md.
 *
 * Asks for the allocation plan of a field with an I-first, 64-byte aligned layout and a halo,
 * creates it, writes its interior, reads it through a halo-free view, and copies it into a
 * K-first field. The test suite runs this program and compares its output with the listing in
 * docs/guide.md, so the numbers quoted there are the numbers the library produces. The program
 * also checks every value itself and exits non-zero on any mismatch.
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
#include <gtstorage/gtstorage.h>
#include <inttypes.h>
#include <stdio.h>

#include "check.h" /* CHECK(call): returns 1 from main when a call fails */

static void print_vec(const char* name, const int64_t* v, uint32_t n) {
  uint32_t d;
  printf("%-16s(", name);
  for (d = 0; d < n; ++d) printf("%s%" PRId64, d ? ", " : "", v[d]);
  printf(")\n");
}

static void print_layout(const char* name, const int32_t* v, uint32_t n) {
  uint32_t d;
  printf("%-16s(", name);
  for (d = 0; d < n; ++d) printf("%s%" PRId32, d ? ", " : "", v[d]);
  printf(")\n");
}

/* [element address] */
/* Address of element (i, j, k): strides are in bytes, in the order of the dims (I, J, K). */
static double* at(const gtstorage_interface_info* d, int64_t i, int64_t j, int64_t k) {
  return (double*)((char*)d->data + i * d->strides[0] + j * d->strides[1] + k * d->strides[2]);
}
/* [element address] */

static double expected(int64_t i, int64_t j, int64_t k) {
  return 100.0 * (double)i + 10.0 * (double)j + (double)k;
}

int main(void) {
  int errors = 0;
  int64_t i, j, k;

  /* [options] */
  /* 10 x 8 x 4 points including a halo of 2 on both sides of I and J (interior 6 x 4 x 4). */
  const int64_t shape[3] = {10, 8, 4};
  const int64_t halo[6] = {2, 2, /* I */ 2, 2, /* J */ 0, 0 /* K */};
  gtstorage_create_options opts = GTSTORAGE_CREATE_OPTIONS_INIT;
  opts.ndim = 3;
  opts.shape = shape;
  opts.dtype = "<f8";
  opts.dims = "IJK";
  opts.preset = "gridtools:cpu_ifirst"; /* I fastest, then K, then J; 64-byte alignment */
  opts.halo = halo;                     /* aligned_index defaults to the lower halo (2, 2, 0) */
  /* [options] */

  /* [plan] */
  gtstorage_plan_info plan;
  plan.struct_size = sizeof plan;
  CHECK(gtstorage_plan(&opts, &plan));
  print_layout("layout map", plan.layout, plan.ndim);
  print_vec("padded shape", plan.padded_shape, plan.ndim);
  print_vec("strides (bytes)", plan.strides, plan.ndim);
  print_vec("aligned index", plan.aligned_index, plan.ndim);
  printf("%-16s%" PRId64 "\n", "alignment", plan.alignment_bytes);
  printf("%-16s%" PRId64 "\n", "byte offset", plan.byte_offset);
  printf("%-16s%" PRId64 "\n", "padded bytes", plan.padded_bytes);
  /* [plan] */

  /* [create] */
  gtstorage_handle field, domain;
  gtstorage_interface_info full, inner;
  opts.init = GTSTORAGE_INIT_ZEROS;
  CHECK(gtstorage_create(&opts, &field));
  full.struct_size = sizeof full;
  CHECK(gtstorage_interface(field, GTSTORAGE_SIDE_HOST, &full));

  /* The interior starts at the origin, which is the lower halo. */
  for (i = 0; i < 6; ++i)
    for (j = 0; j < 4; ++j)
      for (k = 0; k < 4; ++k)
        *at(&full, full.origin[0] + i, full.origin[1] + j, full.origin[2] + k) = expected(i, j, k);
  /* [create] */

  /* [domain view] */
  CHECK(gtstorage_domain_view(field, &domain));
  inner.struct_size = sizeof inner;
  CHECK(gtstorage_interface(domain, GTSTORAGE_SIDE_HOST, &inner));
  print_vec("domain shape", inner.shape, inner.ndim);
  print_vec("domain strides", inner.strides, inner.ndim);
  printf("domain data is %s64-byte aligned\n", ((uintptr_t)inner.data % 64u == 0) ? "" : "NOT ");
  printf("domain(3, 1, 2) = %g\n", *at(&inner, 3, 1, 2));
  /* [domain view] */

  if ((uintptr_t)inner.data % 64u != 0) ++errors;
  for (i = 0; i < inner.shape[0]; ++i)
    for (j = 0; j < inner.shape[1]; ++j)
      for (k = 0; k < inner.shape[2]; ++k)
        if (*at(&inner, i, j, k) != expected(i, j, k)) ++errors;
  if (*at(&full, 0, 0, 0) != 0.0 || *at(&full, 9, 7, 3) != 0.0) ++errors; /* halo untouched */

  /* [copy] */
  /* Same shape and halo, K-first layout: gtstorage_copy reorders the elements. */
  gtstorage_handle kfirst;
  gtstorage_interface_info kf;
  opts.preset = "gt:cpu_kfirst";
  CHECK(gtstorage_create(&opts, &kfirst));
  CHECK(gtstorage_copy(kfirst, field));
  kf.struct_size = sizeof kf;
  CHECK(gtstorage_interface(kfirst, GTSTORAGE_SIDE_HOST, &kf));
  print_layout("K-first layout", kf.layout, kf.ndim);
  print_vec("K-first strides", kf.strides, kf.ndim);
  printf("K-first(5, 3, 2) = %g\n", *at(&kf, 5, 3, 2)); /* interior (3, 1, 2) */
  /* [copy] */

  for (i = 0; i < 6; ++i)
    for (j = 0; j < 4; ++j)
      for (k = 0; k < 4; ++k)
        if (*at(&kf, i + 2, j + 2, k) != expected(i, j, k)) ++errors;

  CHECK(gtstorage_release(kfirst));
  CHECK(gtstorage_release(domain));
  CHECK(gtstorage_release(field));
  printf("%d mismatches\n", errors);
  return errors == 0 ? 0 : 1;
}
