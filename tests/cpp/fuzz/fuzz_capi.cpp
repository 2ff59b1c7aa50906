// libFuzzer target over the C ABI (gtstorage.h), on the host and the emulated device.
//
// Each input is a little program. Its first byte sets the simulated runtime (bit 0: queued work
// runs at once instead of when waited for; the rest seeds the order of kernel threads); then
// each operation is [number][length][length bytes of arguments]: the number modulo the number
// of operations says which, and its arguments are read from its own bytes (zeros once they run
// out: zero bytes choose the ordinary case of every argument), so that a mutation of one
// operation's arguments does not shift the operations after it. The operations act on a few live
// handles: create (presets, dtypes, halos, layouts, alignments, pitch padding, pinned host
// memory, mirror / device-only / unified storages, pools on and off, every init), wrap of memory
// the target owns (host memory, and memory of the simulated runtime: device, managed, pinned)
// and of the sides of live storages, views, copies (sync and asynchronous, on streams 0/1/2 and
// on streams the target made, live or destroyed), syncs, fills, pools, DLPack import (legacy and
// versioned tensors the target builds, and gtstorage's own exports) and export, releases,
// queries, the current device, and failures injected into the simulated runtime.
//
// What is checked (a violation aborts: a finding):
// - every call returns GTSTORAGE_OK with an empty gtstorage_last_error(), or a documented
//   error status (never INTERNAL, never an unknown value) with a non-empty message;
// - values read back (gtstorage_copy_to_array) equal a shadow model where it is cheap: after a
//   create with ZEROS/ONES/VALUE/COPY, a fill, a copy from a caller array or from a storage whose
//   values are known, a wrap of memory the target wrote (views of a constant field inherit it);
// - memory wrapped or imported read-only is never written, and no byte between the elements of
//   wrapped or imported memory (padding, gaps, slack) is; strides that make elements overlap are
//   refused;
// - each release callback and DLPack deleter runs exactly once, after the last reference;
// - a released handle is INVALID_HANDLE; refcounts and live-handle counts agree with the
//   references the target holds; descriptors agree with the storage;
// - after the input everything is released and the devices are idle: no live handles, buffers,
//   host or device bytes, nothing in use or kept by the pools (after a trim), no runtime
//   allocation left, no memcheck report of the simulated runtime;
// - and what ASan, UBSan and LeakSanitizer report.
//
// GTSTORAGE_FUZZ_TRACE=1 prints every call and its status (to turn a crash file into a
// readable reproducer). Known open bugs are kept out or not checked by the switches below.
#include <dlpack/dlpack.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device/device_backend.hpp"
#include "emulated/control.hpp"
#include "emulated/cuda_api.hpp"
#define GTSTORAGE_NO_DEPRECATION_WARNINGS  // the deprecated sync spellings are driven too
#include "gtstorage/gtstorage_experimental.h"

namespace sim = gts::emulated;
namespace ctl = gts::emulated::control;

// The sanitizers' settings, whoever runs the target (tools/fuzz.sh, the CTest replay, by hand);
// ASAN_OPTIONS / UBSAN_OPTIONS given in the environment come on top.
// - allow_user_segv_handler=1: the simulated runtime installs its own SIGSEGV/SIGBUS handler
//   (src/emulated/runtime.cpp) to say which allocation a fault hit (a guard page, freed device
//   memory); it then restores the previous handler, ASan's, which reports the fault as usual.
//   ASan lets a program install such a handler only with this option (1 is clang 14's default;
//   set here so that a different default cannot silently drop one of the two reports).
//   handle_segv stays 1: ASan's handler is the one that produces the report and the stack.
// - allocator_may_return_null=1: requests whose sizes overflow or are absurd must become
//   GTSTORAGE_ERROR_OUT_OF_MEMORY, not an ASan abort.
extern "C" const char* __asan_default_options() {
  return "allow_user_segv_handler=1:handle_segv=1:allocator_may_return_null=1:detect_leaks=1:"
         "check_initialization_order=1:strict_init_order=1";
}
extern "C" const char* __ubsan_default_options() {
  return "print_stacktrace=1:halt_on_error=1";
}

namespace {

// ---- Findings of issue 23: sequences and checks that were off while the bugs were open -------
// All fixed, so all on. Each keeps an environment variable that turns the sequence or check off
// (0) or on (1) without a rebuild, to bisect a regression.
//
// F6: an asynchronous gtstorage_copy_sides left work queued that the release of the destination
// (or a pooled reuse of its block) did not wait for; the copy then wrote freed memory. While
// avoid_f6 is on, the target waits for every device right after each asynchronous copy_sides.
bool avoid_f6 = false;  // GTSTORAGE_FUZZ_AVOID_F6
// F1: an empty wrap or DLPack import with data = NULL reported data = NULL in its descriptor,
// although the header says data is never NULL. On: the descriptors' data must not be NULL.
bool check_f1 = true;  // GTSTORAGE_FUZZ_CHECK_F1
// F3: a DLPack tensor over emulated-device memory whose extent is larger than its allocation was
// accepted (and a fill then wrote out of bounds). On: the target also builds such tensors and
// requires their refusal.
bool check_f3 = true;  // GTSTORAGE_FUZZ_CHECK_F3
// F8: gtstorage_set_stream accepted a destroyed stream on the emulated device. On: the target
// also sets destroyed streams and requires their refusal.
bool check_f8 = true;  // GTSTORAGE_FUZZ_CHECK_F8

bool trace = false;

void env_switch(const char* name, bool& value) {
  const char* v = std::getenv(name);
  if (v != nullptr && v[0] != '\0') value = v[0] != '0';
}

[[noreturn]] __attribute__((format(printf, 1, 2))) void finding(const char* fmt, ...) {
  std::fflush(stdout);
  std::fprintf(stderr, "\n==== fuzz_capi FINDING: ");
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "\n(run the input again with GTSTORAGE_FUZZ_TRACE=1 to see every call)\n");
  std::abort();
}

__attribute__((format(printf, 1, 2))) void tracef(const char* fmt, ...) {
  if (!trace) return;
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
}

// ---- The input --------------------------------------------------------------------------------

class reader {
 public:
  reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ == end_; }
  uint8_t u8() { return p_ == end_ ? 0 : *p_++; }
  uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
  uint32_t u32() { return u16() | (static_cast<uint32_t>(u16()) << 16); }
  int pick(int n) { return u8() % n; }
  bool flag() { return (u8() & 1) != 0; }
  /// True about once in @p n (a zero byte, as an input that ran out reads, says false).
  bool rarely(int n) { return pick(n) == n - 1; }
  /// The next @p n bytes (or what is left) as an input of their own.
  reader take(size_t n) {
    const size_t k = std::min(n, static_cast<size_t>(end_ - p_));
    reader sub(p_, k);
    p_ += k;
    return sub;
  }
  template <class T, size_t N>
  const T& choose(const T (&table)[N]) {
    return table[u8() % N];
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// ---- Dtypes and values ------------------------------------------------------------------------

struct dtype_info {
  const char* str;
  char kind;  // 'f', 'i', 'u', 'b', 'c'
  int size;
  uint8_t dl_code;
};

const dtype_info dtypes[] = {
    {"<f8", 'f', 8, kDLFloat},   {"<f4", 'f', 4, kDLFloat},     {"<f2", 'f', 2, kDLFloat},
    {"|i1", 'i', 1, kDLInt},     {"<i2", 'i', 2, kDLInt},       {"<i4", 'i', 4, kDLInt},
    {"<i8", 'i', 8, kDLInt},     {"|u1", 'u', 1, kDLUInt},      {"<u2", 'u', 2, kDLUInt},
    {"<u4", 'u', 4, kDLUInt},    {"<u8", 'u', 8, kDLUInt},      {"|b1", 'b', 1, kDLBool},
    {"<c8", 'c', 8, kDLComplex}, {"<c16", 'c', 16, kDLComplex}, {"=f8", 'f', 8, kDLFloat},
    {"|f4", 'f', 4, kDLFloat},   {"=i4", 'i', 4, kDLInt},
};
// Typestrs the header refuses (a big-endian one, unknown kinds and sizes, malformed).
const char* const bad_dtypes[] = {">f8", "<f3", "", "f8", "<x4", "<f8 ", "|b2", "<c4", "<i16"};

const dtype_info& f8_info() {
  return dtypes[0];
}

// A dtype for a create or wrap: one of the table (or NULL = "<f8"), rarely a bad typestr. @p bad
// is set when the typestr is refused by the library.
const char* pick_dtype(reader& r, const dtype_info** info, bool* bad) {
  *bad = false;
  const int k = r.pick(24);
  if (k < 17) {
    *info = &dtypes[k];
    return dtypes[k].str;
  }
  if (k < 22) {
    *info = &f8_info();
    return nullptr;
  }
  *bad = true;
  *info = &f8_info();
  return r.choose(bad_dtypes);
}

// IEEE half of a small non-negative integer (exact up to 2048).
uint16_t half_of(int v) {
  if (v == 0) return 0;
  int e = 0;
  while ((v >> (e + 1)) != 0) ++e;
  const int mantissa = (v << (10 - e)) & 0x3ff;
  return static_cast<uint16_t>(((e + 15) << 10) | mantissa);
}

// Writes the small integer @p v (0 … 96) as one element of @p t at @p dst (any alignment).
void store_value(const dtype_info& t, void* dst, int v) {
  unsigned char b[16] = {};
  switch (t.kind) {
    case 'f':
      if (t.size == 8) {
        const double x = v;
        std::memcpy(b, &x, 8);
      } else if (t.size == 4) {
        const float x = static_cast<float>(v);
        std::memcpy(b, &x, 4);
      } else {
        const uint16_t x = half_of(v);
        std::memcpy(b, &x, 2);
      }
      break;
    case 'i':
    case 'u': {
      const int64_t x = v;
      std::memcpy(b, &x, 8);  // little-endian: the low bytes are the value
      break;
    }
    case 'b':
      b[0] = v != 0 ? 1 : 0;
      break;
    case 'c':
      if (t.size == 8) {
        const float x = static_cast<float>(v);
        std::memcpy(b, &x, 4);
      } else {
        const double x = v;
        std::memcpy(b, &x, 8);
      }
      break;
    default:
      break;
  }
  std::memcpy(dst, b, static_cast<size_t>(t.size));
}

// ---- The shadow model: what a handle's elements hold, where that is known --------------------

struct expectation {
  enum kind_t { none, constant, pattern } kind = none;
  int value = 0;        // constant: the value (0 … 96)
  int seed = 0;         // pattern: element i (C order) holds (seed * 31 + i * 7) % 97
  bool booled = false;  // the values went through a |b1 (nonzero became 1)

  static expectation of_constant(int v, bool booled) {
    expectation e;
    e.kind = constant;
    e.value = v;
    e.booled = booled;
    return e;
  }
  static expectation of_pattern(int seed, bool booled) {
    expectation e;
    e.kind = pattern;
    e.seed = seed;
    e.booled = booled;
    return e;
  }
  int at(int64_t i) const {
    int v = kind == constant ? value : static_cast<int>((seed * 31 + i * 7) % 97);
    if (booled) v = v != 0 ? 1 : 0;
    return v;
  }
  /// The same values stored into a storage of element kind @p dst_kind.
  expectation into(char dst_kind) const {
    expectation e = *this;
    if (dst_kind == 'b') e.booled = true;
    return e;
  }
};

int pattern_value(int seed, int64_t i, const dtype_info& t) {
  const int v = static_cast<int>((seed * 31 + i * 7) % 97);
  return t.kind == 'b' ? (v != 0 ? 1 : 0) : v;
}

// ---- Strided layouts over memory the target owns ----------------------------------------------

constexpr int max_ndim = GTSTORAGE_MAX_NDIM;

// A strided array the target builds (for a wrap, a DLPack tensor, a caller array): shape,
// strides in bytes, and the byte span of its elements relative to element 0, [lo, hi). Strides
// may be anything the input says (negative, zero, overlapping, not multiples of the item size):
// the buffer is sized to the span, so a library that wrongly accepts them still stays inside it.
struct layout {
  int ndim = 0;
  int64_t shape[max_ndim] = {};
  int64_t strides[max_ndim] = {};  // bytes
  bool null_strides = false;       // describe as C-contiguous (strides pointer NULL)
  int itemsize = 8;
  int64_t lo = 0, hi = 0;
  int64_t elements = 1;
  bool contiguous = false;  // C-contiguous strides: no overlap, nothing to enumerate
  bool overlap = false;     // two elements share bytes
  bool multiples = true;    // every stride of an extent > 1 is a multiple of the item size
  bool valid() const { return elements == 0 || (multiples && !overlap); }
};

const int64_t small_extents[] = {0, 1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 8, 16, 33};

// Extents of a small array (at most 4 dimensions; one dimension may be long).
void pick_shape(reader& r, int ndim, int64_t* shape) {
  for (int d = 0; d < ndim; ++d) shape[d] = r.choose(small_extents);
  if (ndim == 1 && r.rarely(24)) shape[0] = 270000;  // over 2 MiB of <f8: the mapped host path
}

// Products and sums that wrap instead of overflowing: the shape of a storage without elements
// may have huge extents next to its 0 ((0, 2^62) is a valid empty storage), and whatever the
// strides of such an array come to, nothing is ever read through them.
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// Elements of a shape (0 if an extent is 0; INT64_MAX if the product does not fit).
int64_t element_count(int ndim, const int64_t* shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 0) return 0;
  }
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] < 0 || __builtin_mul_overflow(n, shape[d], &n)) return INT64_MAX;
  }
  return n;
}

