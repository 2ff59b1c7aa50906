// The simd_ops table in use: the best the CPU supports (cpuid), capped by GTSTORAGE_SIMD; the
// portable table (memcpy, pattern fill, no transposes); and the size from which copies and
// fills stream their stores. The x86 kernels are in simd_x86.cpp.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "kernels/kernels_internal.hpp"
#include "kernels/simd_x86.hpp"

namespace gts::kernels::detail {

// The portable routines (also the SSE2 table's copy, fill and fence).
void stream_copy_generic(void* dst, const void* src, std::size_t bytes) {
  std::memcpy(dst, src, bytes);
}

void pattern_fill_generic(void* dst, std::size_t bytes, const unsigned char* pat, bool /*nt*/) {
  auto* p = static_cast<unsigned char*>(dst);
  const std::size_t mis = reinterpret_cast<uintptr_t>(p) % 64;
  std::size_t head = std::min(bytes, (64 - mis) % 64);
  for (std::size_t i = 0; i < head; ++i) p[i] = pat[(mis + i) % 64];
  p += head;
  bytes -= head;
  for (; bytes >= 64; bytes -= 64, p += 64) std::memcpy(p, pat, 64);
  std::memcpy(p, pat, bytes);
}

void fence_generic() {}

namespace {

// No portable transposes: the kernels' generic tile path (host_kernels.cpp) covers them.
const simd_ops generic_ops{
    "generic", &stream_copy_generic, &pattern_fill_generic, nullptr, nullptr, nullptr,
    nullptr,   &fence_generic};

simd_level best_level() {
#if GTS_X86_SIMD
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2")) {
    return simd_level::avx512;
  }
  if (__builtin_cpu_supports("avx2")) return simd_level::avx2;
  return simd_level::sse2;  // part of x86-64
#endif
  return simd_level::generic;
}

const simd_ops* table_of(simd_level level) {
  switch (level) {
#if GTS_X86_SIMD
    case simd_level::avx512:
      return &avx512_ops;
    case simd_level::avx2:
      return &avx2_ops;
#endif
#if GTS_X86_SIMD
    case simd_level::sse2:
      return &sse2_ops;
#endif
    case simd_level::generic:
      return &generic_ops;
    default:
      return nullptr;
  }
}

const simd_ops* detect() {
  simd_level level = best_level();
  // GTSTORAGE_SIMD caps the level (for testing the fallbacks, or to avoid AVX-512 clocks).
  if (const char* env = std::getenv("GTSTORAGE_SIMD")) {
    const std::string v(env);
    simd_level cap = level;
    if (v == "generic" || v == "none") cap = simd_level::generic;
    if (v == "sse2") cap = simd_level::sse2;
    if (v == "avx2") cap = simd_level::avx2;
    if (static_cast<int>(cap) < static_cast<int>(level)) level = cap;
  }
  return table_of(level);
}

std::atomic<const simd_ops*> current_ops{nullptr};

// Size in bytes of the last-level cache that cpu0 uses, from sysfs ("32768K"); 0 if unknown.
int64_t sysfs_llc_bytes() {
  int64_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    int level = 0;
    char size_text[32] = {0};
    if (FILE* f = std::fopen((dir + "level").c_str(), "r")) {
      if (std::fscanf(f, "%d", &level) != 1) level = 0;
      std::fclose(f);
    }
    if (FILE* f = std::fopen((dir + "size").c_str(), "r")) {
      if (std::fscanf(f, "%31s", size_text) != 1) size_text[0] = '\0';
      std::fclose(f);
    }
    char* end = nullptr;
    const long long v = std::strtoll(size_text, &end, 10);
    if (level <= 0 || v <= 0 || end == size_text) continue;
    int64_t bytes = v;
    if (*end == 'K') bytes = v << 10;
    if (*end == 'M') bytes = v << 20;
    if (level > best_level) {
      best_level = level;
      best = bytes;
    }
  }
  return best;
}

int64_t default_streaming_threshold() {
  // Half the last-level cache: below it a copy's result is likely still cached when it is used,
  // above it ordinary stores only add read-for-ownership traffic. sysfs describes the cache this
  // core shares; sysconf may report the whole package (320 MiB on the 2-core EPYC VM, where the
  // core's L3 is 32 MiB), so its value is capped.
  int64_t llc = sysfs_llc_bytes();
  if (llc <= 0) {
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    llc = l3 > 0 ? l3 : l2;
    if (llc <= 0) llc = int64_t(32) << 20;
    llc = std::min<int64_t>(llc, int64_t(64) << 20);
  }
  return std::max<int64_t>(int64_t(1) << 20, llc / 2);
}

std::atomic<int64_t> streaming_override{-1};

}  // namespace

const simd_ops& simd() {
  const simd_ops* ops = current_ops.load(std::memory_order_acquire);
  if (ops == nullptr) {
    ops = detect();
    current_ops.store(ops, std::memory_order_release);
  }
  return *ops;
}

const simd_ops* simd_for(simd_level level) {
  if (static_cast<int>(level) > static_cast<int>(best_level())) return nullptr;
  return table_of(level);
}

bool set_simd_level(simd_level level) {
  const simd_ops* ops = simd_for(level);
  if (ops == nullptr) return false;
  current_ops.store(ops, std::memory_order_release);
  return true;
}

int64_t streaming_threshold() {
  const int64_t o = streaming_override.load(std::memory_order_relaxed);
  if (o >= 0) return o;
  static const int64_t value = default_streaming_threshold();
  return value;
}

void set_streaming_threshold(int64_t bytes) {
  streaming_override.store(bytes < 0 ? -1 : bytes, std::memory_order_relaxed);
}

}  // namespace gts::kernels::detail
