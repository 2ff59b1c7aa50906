/*
 * A minimal downstream program: it checks that the header and the library it was linked with
 * agree, then creates, fills, reads and releases one storage.
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
#include <gtstorage/gtstorage.h>
#include <stdio.h>

static int fail(const char* what, int status) {
  fprintf(stderr, "consumer: %s: %s: %s\n", what, gtstorage_status_name(status),
          gtstorage_last_error());
  return 1;
}

int main(void) {
  const int64_t shape[2] = {5, 7};
  gtstorage_create_options opts = GTSTORAGE_CREATE_OPTIONS_INIT;
  gtstorage_interface_info info;
  gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
  const double* row;
  int status;

  /* A library older than the header this program was compiled with may lack functions. */
  if (gtstorage_version() < (uint32_t)GTSTORAGE_VERSION_NUMBER) {
    fprintf(stderr, "consumer: header %d but library %u\n", GTSTORAGE_VERSION_NUMBER,
            (unsigned)gtstorage_version());
    return 1;
  }
  opts.ndim = 2;
  opts.shape = shape;
  opts.dtype = "<f8";
  opts.dims = "IJ";
  opts.init = GTSTORAGE_INIT_ZEROS;
  if ((status = gtstorage_create(&opts, &h)) != GTSTORAGE_OK) return fail("create", status);
  if ((status = gtstorage_fill_double(h, 2.5)) != GTSTORAGE_OK) return fail("fill", status);
  info.struct_size = sizeof info;
  if ((status = gtstorage_interface(h, GTSTORAGE_SIDE_HOST, &info)) != GTSTORAGE_OK)
    return fail("interface", status);
  row = (const double*)((const char*)info.data + 4 * info.strides[0]);
  if (info.ndim != 2 || info.shape[0] != 5 || info.shape[1] != 7 || row[6] != 2.5) {
    fprintf(stderr, "consumer: unexpected descriptor or value %g\n", row[6]);
    return 1;
  }
  if ((status = gtstorage_release(h)) != GTSTORAGE_OK) return fail("release", status);
  /* A second release must be refused, not crash. */
  if (gtstorage_release(h) != GTSTORAGE_ERROR_INVALID_HANDLE) {
    fprintf(stderr, "consumer: double release was not detected\n");
    return 1;
  }
  printf("consumer OK: gtstorage %s\n", gtstorage_version_string());
  return 0;
}