void finish_layout(layout& l) {
  l.elements = element_count(l.ndim, l.shape);
  l.lo = 0;
  l.hi = l.itemsize;
  l.multiples = true;
  l.overlap = false;
  if (l.elements == 0) return;  // nothing to place: any strides will do
  for (int d = 0; d < l.ndim; ++d) {
    if (l.shape[d] > 1 && l.strides[d] % l.itemsize != 0) l.multiples = false;
    if (l.shape[d] == 0) continue;
    const int64_t reach = wrap_mul(l.strides[d], l.shape[d] - 1);
    int64_t& end = reach < 0 ? l.lo : l.hi;
    end = wrap_add(end, reach);
  }
  if (l.elements > 1 && l.elements <= (int64_t(1) << 20) && !l.contiguous) {
    std::vector<int64_t> offsets;
    offsets.reserve(static_cast<size_t>(l.elements));
    int64_t idx[max_ndim] = {};
    for (int64_t i = 0; i < l.elements; ++i) {
      int64_t off = 0;
      for (int d = 0; d < l.ndim; ++d) off += idx[d] * l.strides[d];
      offsets.push_back(off);
      for (int d = l.ndim - 1; d >= 0; --d) {
        if (++idx[d] < l.shape[d]) break;
        idx[d] = 0;
      }
    }
    std::sort(offsets.begin(), offsets.end());
    for (size_t i = 1; i < offsets.size(); ++i) {
      if (offsets[i] - offsets[i - 1] < l.itemsize) l.overlap = true;
    }
  }
}

// C-contiguous strides of @p l's shape (extents 0 counted as 1).
void c_strides(layout& l) {
  int64_t s = l.itemsize;
  for (int d = l.ndim - 1; d >= 0; --d) {
    l.strides[d] = s;
    s = wrap_mul(s, std::max<int64_t>(l.shape[d], 1));
  }
}

// Strides for @p l's shape: C-contiguous (maybe described by NULL), a permuted order with
// padding and reversed dimensions, or raw values from the input.
void pick_strides(reader& r, layout& l, bool allow_null) {
  // Large arrays keep C order (their overlap check would enumerate every element).
  const bool large = element_count(l.ndim, l.shape) > 100000;
  const int mode = large ? 0 : r.pick(8);
  l.null_strides = false;
  l.contiguous = false;
  if (mode <= 2) {
    c_strides(l);
    l.null_strides = allow_null && mode == 0;
    l.contiguous = true;
  } else if (mode <= 5) {
    int order[max_ndim];
    for (int d = 0; d < l.ndim; ++d) order[d] = d;
    for (int d = l.ndim - 1; d > 0; --d) std::swap(order[d], order[r.pick(d + 1)]);
    int64_t s = l.itemsize;
    for (int k = l.ndim - 1; k >= 0; --k) {
      const int d = order[k];
      l.strides[d] = r.flag() ? -s : s;
      s = wrap_add(wrap_mul(s, std::max<int64_t>(l.shape[d], 1)), l.itemsize * r.pick(3));
    }
  } else {
    for (int d = 0; d < l.ndim; ++d) {
      const int v = static_cast<int8_t>(r.u8()) % 24;
      l.strides[d] = r.rarely(4) ? v : static_cast<int64_t>(v) * l.itemsize;
    }
  }
  finish_layout(l);
}

// Memory the target owns and lends to the library (wrap, DLPack, caller arrays).
enum class mem_kind { host, device, managed, pinned };

const char* mem_name(mem_kind k) {
  static const char* const names[] = {"host", "device", "managed", "pinned"};
  return names[static_cast<int>(k)];
}

struct region {
  mem_kind kind = mem_kind::host;
  int device = 0;
  std::byte* base = nullptr;
  size_t bytes = 0;
  std::vector<unsigned char> image;  // the contents when it was lent
  std::vector<unsigned char> mask;   // 1 where an element lies
  bool readonly = false;             // no byte may change
  bool check_gaps = false;           // no byte outside the elements may change
};

int current_sim_device() {
  int d = 0;
  if (sim::cudaGetDevice(&d) != sim::cudaSuccess) d = 0;
  return d;
}

// Allocates @p bytes of @p kind (on @p device for the runtime's memory); false if the simulated
// runtime refused (an injected failure).
bool allocate(region& g, mem_kind kind, int device, size_t bytes) {
  g.kind = kind;
  g.device = device;
  g.bytes = std::max<size_t>(bytes, 1);
  void* p = nullptr;
  if (kind == mem_kind::host) {
    g.base = new std::byte[g.bytes];
    return true;
  }
  const int cur = current_sim_device();
  sim::cudaSetDevice(device);
  sim::cudaError_t e = sim::cudaSuccess;
  if (kind == mem_kind::device) {
    e = sim::cudaMalloc(&p, g.bytes);
  } else if (kind == mem_kind::managed) {
    e = sim::cudaMallocManaged(&p, g.bytes);
  } else {
    e = sim::cudaHostAlloc(&p, g.bytes, sim::cudaHostAllocDefault);
  }
  sim::cudaSetDevice(cur);
  if (e != sim::cudaSuccess) {
    (void)sim::cudaGetLastError();
    return false;
  }
  g.base = static_cast<std::byte*>(p);
  return true;
}

void free_region(region& g) {
  if (g.base == nullptr) return;
  switch (g.kind) {
    case mem_kind::host:
      delete[] g.base;
      break;
    case mem_kind::device:
    case mem_kind::managed:
      (void)sim::cudaFree(g.base);
      break;
    case mem_kind::pinned:
      (void)sim::cudaFreeHost(g.base);
      break;
  }
  (void)sim::cudaGetLastError();
  g.base = nullptr;
}

// Fills @p g with a byte pattern, writes the elements of @p l (element 0 at @p elem0) with the
// pattern of @p seed in dtype @p t, and records the image and the element mask. The runtime's
// memory is host memory underneath, written here before the library gets it.
void write_elements(region& g, std::byte* elem0, const layout& l, const dtype_info& t, int seed) {
  auto* bytes = reinterpret_cast<unsigned char*>(g.base);
  for (size_t i = 0; i < g.bytes; ++i) bytes[i] = static_cast<unsigned char>(0xA5 ^ (i * 13));
  g.mask.assign(g.bytes, 0);
  int64_t idx[max_ndim] = {};
  for (int64_t i = 0; i < l.elements; ++i) {
    int64_t off = 0;
    for (int d = 0; d < l.ndim; ++d) off += idx[d] * l.strides[d];
    std::byte* at = elem0 + off;
    store_value(t, at, pattern_value(seed, i, t));
    const size_t first = static_cast<size_t>(at - g.base);
    for (int b = 0; b < l.itemsize; ++b) g.mask[first + static_cast<size_t>(b)] = 1;
    for (int d = l.ndim - 1; d >= 0; --d) {
      if (++idx[d] < l.shape[d]) break;
      idx[d] = 0;
    }
  }
  g.image.assign(bytes, bytes + g.bytes);
}

// A layout's memory: sized to its span plus @p misalign bytes before element 0 and some slack.
// Returns element 0's address, or nullptr if the runtime refused the allocation (or the span is
// beyond what the target lends: the arrays it builds are small).
std::byte* lay_out(reader& r, region& g, mem_kind kind, int device, const layout& l,
                   int64_t misalign, int64_t extra_before = 0, bool exact = false) {
  // Bytes past the last element (none where the memory must end exactly there: F3's tensors
  // larger than their memory would otherwise fit in the slack).
  const int64_t slack = r.pick(3) * 8 * (exact ? 0 : 1);
  int64_t span = l.itemsize;
  if (l.elements != 0 && __builtin_sub_overflow(l.hi, l.lo, &span)) return nullptr;  // huge
  if (l.elements > (int64_t(1) << 24) || span <= 0 || span > (int64_t(1) << 28)) return nullptr;
  if (!allocate(g, kind, device, static_cast<size_t>(extra_before + misalign + span + slack))) {
    return nullptr;
  }
  return g.base + extra_before + misalign + (l.elements == 0 ? 0 : -l.lo);
}

// ---- Release callbacks and DLPack deleters ----------------------------------------------------

struct tracker {
  std::string what;
  int calls = 0;
  bool has_callback = true;  // false: the target frees the memory itself at the end
  std::vector<region> regions;
  gtstorage_handle owner = 0;  // a wrap of a storage's memory holds a reference to that storage
  bool owner_released = false;
  uint64_t owner_stream = 0;
  DLManagedTensor* legacy = nullptr;
  DLManagedTensorVersioned* versioned = nullptr;
  std::vector<int64_t> dl_shape, dl_strides;
};

void verify_region(const tracker& t, const region& g) {
  const auto* now = reinterpret_cast<const unsigned char*>(g.base);
  if (!g.readonly && !g.check_gaps) return;
  for (size_t i = 0; i < g.bytes; ++i) {
    if (now[i] == g.image[i]) continue;
    if (g.readonly) {
      finding("%s: byte %zu of read-only %s memory (%zu bytes) was written (0x%02x -> 0x%02x)",
              t.what.c_str(), i, mem_name(g.kind), g.bytes, g.image[i], now[i]);
    }
    if (g.mask[i] == 0) {
      finding(
          "%s: byte %zu of %s memory (%zu bytes), not part of any element, was written "
          "(0x%02x -> 0x%02x)",
          t.what.c_str(), i, mem_name(g.kind), g.bytes, g.image[i], now[i]);
    }
  }
}

// The memory goes back to the target: checked, then freed at once (a late access by the library
// is then a use after free that ASan or the runtime's memcheck reports).
void give_back(tracker& t) {
  for (region& g : t.regions) {
    verify_region(t, g);
    free_region(g);
  }
}

void on_release(void* user) {
  auto* t = static_cast<tracker*>(user);
  tracef("    (release callback of %s)\n", t->what.c_str());
  if (++t->calls != 1) finding("%s: release callback called %d times", t->what.c_str(), t->calls);
  give_back(*t);
}

void legacy_deleter(DLManagedTensor* self) {
  auto* t = static_cast<tracker*>(self->manager_ctx);
  on_release(t);
  t->legacy = nullptr;
  delete self;
}

void versioned_deleter(DLManagedTensorVersioned* self) {
  auto* t = static_cast<tracker*>(self->manager_ctx);
  on_release(t);
  t->versioned = nullptr;
  delete self;
}

// ---- The state of one input -------------------------------------------------------------------

constexpr int max_slots = 12;
constexpr int max_ops = 80;

struct slot {
  gtstorage_handle h = 0;
  int refs = 0;  // references held through this slot (1 + retains)
  int group = 0;
  int ndim = 0;
  int64_t shape[max_ndim] = {};
  char kind = 'f';
  int itemsize = 8;
  bool readonly = false;
  bool has_host = false, has_device = false;
  bool single = true;  // one buffer: what a side holds is what a read returns
  expectation e;
  uint64_t stream = 0;
  bool live() const { return h != 0; }
  int64_t elements() const { return element_count(ndim, shape); }
};

struct export_entry {
  DLManagedTensor* legacy = nullptr;
  DLManagedTensorVersioned* versioned = nullptr;
  int group = 0;
  int version = 0;
  expectation e;  // what the exported side holds (when the source was single-buffered)
  char kind = 'f';
};

