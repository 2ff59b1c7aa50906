/*
 * What the parts of gtstorage-info share: the parsed command line, the exit codes, the error
 * reports (main.c) and the entry points of the plan (plan.c) and pool (pools.c) outputs.
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GTSTORAGE_INFO_H
#define GTSTORAGE_INFO_H

#include <gtstorage/gtstorage.h>
#include <stdint.h>

/* Exit codes: 0 success, 2 bad input (ours or rejected by the library), 1 anything else. */
enum { EXIT_BAD_INPUT = 2, EXIT_INTERNAL = 1 };

/* More values than any storage may have, so that an ndim above GTSTORAGE_MAX_NDIM still reaches
   the library, whose message names the limit, instead of being truncated here. */
#define MAX_VALUES 64

typedef struct options {
  int64_t shape[MAX_VALUES];
  int nshape;
  int64_t halo[2 * MAX_VALUES];
  int nhalo; /* number of dims given (each one a lower:upper pair), 0 = not given */
  int halo_scalar;
  int64_t aligned_index[MAX_VALUES];
  int naligned;
  int32_t layout[MAX_VALUES];
  int nlayout;
  int64_t alignment_bytes;
  int32_t pitch_padding; /* a gtstorage_pitch_padding value */
  const char* preset;
  const char* dims;
  const char* dtype;
  int all_presets;
  int list_presets;
  int json;
  int pool_stats;
  int64_t exercise; /* -1: not given */
} options;

/* The program's name in its messages. */
extern const char g_prog[];

/* Reports bad command-line input (found before the library is asked) and returns exit code 2. */
int usage_error(const char* fmt, ...);
/* Reports a status returned by the library with its thread-local message; returns the exit code. */
int library_error(const char* what, int status);

/* plan.c: a JSON string (quoted, escaped) on stdout. */
void json_string(const char* s);
/* plan.c: the plan of the field the options describe, as text or JSON (--json). */
int print_plan(const options* opt);
/* plan.c: --list-presets. */
int list_presets(int json);
/* plan.c: --all-presets, one row (or JSON object) per preset. */
int all_presets(const options* opt);
/* pools.c: --pool-stats [--exercise N]. */
int pool_stats(const options* opt);

#endif
