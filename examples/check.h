/*
 * check.h: the error handling of the C examples (basic.c, guide_example.c).
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GTSTORAGE_EXAMPLES_CHECK_H
#define GTSTORAGE_EXAMPLES_CHECK_H

#include <gtstorage/gtstorage.h>
#include <stdio.h>

/* Every call returns a status; on failure the library's thread-local message says why, and
 * the example's main returns 1. */
#define CHECK(call)                                                                 \
  do {                                                                              \
    int status_ = (call);                                                           \
    if (status_ != GTSTORAGE_OK) {                                                  \
      fprintf(stderr, "%s failed: %s: %s\n", #call, gtstorage_status_name(status_), \
              gtstorage_last_error());                                              \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

#endif