struct target_stream {
  sim::cudaStream_t s = nullptr;
  int device = 0;
  bool live = false;
};

struct state {
  slot slots[max_slots];
  std::map<gtstorage_handle, int> refs;  // every reference the target holds, by handle
  std::map<gtstorage_handle, uint64_t> stream_of;
  std::vector<gtstorage_handle> dead;  // handles fully released
  std::vector<std::unique_ptr<tracker>> trackers;
  std::vector<export_entry> exports;
  std::vector<int> group_version;
  target_stream streams[4];
  bool injected = false;  // a failure was injected: values are not compared any more
  int ops = 0;
};

state* st = nullptr;

int new_group() {
  st->group_version.push_back(0);
  return static_cast<int>(st->group_version.size()) - 1;
}

// The memory of @p group was written (or its sync state changed): nothing is known any more.
void written(int group) {
  ++st->group_version[static_cast<size_t>(group)];
  for (slot& s : st->slots) {
    if (s.live() && s.group == group) s.e = expectation();
  }
}

// ---- Calls ------------------------------------------------------------------------------------

bool documented(int rc) {
  return rc <= GTSTORAGE_ERROR_INVALID_ARGUMENT && rc >= GTSTORAGE_ERROR_DRIVER_TOO_OLD;
}

// Checks the status of one call and its message.
int check(const char* what, int rc) {
  const char* msg = gtstorage_last_error();
  tracef("  %s -> %s%s%s\n", what, gtstorage_status_name(rc), rc != 0 ? ": " : "",
         rc != 0 ? msg : "");
  if (msg == nullptr) finding("%s: gtstorage_last_error() returned NULL", what);
  if (rc == GTSTORAGE_OK) {
    if (msg[0] != '\0') finding("%s succeeded but gtstorage_last_error() says '%s'", what, msg);
    return rc;
  }
  if (!documented(rc)) {
    finding("%s returned %d (%s), not a documented error status: %s", what, rc,
            gtstorage_status_name(rc), msg);
  }
  if (msg[0] == '\0')
    finding("%s failed with %s but left no message", what, gtstorage_status_name(rc));
  return rc;
}
#define CALL(call) check(#call, (call))

void must(const char* what, int rc) {
  if (check(what, rc) != GTSTORAGE_OK) {
    finding("%s: %s: %s (a call that cannot fail here)", what, gtstorage_status_name(rc),
            gtstorage_last_error());
  }
}
#define MUST(call) must(#call, (call))

// ---- Handles ------------------------------------------------------------------------------------

int free_slot() {
  for (int i = 0; i < max_slots; ++i) {
    if (!st->slots[i].live()) return i;
  }
  return -1;
}

// A live slot chosen by the input, or -1.
int pick_slot(reader& r) {
  int live[max_slots], n = 0;
  for (int i = 0; i < max_slots; ++i) {
    if (st->slots[i].live()) live[n++] = i;
  }
  const int k = r.u8();
  return n == 0 ? -1 : live[k % n];
}

void add_ref(gtstorage_handle h) {
  ++st->refs[h];
}

// Drops one reference the target holds on @p h (the library's release already succeeded).
void drop_ref(gtstorage_handle h) {
  auto it = st->refs.find(h);
  if (it == st->refs.end() || it->second <= 0) finding("internal: release of an unheld handle");
  if (--it->second == 0) {
    st->refs.erase(it);
    st->stream_of.erase(h);
    st->dead.push_back(h);
  }
}

// Records a new handle in slot @p i: geometry and sides from the descriptors.
void adopt(int i, gtstorage_handle h, int group, const expectation& e) {
  slot& s = st->slots[i];
  s = slot();
  s.h = h;
  s.refs = 1;
  s.group = group;
  add_ref(h);
  int32_t has = 0;
  MUST(gtstorage_has_side(h, GTSTORAGE_SIDE_HOST, &has));
  s.has_host = has != 0;
  MUST(gtstorage_has_side(h, GTSTORAGE_SIDE_DEVICE, &has));
  s.has_device = has != 0;
  if (!s.has_host && !s.has_device) finding("handle %" PRIu64 " has neither side", h);
  gtstorage_interface_info info = GTSTORAGE_INTERFACE_INFO_INIT;
  MUST(gtstorage_interface(h, s.has_host ? GTSTORAGE_SIDE_HOST : GTSTORAGE_SIDE_DEVICE, &info));
  s.ndim = static_cast<int>(info.ndim);
  for (int d = 0; d < s.ndim; ++d) s.shape[d] = info.shape[d];
  s.kind = info.typestr[1];
  s.itemsize = static_cast<int>(info.itemsize);
  s.readonly = info.readonly != 0;
  s.stream = info.stream;
  st->stream_of[h] = info.stream;
  s.single = true;
  if (s.has_host && s.has_device) {
    void *host = nullptr, *dev = nullptr;
    MUST(gtstorage_data(h, GTSTORAGE_SIDE_HOST, &host));
    MUST(gtstorage_data(h, GTSTORAGE_SIDE_DEVICE, &dev));
    s.single = host == dev;
  }
  s.e = e.kind == expectation::none ? e : e.into(s.kind);
  tracef("    slot %d = handle %" PRIu64 " (ndim %d, %s, %s%s, group %d)\n", i, h, s.ndim,
         info.typestr, s.has_host ? "host" : "", s.has_device ? "+device" : "", group);
}

// Releases every reference slot @p i holds.
void release_slot(int i) {
  slot& s = st->slots[i];
  while (s.refs > 0) {
    MUST(gtstorage_release(s.h));
    --s.refs;
    drop_ref(s.h);
  }
  s = slot();
}

// Owners of wraps whose callback ran: the reference the target held for the wrap goes.
// (That release may run the callback of a wrap of that storage's own owner: repeat.)
void release_owners() {
  for (bool again = true; again;) {
    again = false;
    for (size_t k = 0; k < st->trackers.size(); ++k) {
      tracker& t = *st->trackers[k];
      if (t.owner != 0 && t.calls > 0 && !t.owner_released) {
        t.owner_released = true;
        tracef("release the owner of %s (handle %" PRIu64 ")\n", t.what.c_str(), t.owner);
        MUST(gtstorage_release(t.owner));
        drop_ref(t.owner);
        again = true;
      }
    }
  }
}

// ---- Streams ------------------------------------------------------------------------------------

// A stream argument: the storage's (0), legacy (1), per-thread (2), a stream the target made
// (live or destroyed), or rarely a value that names no stream at all.
uint64_t pick_stream(reader& r, bool live_only) {
  const int k = r.pick(12);
  if (k < 3) return static_cast<uint64_t>(k);
  if (k < 11) {
    const target_stream& t = st->streams[k % 4];
    if (t.s != nullptr && (t.live || !live_only)) return reinterpret_cast<uint64_t>(t.s);
    return static_cast<uint64_t>(k % 3);
  }
  return live_only ? 0 : 0x5eed0000u;
}

// Waits until every device is idle (as an application may); what was queued has landed.
void device_synchronize() {
  const int cur = current_sim_device();
  for (int dev = 0; dev < 2; ++dev) {
    sim::cudaSetDevice(dev);
    (void)sim::cudaDeviceSynchronize();
  }
  sim::cudaSetDevice(cur);
  (void)sim::cudaGetLastError();
}

// ---- Operations ---------------------------------------------------------------------------------

const char* const presets[] = {nullptr,
                               "numpy",
                               "debug",
                               "gt:cpu_kfirst",
                               "gt:cpu_ifirst",
                               "gt:gpu",
                               "dace:cpu",
                               "dace:gpu",
                               "dace:gpu_IJK",
                               "gridtools:gpu",
                               "gtmc",
                               "gtcuda",
                               "C",
                               "F",
                               "gridtools:cpu_ifirst",
                               "fuzz:cpu_odd",
                               "fuzz:gpu_bytes",
                               "no such preset"};
const char* const dims_table[] = {nullptr, nullptr,   "IJK", "KJI", "IJ", "I",   "K",      "IJK0",
                                  "0",     "I,J,K,0", "JI",  "II",  "X",  "0,1", "K,J,I,0"};
const int64_t alignments[] = {0, 0, 0, 0, 1, 2, 3, 4, 8, 12, 16, 24, 32, 100, 128, 256, 4096, -1};
const int64_t bad_extents[] = {-1, INT64_MIN, INT64_MAX, int64_t(1) << 62};

struct create_args {
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  int64_t shape[max_ndim] = {};
  int64_t halo[2 * max_ndim] = {};
  int64_t aligned[max_ndim] = {};
  int32_t layout_map[max_ndim] = {};
  alignas(16) unsigned char fill[16] = {};
  const dtype_info* dt = nullptr;
  bool bad_dtype = false;
  // INIT_COPY's source: memory of the target
  region src_mem;
  gtstorage_array src = GTSTORAGE_ARRAY_INIT;
  int64_t src_strides[max_ndim] = {};
  expectation e;
  ~create_args() { free_region(src_mem); }
};

void pick_create(reader& r, create_args& a) {
  gtstorage_create_options& o = a.o;
  const int nd = r.rarely(40) ? 17 : r.pick(5);
  o.ndim = static_cast<uint32_t>(nd);
  const int n = std::min(nd, max_ndim);
  pick_shape(r, n, a.shape);
  if (n > 0 && r.rarely(24)) a.shape[r.pick(n)] = r.choose(bad_extents);
  o.shape = r.rarely(40) ? nullptr : a.shape;
  o.dtype = pick_dtype(r, &a.dt, &a.bad_dtype);
  o.dims = r.choose(dims_table);
  o.preset = r.choose(presets);
  if (r.rarely(4)) {
    for (int d = 0; d < n; ++d) a.layout_map[d] = d;
    for (int d = n - 1; d > 0; --d) std::swap(a.layout_map[d], a.layout_map[r.pick(d + 1)]);
    if (n > 0 && r.rarely(8)) a.layout_map[0] = r.pick(n + 2) - 1;
    o.layout = a.layout_map;
  }
  if (r.flag()) {
    for (int d = 0; d < 2 * n; ++d) a.halo[d] = r.pick(4) == 0 ? r.pick(3) : 0;
    if (n > 0 && r.rarely(16)) a.halo[r.pick(2 * n)] = -1;
    o.halo = a.halo;
  }
  if (r.rarely(4)) {
    for (int d = 0; d < n; ++d) a.aligned[d] = r.pick(4);
    o.aligned_index = a.aligned;
  }
  o.alignment_bytes = r.choose(alignments);
  o.init = r.rarely(40) ? 7 : r.pick(5);
  const int32_t devices[] = {GTSTORAGE_DEVICE_DEFAULT, GTSTORAGE_DEVICE_CPU, GTSTORAGE_DEVICE_GPU,
                             GTSTORAGE_DEVICE_GPU, 3};
  o.device = r.choose(devices);
  const int32_t device_ids[] = {-1, -1, -1, 0, 1, 2};
  o.device_id = r.choose(device_ids);
  o.managed = r.rarely(40) ? 4 : r.pick(4);
  o.host_memory = r.rarely(6) ? GTSTORAGE_HOST_PINNED : GTSTORAGE_HOST_PAGEABLE;
  if (r.rarely(40)) o.host_memory = 2;
  o.readonly = r.rarely(6) ? 1 : 0;
  o.pool = r.rarely(4) ? GTSTORAGE_POOL_OFF : GTSTORAGE_POOL_DEFAULT;
  if (r.rarely(40)) o.pool = 2;
  o.pitch_padding = r.rarely(3) ? GTSTORAGE_PITCH_PADDING_AVOID_ALIASING : 0;
  if (r.rarely(40)) o.pitch_padding = -1;
  if (r.rarely(60)) o.struct_size = r.pick(2) == 0 ? 0 : 8;

  const int v = r.pick(97);
  switch (o.init) {
    case GTSTORAGE_INIT_ZEROS:
      a.e = expectation::of_constant(0, false);
      break;
    case GTSTORAGE_INIT_ONES:
      a.e = expectation::of_constant(1, false);
      break;
    case GTSTORAGE_INIT_VALUE:
      store_value(*a.dt, a.fill, v);
      o.fill_value = r.rarely(30) ? nullptr : a.fill;
      a.e = expectation::of_constant(v, a.dt->kind == 'b');
      break;
    case GTSTORAGE_INIT_COPY: {
      // The source: the same shape in target memory, any dtype and strides.
      const dtype_info& t = dtypes[r.pick(14)];
      layout l;
      l.ndim = n;
      for (int d = 0; d < n; ++d) l.shape[d] = a.shape[d];
      l.itemsize = t.size;
      bool sane = true;
      for (int d = 0; d < n; ++d) sane = sane && a.shape[d] >= 0 && a.shape[d] <= 300000;
      if (!sane) break;  // the create fails on the shape; no source needed
      pick_strides(r, l, true);
      const int64_t misalign = r.rarely(4) ? 1 : 0;
      std::byte* elem0 = lay_out(r, a.src_mem, mem_kind::host, 0, l, misalign);
      if (elem0 == nullptr) break;
      const int seed = r.pick(97);
      write_elements(a.src_mem, elem0, l, t, seed);
      a.src.ndim = static_cast<uint32_t>(n);
      a.src.data = elem0;
      a.src.shape = a.shape;
      for (int d = 0; d < n; ++d) a.src_strides[d] = l.strides[d];
      a.src.strides = l.null_strides ? nullptr : a.src_strides;
      a.src.dtype = t.str;
      o.source = r.rarely(30) ? nullptr : &a.src;
      if (l.valid()) a.e = expectation::of_pattern(seed, t.kind == 'b');
      break;
    }
    default:
      break;
  }
}

