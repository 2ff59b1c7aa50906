/*
 * Compiled (not run) by the abi.header_cxx test with -std=c++11 -Wall -Wextra -pedantic -Werror:
 * the public header must be usable from C++ (extern "C", no C-only constructs). Its initializer
 * macros are compiled as C++ by abi.header_c_as_cxx11 (header_c.c).
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

// A parameter that takes an enum value stays int32_t in C++ (GTSTORAGE_ENUM): C++ converts no
// integer to an enum implicitly, so callers that pass an integer keep compiling.
extern "C" typedef int interface_fn(gtstorage_handle, std::int32_t, gtstorage_interface_info*);
static_assert(std::is_same<decltype(gtstorage_interface), interface_fn>::value, "int32_t side");

int header_cxx_check(std::int32_t side);
int header_cxx_check(std::int32_t side) {
  gtstorage_interface_info info = GTSTORAGE_INTERFACE_INFO_INIT;
  return gtstorage_interface(GTSTORAGE_NULL_HANDLE, side, &info) + GTSTORAGE_VERSION_NUMBER;
}
