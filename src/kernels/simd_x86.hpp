// The x86 vector tables of simd_ops (simd_x86.cpp) and the target attributes their kernels are
// compiled with: one binary carries every level, and simd.cpp picks one at run time from cpuid.
#pragma once

#include <cstddef>

#include "kernels/kernels_internal.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GTS_X86_SIMD 1
#define GTS_TARGET_AVX2 __attribute__((target("avx2")))
#define GTS_TARGET_AVX512 __attribute__((target("avx512f,avx2")))
#else
#define GTS_X86_SIMD 0
#endif

namespace gts::kernels::detail {

/// The portable routines of simd.cpp: memcpy, a pattern fill with ordinary stores, no fence.
void stream_copy_generic(void* dst, const void* src, std::size_t bytes);
void pattern_fill_generic(void* dst, std::size_t bytes, const unsigned char* pat, bool nt);
void fence_generic();

#if GTS_X86_SIMD

extern const simd_ops sse2_ops;    ///< 1- and 2-byte transposes; the rest portable.
extern const simd_ops avx2_ops;    ///< AVX2 copies, fills and transposes.
extern const simd_ops avx512_ops;  ///< AVX-512 copies, fills and transposes.

#endif

}  // namespace gts::kernels::detail