void op_create(reader& r) {
  const int i = free_slot();
  create_args a;
  pick_create(r, a);
  if (i < 0) return;
  tracef(
      "create ndim=%u dtype=%s preset=%s dims=%s init=%d device=%d id=%d managed=%d host=%d "
      "ro=%d pool=%d pad=%d align=%" PRId64 "\n",
      a.o.ndim, a.o.dtype ? a.o.dtype : "NULL", a.o.preset ? a.o.preset : "NULL",
      a.o.dims ? a.o.dims : "NULL", a.o.init, a.o.device, a.o.device_id, a.o.managed,
      a.o.host_memory, a.o.readonly, a.o.pool, a.o.pitch_padding, a.o.alignment_bytes);
  gtstorage_handle h = 0;
  if (CALL(gtstorage_create(&a.o, &h)) != GTSTORAGE_OK) return;
  adopt(i, h, new_group(), a.e);
}

// Memory of the simulated runtime, host memory or a mix, described by a wrap.
void op_wrap(reader& r, bool with_device) {
  const int i = free_slot();
  auto t = std::make_unique<tracker>();
  t->what = with_device ? "wrap of device memory" : "wrap of host memory";
  gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
  layout l;
  l.ndim = r.pick(5);
  pick_shape(r, l.ndim, l.shape);
  const dtype_info* dt = nullptr;
  bool bad = false;
  w.dtype = pick_dtype(r, &dt, &bad);
  l.itemsize = dt->size;
  pick_strides(r, l, true);
  w.ndim = static_cast<uint32_t>(l.ndim);
  w.shape = l.shape;
  w.dims = r.choose(dims_table);
  int64_t halo[2 * max_ndim] = {};
  if (r.rarely(3)) {
    for (int d = 0; d < 2 * l.ndim; ++d) halo[d] = r.pick(3) == 0 ? 1 : 0;
    w.halo = halo;
  }
  const bool readonly = r.rarely(4);
  w.readonly = readonly ? 1 : 0;
  const int seed = r.pick(97), other_seed = (seed + 1 + r.pick(50)) % 97;
  const int64_t misalign = r.rarely(4) ? r.pick(dt->size) : 0;
  bool host_side = true;
  int32_t state = GTSTORAGE_SYNC_CLEAN;
  if (with_device) {
    host_side = r.flag();  // a host + device pair, or device memory only
    state = host_side ? r.pick(3) : GTSTORAGE_SYNC_CLEAN;
    if (r.rarely(30)) state = r.flag() ? 1 : 5;
  }
  if (r.rarely(40)) w.reserved = 1;
  bool null_data = false;
  if (host_side) {
    region g;
    std::byte* elem0 = lay_out(r, g, mem_kind::host, 0, l, misalign);
    if (elem0 == nullptr) return;
    // A host buffer whose device side is clean gets the same values; a dirty side the other's.
    write_elements(g, elem0, l, *dt,
                   with_device && state == GTSTORAGE_SYNC_DEVICE_DIRTY ? other_seed : seed);
    g.readonly = readonly;
    g.check_gaps = l.valid();
    w.data = elem0;
    if (l.elements == 0 && r.rarely(3)) {
      w.data = nullptr;  // allowed for an empty array
      null_data = true;
    }
    w.strides = l.null_strides ? nullptr : l.strides;
    t->regions.push_back(std::move(g));
  }
  layout dl = l;
  if (with_device) {
    const mem_kind kinds[] = {mem_kind::device,  mem_kind::device, mem_kind::device,
                              mem_kind::managed, mem_kind::pinned, mem_kind::host};
    const mem_kind kind = r.choose(kinds);
    const int device = r.pick(2);
    if (host_side && r.flag()) {  // the device copy has strides of its own
      pick_strides(r, dl, false);
      if (dl.elements > 0 && !dl.valid()) dl = l;
      w.device_strides = dl.strides;
    }
    region g;
    std::byte* elem0 = lay_out(r, g, kind, device, dl, misalign);
    if (elem0 == nullptr) {
      for (region& x : t->regions) free_region(x);
      return;
    }
    write_elements(g, elem0, dl, *dt,
                   host_side && state == GTSTORAGE_SYNC_HOST_DIRTY ? other_seed : seed);
    g.readonly = readonly;
    g.check_gaps = dl.valid();
    w.device_data = elem0;
    if (!host_side) w.strides = dl.null_strides ? nullptr : dl.strides;
    const int32_t ids[] = {-1, -1, 0, 1, 3};
    w.device_id = r.choose(ids);
    t->regions.push_back(std::move(g));
    if (kind == mem_kind::host) t->what = "wrap of host memory as device_data";
  }
  w.sync_state = state;
  t->has_callback = !r.rarely(8);
  if (t->has_callback) {
    w.release = on_release;
    w.user_data = t.get();
  }
  if (i < 0) {
    for (region& g : t->regions) free_region(g);
    return;
  }
  tracef(
      "wrap ndim=%u dtype=%s %s%s state=%d ro=%d strides=%s overlap=%d multiples=%d "
      "misalign=%" PRId64 "\n",
      w.ndim, w.dtype ? w.dtype : "NULL", host_side ? "host" : "", with_device ? "+device" : "",
      state, readonly, l.null_strides ? "NULL" : "given", l.overlap, l.multiples, misalign);
  gtstorage_handle h = 0;
  const int rc = CALL(gtstorage_wrap(&w, &h));
  if (rc != GTSTORAGE_OK) {
    if (t->calls != 0) finding("gtstorage_wrap failed but called the release callback");
    for (region& g : t->regions) free_region(g);
    return;
  }
  if (!l.valid() || !dl.valid()) {
    finding(
        "gtstorage_wrap accepted strides that overlap or are not multiples of the item size "
        "(ndim %d, itemsize %d)",
        l.ndim, l.itemsize);
  }
  if (with_device && t->what == "wrap of host memory as device_data") {
    finding("gtstorage_wrap accepted ordinary host memory as device_data");
  }
  (void)null_data;
  const bool known = !bad && (state == GTSTORAGE_SYNC_CLEAN || state == 1 || state == 2);
  adopt(i, h, new_group(), known ? expectation::of_pattern(seed, dt->kind == 'b') : expectation());
  st->trackers.push_back(std::move(t));
}

// A wrap of one side of a live storage (its memory, as another producer would hand it over).
void op_wrap_side(reader& r) {
  const int src = pick_slot(r);
  const int side = r.pick(2);
  // A device side is device memory; a host side may be handed over as either (pinned host
  // memory is valid device_data, pageable memory must be refused there).
  const bool as_device = side == GTSTORAGE_SIDE_DEVICE || r.flag();
  const int i = free_slot();
  if (src < 0 || i < 0) return;
  slot& s = st->slots[src];
  gtstorage_interface_info info = GTSTORAGE_INTERFACE_INFO_INIT;
  if (CALL(gtstorage_interface(s.h, side, &info)) != GTSTORAGE_OK) return;
  // Handing memory to another consumer, the application first lets the work queued on it land
  // (the wrap knows nothing of the storage's streams and pending copies).
  device_synchronize();
  gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
  w.ndim = info.ndim;
  w.shape = info.shape;
  w.dtype = info.typestr;
  if (as_device) {
    w.device_data = info.data;
    w.device_strides = info.strides;
    w.strides = info.strides;
  } else {
    w.data = info.data;
    w.strides = info.strides;
  }
  // Memory a descriptor says is read-only stays so: a producer hands it over read-only (the
  // library cannot know where else a caller's address came from).
  w.readonly = info.readonly != 0 || r.rarely(4) ? 1 : 0;
  auto t = std::make_unique<tracker>();
  t->what = "wrap of a storage's memory";
  w.release = on_release;
  w.user_data = t.get();
  tracef("wrap side %d of slot %d as %s\n", side, src, as_device ? "device_data" : "data");
  gtstorage_handle h = 0;
  if (CALL(gtstorage_wrap(&w, &h)) != GTSTORAGE_OK) {
    if (t->calls != 0) finding("gtstorage_wrap failed but called the release callback");
    return;
  }
  // The wrap uses the storage's memory: the target keeps the storage alive until the callback.
  MUST(gtstorage_retain(s.h));
  add_ref(s.h);
  t->owner = s.h;
  const expectation e = s.single ? s.e : expectation();
  const int group = s.group;
  st->trackers.push_back(std::move(t));
  adopt(i, h, group, e);
}

void op_slice(reader& r) {
  const int src = pick_slot(r);
  const int i = free_slot();
  gtstorage_slice_spec spec[max_ndim + 1];
  const int64_t bounds[] = {
      GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 0, 1, 2, 3, -1, -2, 5, 100, INT64_MAX,
      INT64_MIN + 1};
  const int64_t steps[] = {1, 1, 1, 1, 2, -1, -2, 3, 0, INT64_MIN};
  for (auto& sp : spec) {
    sp.start = r.choose(bounds);
    sp.stop = r.choose(bounds);
    sp.step = r.choose(steps);
    sp.kind = r.rarely(5) ? GTSTORAGE_SLICE_INDEX : GTSTORAGE_SLICE_RANGE;
    if (r.rarely(60)) sp.kind = 2;
    sp.reserved = r.rarely(60) ? 1 : 0;
  }
  const bool wrong_n = r.rarely(30);
  if (src < 0 || i < 0) return;
  slot& s = st->slots[src];
  const uint32_t n = static_cast<uint32_t>(s.ndim + (wrong_n ? 1 : 0));
  tracef("slice slot %d\n", src);
  gtstorage_handle h = 0;
  if (CALL(gtstorage_slice(s.h, spec, n, &h)) != GTSTORAGE_OK) return;
  adopt(i, h, s.group, s.e.kind == expectation::constant ? s.e : expectation());
}

void op_transpose(reader& r) {
  const int src = pick_slot(r);
  const int i = free_slot();
  int32_t perm[max_ndim];
  for (int d = 0; d < max_ndim; ++d) perm[d] = d;
  const bool bad = r.rarely(20);
  const int shuffle_bytes = r.u8();
  if (src < 0 || i < 0) return;
  slot& s = st->slots[src];
  uint32_t seedish = static_cast<uint32_t>(shuffle_bytes) * 2654435761u;
  for (int d = s.ndim - 1; d > 0; --d) {
    std::swap(perm[d], perm[(seedish >> 8) % static_cast<uint32_t>(d + 1)]);
    seedish = seedish * 1103515245u + 12345u;
  }
  if (bad && s.ndim > 0) perm[0] = s.ndim;
  tracef("transpose slot %d\n", src);
  gtstorage_handle h = 0;
  if (CALL(gtstorage_transpose(s.h, perm, static_cast<uint32_t>(s.ndim), &h)) != GTSTORAGE_OK) {
    return;
  }
  adopt(i, h, s.group, s.e.kind == expectation::constant ? s.e : expectation());
}

void op_domain_view(reader& r) {
  const int src = pick_slot(r);
  const int i = free_slot();
  if (src < 0 || i < 0) return;
  slot& s = st->slots[src];
  tracef("domain_view slot %d\n", src);
  gtstorage_handle h = 0;
  if (CALL(gtstorage_domain_view(s.h, &h)) != GTSTORAGE_OK) return;
  adopt(i, h, s.group, s.e.kind == expectation::constant ? s.e : expectation());
}

