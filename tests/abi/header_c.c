/*
 * Compiled (not run) by the abi.header_* tests with -std=c99 -Wall -Wextra -pedantic -Werror:
 * the public header must be clean C99, its initializer macros must compile warning-free, and the
 * ABI rules of DESIGN.md (size field first, fixed-width fields) must hold for every struct.
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
#include <gtstorage/gtstorage.h>
#include <stddef.h>

/* C99 has no _Static_assert: a negative array size stops the compilation instead. */
#define STATIC_CHECK(name, cond) typedef char static_check_##name[(cond) ? 1 : -1]

/* Extensible structs begin with a 32-bit struct_size. */
STATIC_CHECK(array_size_first, offsetof(gtstorage_array, struct_size) == 0);
STATIC_CHECK(create_size_first, offsetof(gtstorage_create_options, struct_size) == 0);
STATIC_CHECK(wrap_size_first, offsetof(gtstorage_wrap_options, struct_size) == 0);
STATIC_CHECK(plan_size_first, offsetof(gtstorage_plan_info, struct_size) == 0);
STATIC_CHECK(preset_size_first, offsetof(gtstorage_preset_info, struct_size) == 0);
STATIC_CHECK(interface_size_first, offsetof(gtstorage_interface_info, struct_size) == 0);
STATIC_CHECK(stats_size_first, offsetof(gtstorage_stats, struct_size) == 0);
STATIC_CHECK(transfer_size_first, offsetof(gtstorage_transfer_stats, struct_size) == 0);
STATIC_CHECK(struct_size_is_u32, sizeof(((gtstorage_create_options*)0)->struct_size) == 4);
/* Handles are 64-bit integers, never pointers. */
STATIC_CHECK(handle_is_64bit, sizeof(gtstorage_handle) == 8);
/* Enums are passed as int32_t fields; an enum wider than int would change struct layouts. */
STATIC_CHECK(status_is_int, sizeof(gtstorage_status) == sizeof(int));

/* Every initializer macro, at file scope and in a function. */
static const gtstorage_create_options file_scope_create = GTSTORAGE_CREATE_OPTIONS_INIT;
static const gtstorage_wrap_options file_scope_wrap = GTSTORAGE_WRAP_OPTIONS_INIT;
static const gtstorage_array file_scope_array = GTSTORAGE_ARRAY_INIT;
static const gtstorage_preset_info file_scope_preset = GTSTORAGE_PRESET_INFO_INIT;
static const gtstorage_slice_spec file_scope_slice = GTSTORAGE_SLICE_ALL;

/* Taking the address checks each declaration as a prototype (no implicit int, no K&R). */
typedef int (*create_fn)(const gtstorage_create_options*, gtstorage_handle*);
typedef const char* (*error_fn)(void);
/* A parameter that takes an enum value is the enum in C and int32_t in C++ (GTSTORAGE_ENUM);
 * the pointer of the other type would not convert without a warning. */
#ifdef __cplusplus
typedef int32_t side_param;
#else
typedef gtstorage_side side_param;
#endif
typedef int (*data_fn)(gtstorage_handle, side_param, void**);

int header_c_check(void);
int header_c_check(void) {
  gtstorage_create_options create = GTSTORAGE_CREATE_OPTIONS_INIT;
  gtstorage_wrap_options wrap = GTSTORAGE_WRAP_OPTIONS_INIT;
  gtstorage_array array = GTSTORAGE_ARRAY_INIT;
  gtstorage_preset_info preset = GTSTORAGE_PRESET_INFO_INIT;
  gtstorage_slice_spec slices[2] = {GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL};
  create_fn create_ptr = gtstorage_create;
  error_fn error_ptr = gtstorage_last_error;
  data_fn data_ptr = gtstorage_data;
  gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
  return (int)(create.struct_size + wrap.struct_size + array.struct_size + preset.struct_size +
               (uint32_t)slices[1].kind + file_scope_create.ndim + file_scope_wrap.ndim +
               file_scope_array.ndim + file_scope_preset.reserved +
               (uint32_t)file_scope_slice.kind + (uint32_t)h) +
         (create_ptr != 0) + (error_ptr != 0) + (data_ptr != 0) + GTSTORAGE_VERSION_NUMBER +
         GTSTORAGE_MAX_NDIM + (GTSTORAGE_SLICE_NONE < 0);
}
