/*
 * Compiled (not run) by the abi.header_cxx test with -std=c++11 -Wall -Wextra -pedantic -Werror:
 * the public header must be usable from C++ (extern "C", no C-only constructs) and its
 * initializer macros must be valid, warning-free C++ aggregate initializers.
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
#include <gtstorage/gtstorage.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

static_assert(std::is_standard_layout<gtstorage_create_options>::value, "C layout");
static_assert(std::is_standard_layout<gtstorage_interface_info>::value, "C layout");
static_assert(std::is_trivially_copyable<gtstorage_plan_info>::value, "plain data");
static_assert(offsetof(gtstorage_interface_info, struct_size) == 0, "size field first");
static_assert(std::is_same<gtstorage_handle, std::uint64_t>::value, "handles are uint64_t");

// C linkage: the declarations must bind to the unmangled gtstorage_* symbols.
extern "C" typedef int create_fn(const gtstorage_create_options*, gtstorage_handle*);
static_assert(std::is_same<decltype(gtstorage_create), create_fn>::value, "extern \"C\"");

int header_cxx_check();
int header_cxx_check() {
  gtstorage_create_options create = GTSTORAGE_CREATE_OPTIONS_INIT;
  gtstorage_wrap_options wrap = GTSTORAGE_WRAP_OPTIONS_INIT;
  gtstorage_array array = GTSTORAGE_ARRAY_INIT;
  gtstorage_preset_info preset = GTSTORAGE_PRESET_INFO_INIT;
  gtstorage_slice_spec slices[2] = {GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL};
  gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
  int (*query)(gtstorage_handle, int32_t, gtstorage_interface_info*) = &gtstorage_interface;
  return static_cast<int>(create.struct_size + wrap.struct_size + array.struct_size +
                          preset.struct_size + static_cast<std::uint32_t>(slices[0].kind) +
                          static_cast<std::uint32_t>(h)) +
         (query != nullptr) + GTSTORAGE_VERSION_NUMBER;
}