// After a copy of @p src's values into @p dst: what dst holds.
// Overlapping source and destination (views of one buffer, a wrap of a storage's memory) copy
// as through a temporary (NumPy's semantics, which the library follows): dst holds what src held.
void copied(slot& dst, const slot& src, bool exact) {
  const expectation e = src.e;
  written(dst.group);
  if (exact && e.kind != expectation::none && !st->injected) dst.e = e.into(dst.kind);
}

void op_copy(reader& r) {
  const int d = pick_slot(r), s = pick_slot(r);
  if (d < 0 || s < 0) return;
  slot& dst = st->slots[d];
  slot& src = st->slots[s];
  tracef("copy slot %d <- slot %d\n", d, s);
  const int rc = CALL(gtstorage_copy(dst.h, src.h));
  if (rc == GTSTORAGE_OK) {
    copied(dst, src, true);
  } else if (rc != GTSTORAGE_ERROR_SHAPE_MISMATCH && rc != GTSTORAGE_ERROR_READONLY) {
    written(dst.group);
  }
}

void op_copy_sides(reader& r) {
  const int d = pick_slot(r), s = pick_slot(r);
  const int dside = r.rarely(40) ? 2 : r.pick(2), sside = r.pick(2);
  const uint64_t stream = pick_stream(r, false);
  uint32_t flags = r.pick(4);
  if (r.rarely(40)) flags |= 8;
  if (d < 0 || s < 0) return;
  slot& dst = st->slots[d];
  slot& src = st->slots[s];
  tracef("copy_sides slot %d side %d <- slot %d side %d stream %" PRIx64 " flags %u\n", d, dside, s,
         sside, stream, flags);
  const int rc = CALL(gtstorage_copy_sides(dst.h, dside, src.h, sside, stream, flags));
  const bool async = (flags & GTSTORAGE_COPY_FLAG_ASYNC) != 0;
  if (async && avoid_f6) device_synchronize();  // F6, see the top of this file
  if (rc == GTSTORAGE_OK) {
    // The sides written and read are what reads see only for single-buffered storages.
    copied(dst, src, dst.single && src.single);
  } else if (rc != GTSTORAGE_ERROR_SHAPE_MISMATCH && rc != GTSTORAGE_ERROR_READONLY &&
             rc != GTSTORAGE_ERROR_INVALID_ARGUMENT && rc != GTSTORAGE_ERROR_NO_SUCH_BUFFER) {
    written(dst.group);
  }
}

// A caller array of @p s's shape over target host memory: @p a describes it, @p g holds it.
struct caller_array {
  region g;
  gtstorage_array a = GTSTORAGE_ARRAY_INIT;
  int64_t shape[max_ndim] = {};
  int64_t strides[max_ndim] = {};
  layout l;
  const dtype_info* dt = nullptr;
  ~caller_array() { free_region(g); }
};

// A caller array for slot @p s (its shape, any dtype and strides; rarely a wrong shape); false
// if the target cannot lend that much memory.
bool make_caller_array(reader& r, const slot& s, caller_array& c, int seed) {
  const int k = r.pick(20);
  c.dt = k < 14 ? &dtypes[k] : &f8_info();
  c.l.ndim = s.ndim;
  for (int d = 0; d < s.ndim; ++d) c.l.shape[d] = c.shape[d] = s.shape[d];
  if (s.ndim > 0 && r.rarely(20)) c.l.shape[0] = c.shape[0] = wrap_add(s.shape[0], 1);
  c.l.itemsize = c.dt->size;
  pick_strides(r, c.l, true);
  const int64_t misalign = r.rarely(4) ? 1 : 0;
  std::byte* elem0 = lay_out(r, c.g, mem_kind::host, 0, c.l, misalign);
  if (elem0 == nullptr) return false;
  write_elements(c.g, elem0, c.l, *c.dt, seed);
  c.a.ndim = static_cast<uint32_t>(s.ndim);
  c.a.data = elem0;
  c.a.shape = c.shape;
  for (int d = 0; d < s.ndim; ++d) c.strides[d] = c.l.strides[d];
  c.a.strides = c.l.null_strides ? nullptr : c.strides;
  c.a.dtype = k < 14 ? c.dt->str : nullptr;
  if (c.a.dtype == nullptr) {  // the storage's dtype: write the pattern in that one
    for (const dtype_info& t : dtypes) {
      if (t.kind == s.kind && t.size == s.itemsize) c.dt = &t;
    }
    free_region(c.g);
    c.l.itemsize = c.dt->size;
    c_strides(c.l);
    c.l.null_strides = true;
    c.l.contiguous = true;
    finish_layout(c.l);
    elem0 = lay_out(r, c.g, mem_kind::host, 0, c.l, 0);
    if (elem0 == nullptr) return false;
    write_elements(c.g, elem0, c.l, *c.dt, seed);
    c.a.data = elem0;
    c.a.strides = nullptr;
  }
  return true;
}

// A caller array over the host memory of a storage (a NumPy view of it, say): the copy reads it
// as it was, overlapping the destination or not.
void copy_from_storage_memory(reader& r, int d) {
  const int s = pick_slot(r);
  if (s < 0) return;
  slot& dst = st->slots[d];
  const slot& src = st->slots[s];
  gtstorage_interface_info info = GTSTORAGE_INTERFACE_INFO_INIT;
  if (!src.has_host || CALL(gtstorage_interface(src.h, GTSTORAGE_SIDE_HOST, &info)) != 0) return;
  device_synchronize();  // what is queued on that memory lands first (the application waits)
  gtstorage_array a = GTSTORAGE_ARRAY_INIT;
  a.ndim = info.ndim;
  a.data = info.data;
  a.shape = info.shape;
  a.strides = info.strides;
  a.dtype = info.typestr;
  tracef("copy_from_array slot %d <- the host memory of slot %d\n", d, s);
  const expectation e = src.single ? src.e : expectation();
  const int rc = CALL(gtstorage_copy_from_array(dst.h, &a));
  if (rc == GTSTORAGE_OK) {
    written(dst.group);
    if (e.kind != expectation::none && !st->injected) dst.e = e.into(dst.kind);
  } else if (rc != GTSTORAGE_ERROR_SHAPE_MISMATCH && rc != GTSTORAGE_ERROR_READONLY) {
    written(dst.group);
  }
}

void op_copy_from_array(reader& r) {
  const int d = pick_slot(r);
  if (d < 0) return;
  if (r.rarely(4)) {
    copy_from_storage_memory(r, d);
    return;
  }
  slot& dst = st->slots[d];
  const int seed = r.pick(97);
  caller_array c;
  if (!make_caller_array(r, dst, c, seed)) return;
  tracef("copy_from_array slot %d dtype %s\n", d, c.a.dtype ? c.a.dtype : "NULL");
  const int rc = CALL(gtstorage_copy_from_array(dst.h, &c.a));
  if (rc == GTSTORAGE_OK) {
    written(dst.group);
    if (c.l.valid() && !st->injected) {
      dst.e = expectation::of_pattern(seed, c.dt->kind == 'b').into(dst.kind);
    }
  } else if (rc != GTSTORAGE_ERROR_SHAPE_MISMATCH && rc != GTSTORAGE_ERROR_READONLY) {
    written(dst.group);
  }
}

// Reads slot @p i back as C-ordered <f8 and compares with the model.
void verify_slot(int i, const char* when) {
  slot& s = st->slots[i];
  const int64_t n = s.elements();
  std::vector<double> got(static_cast<size_t>(std::max<int64_t>(n, 1)), -999.0);
  gtstorage_array a = GTSTORAGE_ARRAY_INIT;
  a.ndim = static_cast<uint32_t>(s.ndim);
  a.data = got.data();
  a.shape = s.shape;
  a.dtype = "<f8";
  const int rc = CALL(gtstorage_copy_to_array(&a, s.h));
  if (rc != GTSTORAGE_OK || s.e.kind == expectation::none || st->injected) return;
  for (int64_t k = 0; k < n; ++k) {
    const double want = s.e.at(k);
    if (got[static_cast<size_t>(k)] != want) {
      finding("%s: slot %d (handle %" PRIu64 ", kind %c%d, %s%s) element %" PRId64 " of %" PRId64
              " reads %g, the model says %g (%s %d%s)",
              when, i, s.h, s.kind, s.itemsize, s.has_host ? "host" : "",
              s.has_device ? "+device" : "", k, n, got[static_cast<size_t>(k)], want,
              s.e.kind == expectation::constant ? "constant" : "pattern seed",
              s.e.kind == expectation::constant ? s.e.value : s.e.seed,
              s.e.booled ? ", as bool" : "");
    }
  }
}

void op_read(reader& r) {
  const int i = pick_slot(r);
  const bool plain = !r.rarely(4);
  if (i < 0) return;
  tracef("read slot %d\n", i);
  if (plain) {
    verify_slot(i, "read");
    return;
  }
  caller_array c;  // any dtype and strides (values not compared)
  if (!make_caller_array(r, st->slots[i], c, 0)) return;
  CALL(gtstorage_copy_to_array(&c.a, st->slots[i].h));
}

void op_fill(reader& r) {
  const int i = pick_slot(r);
  const int v = r.pick(97);
  const int how = r.pick(8);
  if (i < 0) return;
  slot& s = st->slots[i];
  tracef("fill slot %d with %d (%d)\n", i, v, how);
  int rc = 0;
  if (how < 4) {
    rc = CALL(gtstorage_fill_double(s.h, v));
  } else {
    alignas(16) unsigned char value[16] = {};
    const dtype_info* t = &f8_info();
    for (const dtype_info& x : dtypes) {
      if (x.kind == s.kind && x.size == s.itemsize) t = &x;
    }
    store_value(*t, value, v);
    rc = CALL(gtstorage_fill(s.h, how == 7 ? nullptr : value));
  }
  if (rc == GTSTORAGE_OK) {
    written(s.group);
    if (!st->injected) s.e = expectation::of_constant(v, s.kind == 'b');
  } else if (rc != GTSTORAGE_ERROR_READONLY && rc != GTSTORAGE_ERROR_INVALID_ARGUMENT) {
    written(s.group);
  }
}

uint32_t pick_sync_flags(reader& r) {
  if (r.rarely(40)) return 6;
  return r.rarely(3) ? GTSTORAGE_SYNC_FLAG_FORCE : 0;
}

// A sync that may move the values another way than the model says (forced, or a failure).
void after_sync(const slot& s, int rc, uint32_t flags) {
  if (rc != GTSTORAGE_OK || (flags & GTSTORAGE_SYNC_FLAG_FORCE) != 0) written(s.group);
}

void op_sync_to(reader& r, bool async) {
  const int i = pick_slot(r);
  const int side = r.rarely(40) ? 3 : r.pick(2);
  const uint32_t flags = pick_sync_flags(r);
  const uint64_t stream = pick_stream(r, false);
  if (i < 0) return;
  slot& s = st->slots[i];
  tracef("sync_to%s slot %d side %d flags %u stream %" PRIx64 "\n", async ? "_async" : "", i, side,
         flags, stream);
  const int rc = async ? CALL(gtstorage_sync_to_async(s.h, side, flags, stream))
                       : CALL(gtstorage_sync_to(s.h, side, flags));
  after_sync(s, rc, flags);
}

void op_modify(reader& r) {
  const int i = pick_slot(r);
  const int side = r.rarely(40) ? 2 : r.pick(2);
  const uint32_t flags = pick_sync_flags(r);
  if (i < 0) return;
  slot& s = st->slots[i];
  tracef("modify slot %d side %d flags %u\n", i, side, flags);
  CALL(gtstorage_modify(s.h, side, flags));
  written(s.group);  // the side a read uses may change
}

void op_sync_misc(reader& r) {
  const int i = pick_slot(r);
  const int what = r.pick(7);
  const int32_t op = r.pick(13);
  const int side = r.pick(2);
  const uint32_t flags = pick_sync_flags(r);
  const uint64_t stream = pick_stream(r, false);
  if (i < 0) return;
  slot& s = st->slots[i];
  int32_t out = -1;
  switch (what) {
    case 0:
      tracef("mark_synchronized slot %d\n", i);
      CALL(gtstorage_mark_synchronized(s.h));
      written(s.group);
      break;
    case 1:
      if (CALL(gtstorage_need_sync(s.h, side, &out)) == GTSTORAGE_OK && out != 0 && out != 1) {
        finding("gtstorage_need_sync answered %d", out);
      }
      break;
    case 2:
      if (CALL(gtstorage_get_sync_state(s.h, &out)) == GTSTORAGE_OK && (out < 0 || out > 2)) {
        finding("gtstorage_get_sync_state answered %d", out);
      }
      break;
    case 3: {
      tracef("sync (deprecated) slot %d op %d flags %u\n", i, op, flags);
      const int rc = CALL(gtstorage_sync(s.h, op, flags));
      const bool moves_only = op == 1 || op == 2 || op == 3 || op == 7 || op == 8 || op == 11;
      if (!moves_only || rc != GTSTORAGE_OK || (flags & GTSTORAGE_SYNC_FLAG_FORCE) != 0) {
        written(s.group);
      }
      break;
    }
    case 4: {
      tracef("sync_async (deprecated) slot %d op %d flags %u stream %" PRIx64 "\n", i, op, flags,
             stream);
      const int rc = CALL(gtstorage_sync_async(s.h, op, flags, stream));
      const bool moves_only = op == 1 || op == 2 || op == 3 || op == 7 || op == 8 || op == 11;
      if (!moves_only || rc != GTSTORAGE_OK || (flags & GTSTORAGE_SYNC_FLAG_FORCE) != 0) {
        written(s.group);
      }
      break;
    }
    case 5:
      tracef("acquire slot %d side %d\n", i, side);
      after_sync(s, CALL(gtstorage_acquire(s.h, side)), 0);
      break;
    default:
      tracef("touch slot %d side %d\n", i, side);
      CALL(gtstorage_touch(s.h, side));
      written(s.group);
      break;
  }
}

void op_wait_stream(reader& r) {
  const int i = pick_slot(r);
  const uint64_t stream = pick_stream(r, false);
  if (i < 0) return;
  tracef("wait_stream slot %d stream %" PRIx64 "\n", i, stream);
  CALL(gtstorage_wait_stream(st->slots[i].h, stream));
}

bool stream_is_dead(uint64_t stream) {
  for (const target_stream& t : st->streams) {
    if (t.s != nullptr && !t.live && reinterpret_cast<uint64_t>(t.s) == stream) return true;
  }
  return false;
}

void op_set_stream(reader& r) {
  const int i = pick_slot(r);
  uint64_t stream = pick_stream(r, !check_f8);
  if (i < 0) return;
  slot& s = st->slots[i];
  tracef("set_stream slot %d stream %" PRIx64 "\n", i, stream);
  const bool dead = stream_is_dead(stream) || stream == 0x5eed0000u;
  const int rc = CALL(gtstorage_set_stream(s.h, stream));
  if (rc == GTSTORAGE_OK && dead && s.has_device) {
    finding("F8: gtstorage_set_stream accepted a stream that is not live (%" PRIx64 ")", stream);
  }
  if (rc == GTSTORAGE_OK) {
    s.stream = stream;
    st->stream_of[s.h] = stream;
  }
}

std::vector<gtstorage_pool_stats> default_limits;

void op_pool(reader& r) {
  const int what = r.pick(4);
  const int32_t memories[] = {0, 1, 2, 3, 0, 1, 2, 3, 4, -1};
  const int32_t memory = r.choose(memories);
  const int64_t sizes[] = {0, 1, 116, 4096, 65536, int64_t(1) << 20, int64_t(1) << 40, -1};
  const int64_t bytes = r.choose(sizes);
  switch (what) {
    case 0:
      tracef("pool_set_limit %d %" PRId64 "\n", memory, bytes);
      CALL(gtstorage_pool_set_limit(memory, bytes));
      break;
    case 1:
      tracef("pool_trim %d %" PRId64 "\n", memory, bytes);
      CALL(gtstorage_pool_trim(memory, bytes));
      break;
    default: {
      gtstorage_pool_stats p = GTSTORAGE_POOL_STATS_INIT;
      if (CALL(gtstorage_pool_get_stats(memory, &p)) == GTSTORAGE_OK) {
        if (p.held_bytes < 0 || p.in_use_bytes < 0 || p.limit_bytes < 0 || p.hits < 0 ||
            p.misses < 0 || p.evictions < 0) {
          finding("pool %d statistics out of range: held %" PRId64 " in use %" PRId64
                  " limit %" PRId64,
                  memory, p.held_bytes, p.in_use_bytes, p.limit_bytes);
        }
      }
      break;
    }
  }
}

// ---- DLPack
// ---------------------------------------------------------------------------------------

// A tensor the target builds over its own memory (host, or the simulated runtime's).
void op_dlpack_import(reader& r) {
  const int i = free_slot();
  const bool versioned = r.flag();
  auto t = std::make_unique<tracker>();
  t->what = versioned ? "versioned DLPack tensor" : "legacy DLPack tensor";
  layout l;
  l.ndim = r.pick(5);
  pick_shape(r, l.ndim, l.shape);
  // dtype: one of the table, rarely one the library refuses
  const int k = r.pick(18);
  const dtype_info& dt = dtypes[k % 14];
  DLDataType dl_type{dt.dl_code, static_cast<uint8_t>(dt.size * 8), 1};
  bool bad_type = false;
  if (k >= 14) {
    bad_type = true;
    const DLDataType bad[] = {
        {kDLFloat, 64, 2}, {kDLInt, 24, 1}, {kDLBfloat, 16, 1}, {kDLOpaqueHandle, 64, 1}};
    dl_type = bad[k - 14];
  }
  l.itemsize = dt.size;
  const bool null_strides = r.rarely(3);
  std::vector<int64_t> elem_strides(static_cast<size_t>(l.ndim));
  if (null_strides) {
    c_strides(l);
    l.contiguous = true;
  } else {
    pick_strides(r, l, false);
    for (int d = 0; d < l.ndim; ++d) {
      elem_strides[static_cast<size_t>(d)] = l.strides[d] / l.itemsize;
      l.strides[d] = elem_strides[static_cast<size_t>(d)] * l.itemsize;  // elements only
    }
  }
  finish_layout(l);
  // a zero stride of an extent > 1 is a broadcast: refused, like overlaps
  bool broadcast = false;
  for (int d = 0; d < l.ndim; ++d) broadcast = broadcast || (l.shape[d] > 1 && l.strides[d] == 0);
  const mem_kind kinds[] = {mem_kind::host,   mem_kind::host,    mem_kind::device,
                            mem_kind::device, mem_kind::managed, mem_kind::pinned};
  const mem_kind kind = r.choose(kinds);
  const int device = r.pick(2);
  const int32_t types[] = {kDLCPU, kDLExtDev, kDLCUDA, kDLCUDAHost, kDLCUDAManaged, kDLROCM, 99};
  int32_t dev_type = (kind == mem_kind::device) ? kDLExtDev : kDLCPU;
  if (r.rarely(6)) dev_type = r.choose(types);
  int32_t dev_id = kind == mem_kind::device ? device : 0;
  if (r.rarely(10)) dev_id = r.pick(3);
  const bool readonly_flag = versioned && r.rarely(4);
  const bool readonly_opt = r.rarely(6);
  const uint32_t major = versioned && r.rarely(20) ? 2 : 1;
  const bool small_alloc = check_f3 && kind == mem_kind::device && l.elements > 1 && r.rarely(4);
  const int seed = r.pick(97);
  const int64_t misalign = r.rarely(5) ? r.pick(dt.size) : 0;
  const int64_t before = r.pick(3) * 8;  // data points before element 0 by byte_offset
  region g;
  layout span = l;
  if (small_alloc) {
    // F3: element 0 in the memory, the last elements past its end (C order, explicit strides).
    c_strides(l);
    l.contiguous = true;
    finish_layout(l);
    for (int d = 0; d < l.ndim; ++d)
      elem_strides[static_cast<size_t>(d)] = l.strides[d] / l.itemsize;
    span = l;
    span.hi = std::max<int64_t>(l.itemsize, l.hi / 2);
  }
  std::byte* elem0 = lay_out(r, g, kind, device, span, misalign, before, small_alloc);
  if (elem0 == nullptr) return;
  if (small_alloc) {  // the memory as it is (nothing written: the elements do not fit)
    const auto* now = reinterpret_cast<const unsigned char*>(g.base);
    g.image.assign(now, now + g.bytes);
    g.mask.assign(g.bytes, 1);
  } else {
    write_elements(g, elem0, l, dt, seed);
  }
  g.readonly = readonly_flag || readonly_opt;
  g.check_gaps = l.valid() && !small_alloc;
  t->dl_shape.assign(l.shape, l.shape + l.ndim);
  t->dl_strides = elem_strides;
  DLTensor tensor{};
  tensor.data = g.base;
  tensor.byte_offset = static_cast<uint64_t>(elem0 - g.base);
  tensor.device = DLDevice{static_cast<DLDeviceType>(dev_type), dev_id};
  tensor.ndim = l.ndim;
  tensor.dtype = dl_type;
  tensor.shape = t->dl_shape.data();
  tensor.strides = null_strides && !small_alloc ? nullptr : t->dl_strides.data();
  const bool with_deleter = !r.rarely(10);
  t->has_callback = with_deleter;
  t->regions.push_back(std::move(g));
  void* managed = nullptr;
  if (versioned) {
    auto* m = new DLManagedTensorVersioned{};
    m->version = DLPackVersion{major, 0};
    m->manager_ctx = t.get();
    m->deleter = with_deleter ? versioned_deleter : nullptr;
    m->flags = (readonly_flag ? DLPACK_FLAG_BITMASK_READ_ONLY : 0) | (r.flag() ? 2u : 0u) |
               (r.rarely(10) ? 0x100u : 0u);
    m->dl_tensor = tensor;
    t->versioned = m;
    managed = m;
  } else {
    auto* m = new DLManagedTensor{};
    m->dl_tensor = tensor;
    m->manager_ctx = t.get();
    m->deleter = with_deleter ? legacy_deleter : nullptr;
    t->legacy = m;
    managed = m;
  }
  gtstorage_dlpack_options opts = GTSTORAGE_DLPACK_OPTIONS_INIT;
  int64_t halo[2 * max_ndim] = {};
  opts.readonly = readonly_opt ? 1 : 0;
  opts.dims = r.rarely(4) ? r.choose(dims_table) : nullptr;
  if (r.rarely(4)) {
    for (int d = 0; d < 2 * l.ndim; ++d) halo[d] = r.pick(3) == 0 ? 1 : 0;
    opts.halo = halo;
  }
  const bool no_options = !readonly_opt && r.flag();
  int32_t kind_arg = versioned ? GTSTORAGE_DLPACK_VERSIONED : GTSTORAGE_DLPACK_LEGACY;
  if (r.rarely(40)) kind_arg = 2;
  auto* tr = t.get();
  st->trackers.push_back(std::move(t));
  tracef(
      "wrap_dlpack %s ndim=%d dtype=%s%s memory=%s device_type=%d id=%d strides=%s "
      "overlap=%d broadcast=%d ro=%d/%d major=%u%s\n",
      versioned ? "versioned" : "legacy", l.ndim, dt.str, bad_type ? " (bad)" : "", mem_name(kind),
      dev_type, dev_id, null_strides ? "NULL" : "given", l.overlap, broadcast, readonly_flag,
      readonly_opt, major, small_alloc ? " (F3: larger than its memory)" : "");
  gtstorage_handle h = 0;
  const int rc =
      i < 0 ? GTSTORAGE_ERROR_INVALID_ARGUMENT
            : CALL(gtstorage_wrap_dlpack(managed, kind_arg, no_options ? nullptr : &opts, &h));
  if (rc != GTSTORAGE_OK) {
    if (tr->calls != 0) finding("gtstorage_wrap_dlpack failed but called the deleter");
    // Refused: still the caller's, who calls the deleter (or frees what has none).
    auto refused = [&](auto*& tensor) {
      if (with_deleter) {
        tensor->deleter(tensor);
      } else {
        delete tensor;
        tensor = nullptr;
        give_back(*tr);
        tr->calls = 1;
      }
    };
    if (versioned) {
      refused(tr->versioned);
    } else {
      refused(tr->legacy);
    }
    return;
  }
  if (l.elements > 0 && (l.overlap || broadcast)) {
    finding("gtstorage_wrap_dlpack accepted strides whose elements overlap (ndim %d)", l.ndim);
  }
  if (small_alloc) finding("F3: gtstorage_wrap_dlpack accepted a tensor larger than its memory");
  if (major != 1) finding("gtstorage_wrap_dlpack accepted a tensor of DLPack major version 2");
  if (bad_type) finding("gtstorage_wrap_dlpack accepted an unsupported dtype");
  if (dev_type == kDLExtDev && kind == mem_kind::host && l.elements > 0) {
    finding("gtstorage_wrap_dlpack accepted ordinary host memory as kDLExtDev device memory");
  }
  adopt(i, h, new_group(), expectation::of_pattern(seed, dt.kind == 'b'));
}

void op_dlpack_export(reader& r) {
  const int i = pick_slot(r);
  const bool versioned = r.flag();
  const int side = r.rarely(40) ? 2 : r.pick(2);
  if (i < 0 || st->exports.size() >= 6) return;
  slot& s = st->slots[i];
  tracef("to_dlpack%s slot %d side %d\n", versioned ? "_versioned" : "", i, side);
  export_entry e;
  const DLTensor* t = nullptr;
  if (versioned) {
    if (CALL(gtstorage_to_dlpack_versioned(s.h, side, &e.versioned)) != GTSTORAGE_OK) return;
    if (e.versioned == nullptr || e.versioned->deleter == nullptr) {
      finding("gtstorage_to_dlpack_versioned: no tensor or no deleter");
    }
    if (e.versioned->version.major != 1) {
      finding("gtstorage_to_dlpack_versioned: version %u", e.versioned->version.major);
    }
    t = &e.versioned->dl_tensor;
  } else {
    if (CALL(gtstorage_to_dlpack(s.h, side, &e.legacy)) != GTSTORAGE_OK) return;
    if (e.legacy == nullptr || e.legacy->deleter == nullptr) {
      finding("gtstorage_to_dlpack: no tensor or no deleter");
    }
    t = &e.legacy->dl_tensor;
  }
  if (t->ndim != s.ndim) finding("DLPack export: ndim %d of a storage of ndim %d", t->ndim, s.ndim);
  for (int d = 0; d < s.ndim; ++d) {
    if (t->shape[d] != s.shape[d]) finding("DLPack export: extent %d differs", d);
  }
  const int want = side == GTSTORAGE_SIDE_HOST ? kDLCPU : kDLExtDev;
  if (t->device.device_type != want && !(want == kDLExtDev && t->device.device_type == kDLCPU)) {
    finding("DLPack export of side %d says device type %d (the emulated device is never CUDA)",
            side, static_cast<int>(t->device.device_type));
  }
  e.group = s.group;
  e.version = st->group_version[static_cast<size_t>(s.group)];
  e.e = s.single ? s.e : expectation();
  e.kind = s.kind;
  st->exports.push_back(e);
}

void delete_export(export_entry& e) {
  if (e.versioned != nullptr) e.versioned->deleter(e.versioned);
  if (e.legacy != nullptr) e.legacy->deleter(e.legacy);
  e.versioned = nullptr;
  e.legacy = nullptr;
}

void op_export_import(reader& r) {
  const int k = r.u8();
  const bool with_options = r.rarely(3);
  const int i = free_slot();
  if (st->exports.empty() || i < 0) return;
  const size_t x = static_cast<size_t>(k) % st->exports.size();
  export_entry e = st->exports[x];
  device_synchronize();  // as for a wrap of a storage's memory (op_wrap_side)
  gtstorage_dlpack_options opts = GTSTORAGE_DLPACK_OPTIONS_INIT;
  opts.readonly = 1;
  tracef("wrap_dlpack of export %zu\n", x);
  gtstorage_handle h = 0;
  const int rc = e.versioned != nullptr
                     ? CALL(gtstorage_wrap_dlpack(e.versioned, GTSTORAGE_DLPACK_VERSIONED,
                                                  with_options ? &opts : nullptr, &h))
                     : CALL(gtstorage_wrap_dlpack(e.legacy, GTSTORAGE_DLPACK_LEGACY,
                                                  with_options ? &opts : nullptr, &h));
  if (rc != GTSTORAGE_OK) return;  // still ours
  st->exports.erase(st->exports.begin() + static_cast<std::ptrdiff_t>(x));
  const bool fresh = st->group_version[static_cast<size_t>(e.group)] == e.version;
  adopt(i, h, e.group, fresh ? e.e : expectation());
}

void op_export_delete(reader& r) {
  const int k = r.u8();
  if (st->exports.empty()) return;
  const size_t x = static_cast<size_t>(k) % st->exports.size();
  tracef("delete export %zu\n", x);
  delete_export(st->exports[x]);
  st->exports.erase(st->exports.begin() + static_cast<std::ptrdiff_t>(x));
}

// ---- Handles, queries ---------------------------------------------------------------------------

void op_release(reader& r) {
  const int i = pick_slot(r);
  if (i < 0) return;
  slot& s = st->slots[i];
  tracef("release slot %d (handle %" PRIu64 ")\n", i, s.h);
  MUST(gtstorage_release(s.h));
  const gtstorage_handle h = s.h;
  if (--s.refs == 0) s = slot();
  drop_ref(h);
  release_owners();
}

void op_retain(reader& r) {
  const int i = pick_slot(r);
  if (i < 0) return;
  slot& s = st->slots[i];
  tracef("retain slot %d\n", i);
  MUST(gtstorage_retain(s.h));
  ++s.refs;
  add_ref(s.h);
  int64_t count = 0;
  MUST(gtstorage_refcount(s.h, &count));
  if (count != st->refs[s.h]) {
    finding("gtstorage_refcount says %" PRId64 ", the target holds %d references", count,
            st->refs[s.h]);
  }
}

void op_query(reader& r) {
  const int i = pick_slot(r);
  const int side = r.rarely(30) ? -1 : r.pick(2);
  const bool bad_size = r.rarely(30);
  if (i < 0) return;
  slot& s = st->slots[i];
  gtstorage_interface_info info = GTSTORAGE_INTERFACE_INFO_INIT;
  if (bad_size) info.struct_size = 16;
  tracef("interface slot %d side %d\n", i, side);
  const int rc = CALL(gtstorage_interface(s.h, side, &info));
  int32_t has = -1;
  const int rc_has = CALL(gtstorage_has_side(s.h, side, &has));
  void* data = nullptr;
  const int rc_data = CALL(gtstorage_data(s.h, side, &data));
  gtstorage_transfer_stats ts = GTSTORAGE_TRANSFER_STATS_INIT;
  MUST(gtstorage_get_transfer_stats(s.h, &ts));
  if (side != 0 && side != 1) return;
  if (rc_has != GTSTORAGE_OK) finding("gtstorage_has_side failed for a valid side");
  const bool present = side == 0 ? s.has_host : s.has_device;
  if ((has != 0) != present) finding("gtstorage_has_side changed its answer");
  if (!present) {
    if (rc_data != GTSTORAGE_ERROR_NO_SUCH_BUFFER ||
        (!bad_size && rc != GTSTORAGE_ERROR_NO_SUCH_BUFFER)) {
      finding("side %d is absent but interface/data answered %d/%d", side, rc, rc_data);
    }
    return;
  }
  if (rc_data != GTSTORAGE_OK) finding("gtstorage_data failed on a present side");
  if (bad_size) {
    if (rc != GTSTORAGE_ERROR_INVALID_ARGUMENT) finding("interface took struct_size 16");
    return;
  }
  if (rc != GTSTORAGE_OK) return;
  if (info.data != data) finding("interface and data disagree on the address");
  if (check_f1 && info.data == nullptr) finding("F1: interface reports data = NULL");
  if (static_cast<int>(info.ndim) != s.ndim) finding("interface: ndim changed");
  int64_t n = info.itemsize;
  for (int d = 0; d < s.ndim; ++d) {
    if (info.shape[d] != s.shape[d]) finding("interface: extent %d changed", d);
    n *= info.shape[d];
  }
  if (info.nbytes != n) {
    finding("interface: nbytes %" PRId64 " for %" PRId64 " bytes of elements", info.nbytes, n);
  }
  if (info.allocation != nullptr && info.data != nullptr &&
      static_cast<const std::byte*>(info.data) - static_cast<const std::byte*>(info.allocation) !=
          info.byte_offset) {
    finding("interface: byte_offset %" PRId64 " is not data - allocation", info.byte_offset);
  }
  if (info.sync_state < 0 || info.sync_state > 2 || info.side != side) {
    finding("interface: sync_state %d side %d", info.sync_state, info.side);
  }
  if (info.device_type != kDLCPU && info.device_type != kDLExtDev) {
    finding("interface: device type %d on the emulated device", info.device_type);
  }
}

void op_stale(reader& r) {
  const int what = r.pick(6);
  gtstorage_handle h = 0;
  if (!st->dead.empty() && r.flag()) h = st->dead[static_cast<size_t>(r.u8()) % st->dead.size()];
  if (r.rarely(8)) h = ~uint64_t(0);
  int32_t out = 0;
  int rc = 0;
  tracef("stale handle %" PRIu64 " (%d)\n", h, what);
  switch (what) {
    case 0:
      rc = CALL(gtstorage_release(h));
      break;
    case 1:
      rc = CALL(gtstorage_retain(h));
      break;
    case 2:
      rc = CALL(gtstorage_get_sync_state(h, &out));
      break;
    case 3:
      rc = CALL(gtstorage_fill_double(h, 1.0));
      break;
    case 4:
      rc = CALL(gtstorage_sync_to(h, GTSTORAGE_SIDE_DEVICE, 0));
      break;
    default: {
      const int i = pick_slot(r);
      if (i < 0) return;
      rc = CALL(gtstorage_copy(st->slots[i].h, h));
      break;
    }
  }
  if (rc != GTSTORAGE_ERROR_INVALID_HANDLE) {
    finding("a released handle (%" PRIu64 ") gave %s", h, gtstorage_status_name(rc));
  }
}

void op_plan(reader& r) {
  create_args a;
  pick_create(r, a);
  gtstorage_plan_info p = GTSTORAGE_PLAN_INFO_INIT;
  tracef("plan\n");
  if (CALL(gtstorage_plan(&a.o, &p)) == GTSTORAGE_OK) {
    if (p.allocation_bytes != p.byte_offset + p.padded_bytes || p.byte_offset < 0 ||
        p.padded_bytes < 0) {
      finding("plan: allocation_bytes %" PRId64 " != byte_offset %" PRId64 " + padded %" PRId64,
              p.allocation_bytes, p.byte_offset, p.padded_bytes);
    }
  }
  int32_t count = 0;
  MUST(gtstorage_preset_count(&count));
  gtstorage_preset_info info = GTSTORAGE_PRESET_INFO_INIT;
  CALL(gtstorage_preset_at(r.pick(count + 2) - 1, &info));
  CALL(gtstorage_preset_find(r.choose(presets), &info));
}

void op_stats(reader& r) {
  gtstorage_stats s = GTSTORAGE_STATS_INIT;
  const uint32_t sizes[] = {sizeof s, sizeof s, 72, 40};
  s.struct_size = r.choose(sizes);
  const int rc = CALL(gtstorage_get_stats(&s));
  if (s.struct_size == 40) {
    if (rc != GTSTORAGE_ERROR_INVALID_ARGUMENT) finding("get_stats took struct_size 40");
    return;
  }
  if (rc != GTSTORAGE_OK) finding("gtstorage_get_stats failed");
  if (s.live_handles != static_cast<int64_t>(st->refs.size())) {
    finding("gtstorage_get_stats: %" PRId64 " live handles, the target holds %zu", s.live_handles,
            st->refs.size());
  }
}

// ---- The simulated runtime
// ------------------------------------------------------------------------

void op_stream(reader& r) {
  const int k = r.pick(4);
  const bool destroy = r.rarely(3);
  const int device = r.pick(2);
  const bool non_blocking = r.flag();
  target_stream& t = st->streams[k];
  if (destroy) {
    if (!t.live) return;
    const uint64_t v = reinterpret_cast<uint64_t>(t.s);
    for (const auto& [h, s] : st->stream_of) {
      if (s == v) return;  // a handle uses it: the application keeps it alive (the header says)
    }
    tracef("destroy stream %d\n", k);
    if (sim::cudaStreamDestroy(t.s) != sim::cudaSuccess) (void)sim::cudaGetLastError();
    t.live = false;  // t.s stays: a destroyed stream for the calls that take any stream
    return;
  }
  if (t.live) return;
  const int cur = current_sim_device();
  sim::cudaSetDevice(device);
  sim::cudaStream_t s = nullptr;
  const sim::cudaError_t e = sim::cudaStreamCreateWithFlags(
      &s, non_blocking ? sim::cudaStreamNonBlocking : sim::cudaStreamDefault);
  sim::cudaSetDevice(cur);
  tracef("create stream %d on device %d%s\n", k, device, non_blocking ? " (non-blocking)" : "");
  if (e != sim::cudaSuccess) {
    (void)sim::cudaGetLastError();
    return;
  }
  t.s = s;
  t.device = device;
  t.live = true;
}

bool backend_switched = false;

// The experimental backend switch (refused while device storages live) and the name query.
void switch_backend(reader& r) {
  const char* const names[] = {"emulated", "none", "auto", "cuda", "hip", "bogus", nullptr};
  const char* name = r.choose(names);
  tracef("set_device_backend %s\n", name != nullptr ? name : "NULL");
  if (CALL(gtstorage_set_device_backend(name)) == GTSTORAGE_OK) backend_switched = true;
  char buf[16] = {};
  const size_t sizes[] = {sizeof buf, 1, 4};
  CALL(gtstorage_get_device_backend(buf, r.choose(sizes)));
}

void op_set_device(reader& r) {
  if (r.rarely(6)) {
    switch_backend(r);
    return;
  }
  const int32_t ids[] = {0, 1, 0, 1, -1, 2};
  const int32_t id = r.choose(ids);
  tracef("set_device %d\n", id);
  const int rc = CALL(gtstorage_set_device(id));
  if ((id == 0 || id == 1) && rc != GTSTORAGE_OK && !st->injected && !backend_switched) {
    finding("set_device failed");
  }
  int32_t got = -1;
  if (CALL(gtstorage_get_device(&got)) == GTSTORAGE_OK && rc == GTSTORAGE_OK && got != id) {
    finding("get_device says %d after set_device(%d)", got, id);
  }
}

void op_inject(reader& r) {
  struct injection {
    ctl::call_class c;
    sim::cudaError_t error;
    bool async;
  };
  const injection table[] = {
      {ctl::call_class::alloc, sim::cudaErrorMemoryAllocation, false},
      {ctl::call_class::memcpy, sim::cudaErrorInvalidValue, false},
      {ctl::call_class::memcpy, sim::cudaErrorIllegalAddress, true},
      {ctl::call_class::memset, sim::cudaErrorInvalidValue, false},
      {ctl::call_class::launch, sim::cudaErrorLaunchOutOfResources, false},
      {ctl::call_class::launch, sim::cudaErrorIllegalAddress, true},
      {ctl::call_class::stream_create, sim::cudaErrorMemoryAllocation, false},
      {ctl::call_class::event_create, sim::cudaErrorMemoryAllocation, false},
      {ctl::call_class::event_record, sim::cudaErrorInvalidResourceHandle, false},
      {ctl::call_class::prefetch, sim::cudaErrorInvalidValue, false},
  };
  const int k = r.pick(12);
  const int nth = 1 + r.pick(6);
  if (k >= 10) {
    // A device fails for good (as after a faulting kernel): every later call on it returns the
    // error, and what was queued there never runs. (A synchronization that fails while the work
    // it waits for still runs later, which the runtime's synchronous injection into the
    // "synchronize" class plays, cannot happen on a GPU: a failed wait leaves memory the caller
    // owns written after the call returned. Not injected here.)
    const int device = k - 10;
    tracef("inject: device %d fails for good\n", device);
    ctl::set_sticky_error(device, sim::cudaErrorLaunchFailure);
    st->injected = true;
    return;
  }
  const injection& j = table[k];
  tracef("inject: call class %d fails at call %d (%s)\n", static_cast<int>(j.c), nth,
         j.async ? "when it runs" : "at once");
  ctl::fail_nth(j.c, nth, j.error, j.async);
  st->injected = true;
}

// ---- One input
// ------------------------------------------------------------------------------------

struct counts {
  int64_t handles, buffers, host_bytes, device_bytes, blocks, refused;
};

counts measure() {
  gtstorage_stats s = GTSTORAGE_STATS_INIT;
  MUST(gtstorage_get_stats(&s));
  const ctl::live_memory m = ctl::live_allocations();
  return {s.live_handles, s.live_buffers, s.host_bytes, s.device_bytes, m.blocks, m.free_refused};
}

// Releases everything the input left, lets the devices finish and the pools go, and checks that
// nothing is left.
void finish(const counts& start) {
  for (export_entry& e : st->exports) delete_export(e);
  st->exports.clear();
  for (int i = 0; i < max_slots; ++i) {
    if (st->slots[i].live()) release_slot(i);
  }
  release_owners();
  if (!st->refs.empty()) {
    finding(
        "%zu handles still referenced after every slot was released (a wrap whose release "
        "callback never ran keeps its storage)",
        st->refs.size());
  }
  if (st->injected) ctl::clear_failures();
  device_synchronize();
  (void)sim::cudaSetDevice(0);
  (void)sim::cudaGetLastError();
  MUST(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
  if (st->injected || backend_switched) MUST(gtstorage_set_device_backend("emulated"));
  backend_switched = false;

  for (auto& t : st->trackers) {
    if (!t->has_callback && t->calls == 0) {  // no callback: the memory is the target's again
      t->calls = 1;
      give_back(*t);
      if (t->legacy != nullptr) delete t->legacy;
      if (t->versioned != nullptr) delete t->versioned;
      t->legacy = nullptr;
      t->versioned = nullptr;
    }
    if (t->calls != 1) {
      finding("%s: release callback called %d times after every handle was released",
              t->what.c_str(), t->calls);
    }
  }
  const counts end = measure();
  if (end.handles != start.handles || end.buffers != start.buffers) {
    finding("%" PRId64 " handles and %" PRId64 " buffers live after the input (%" PRId64
            " and %" PRId64 " before)",
            end.handles, end.buffers, start.handles, start.buffers);
  }
  if (end.host_bytes != start.host_bytes || end.device_bytes != start.device_bytes) {
    finding("host/device bytes %" PRId64 "/%" PRId64 " after the input, %" PRId64 "/%" PRId64
            " before",
            end.host_bytes, end.device_bytes, start.host_bytes, start.device_bytes);
  }
  // A device that failed for good (an injected sticky error) refuses frees, as a GPU does.
  if (end.blocks - end.refused != start.blocks - start.refused) {
    finding("%" PRId64 " runtime blocks live after the input (%" PRId64
            " refused by a failed device), %" PRId64 " before",
            end.blocks, end.refused - start.refused, start.blocks);
  }
  for (int32_t m = 0; m < 3; ++m) {
    gtstorage_pool_stats p = GTSTORAGE_POOL_STATS_INIT;
    MUST(gtstorage_pool_get_stats(m, &p));
    if (p.held_bytes != 0 || p.in_use_bytes != 0) {
      finding("pool %d: %" PRId64 " bytes kept and %" PRId64
              " in use after every storage was released and the pools were trimmed",
              m, p.held_bytes, p.in_use_bytes);
    }
  }
  const std::vector<std::string> reports = ctl::take_memcheck_reports();
  if (!reports.empty()) {
    finding("the simulated runtime's memcheck: %s (%zu reports)", reports.front().c_str(),
            reports.size());
  }
  for (target_stream& t : st->streams) {
    if (t.live) (void)sim::cudaStreamDestroy(t.s);
    t = target_stream();
  }
  (void)sim::cudaGetLastError();
  // Back to the state every input starts from.
  for (int32_t m = 0; m < 3; ++m) {
    MUST(gtstorage_pool_set_limit(m, default_limits[static_cast<size_t>(m)].limit_bytes));
  }
  MUST(gtstorage_set_device(0));
}

// The operations by their code (an input's byte before each operation's arguments, modulo 33:
// the corpus and the regression inputs are written in these codes).
using operation = void (*)(reader&);
const operation operations[33] = {
    op_create,
    [](reader& a) { op_wrap(a, false); },
    [](reader& a) { op_wrap(a, true); },
    op_wrap_side,
    op_slice,
    op_transpose,
    op_domain_view,
    op_copy,
    op_copy_sides,
    op_copy_from_array,
    op_read,
    op_fill,
    [](reader& a) { op_sync_to(a, false); },
    [](reader& a) { op_sync_to(a, true); },
    op_modify,
    op_sync_misc,
    op_wait_stream,
    op_set_stream,
    op_pool,
    op_dlpack_import,
    op_dlpack_export,
    op_export_import,
    op_export_delete,
    op_release,
    op_retain,
    op_query,
    op_stream,
    op_set_device,
    op_inject,
    [](reader&) {
      tracef("device synchronize\n");
      device_synchronize();
    },
    op_stale,
    op_plan,
    op_stats,
};

void run(const uint8_t* data, size_t size) {
  reader r(data, size);
  const uint8_t head = r.u8();
  ctl::set_execution((head & 1) != 0);
  ctl::set_schedule(head >> 1, true);
  (void)ctl::take_memcheck_reports();
  state s;
  st = &s;
  const counts start = measure();
  while (!r.empty() && s.ops < max_ops) {
    ++s.ops;
    const int code = r.u8() % 33;
    const size_t length = r.u8();
    reader args = r.take(length);
    operations[code](args);
    release_owners();  // a release or an export's deleter may have run wrap callbacks
  }
  // The values once more, after everything: what is known must still hold.
  for (int i = 0; i < max_slots; ++i) {
    if (s.slots[i].live() && s.slots[i].e.kind != expectation::none) verify_slot(i, "at the end");
  }
  finish(start);
  tracef("input done: %d operations\n", s.ops);
  st = nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  trace = std::getenv("GTSTORAGE_FUZZ_TRACE") != nullptr;
  env_switch("GTSTORAGE_FUZZ_AVOID_F6", avoid_f6);
  env_switch("GTSTORAGE_FUZZ_CHECK_F1", check_f1);
  env_switch("GTSTORAGE_FUZZ_CHECK_F3", check_f3);
  env_switch("GTSTORAGE_FUZZ_CHECK_F8", check_f8);
  // The simulated machine's defaults (2 devices, a current driver) and the emulated backend.
  ctl::set_machine(ctl::machine{});
  ctl::clear_failures();
  // A fault in a guard page is explained (which allocation) before ASan reports it.
  ctl::set_fault_reports(true);
  gts::device::set_emulated_device_count(2);
  if (gtstorage_set_device_backend("emulated") != GTSTORAGE_OK) {
    std::fprintf(stderr, "fuzz_capi: cannot select the emulated device: %s\n",
                 gtstorage_last_error());
    std::abort();
  }
  sim::cudaSetDevice(0);
  // Two presets of the target's own (registered once: presets cannot be removed).
  gtstorage_preset_info p = GTSTORAGE_PRESET_INFO_INIT;
  std::snprintf(p.name, sizeof p.name, "fuzz:cpu_odd");
  p.alignment = 3;
  p.base_layout[0] = 1;
  p.base_layout[1] = 2;
  p.base_layout[2] = 0;
  if (gtstorage_preset_register(&p) != GTSTORAGE_OK) std::abort();
  std::snprintf(p.name, sizeof p.name, "fuzz:gpu_bytes");
  p.alignment = 48;
  p.alignment_unit = GTSTORAGE_ALIGN_BYTES;
  p.device = GTSTORAGE_DEVICE_GPU;
  p.rule = GTSTORAGE_RULE_FORTRAN_ORDER;
  if (gtstorage_preset_register(&p) != GTSTORAGE_OK) std::abort();
  for (int32_t m = 0; m < 3; ++m) {
    gtstorage_pool_stats s = GTSTORAGE_POOL_STATS_INIT;
    if (gtstorage_pool_get_stats(m, &s) != GTSTORAGE_OK) std::abort();
    default_limits.push_back(s);
  }
  std::printf("fuzz_capi: known bugs kept out or unchecked: %s%s%s%s\n",
              avoid_f6 ? "F6 (async copy_sides waited for) " : "",
              check_f1 ? "" : "F1 (NULL descriptor data) ", check_f3 ? "" : "F3 (DLPack extent) ",
              check_f8 ? "" : "F8 (dead stream in set_stream) ");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  run(data, size);
  return 0;
}
