// The CUDA/HIP backends' copy and fill logic, run on the host. transfer_engine.hpp (which
// memcpy / 2-D memcpy / staging / kernel runs a request) is instantiated with a simulated
// runtime whose "kernels" execute the real per-thread step functions of gpu_kernels.hpp for
// every block and thread (the transpose in its two barrier-separated phases). So the index
// arithmetic of every kernel and every staging path is checked on machines without a GPU,
// against random layouts, including that nothing outside a destination's elements is written.
#define GTS_GPU_NS sim_impl
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "device/gpu/gpu_kernels.hpp"
#include "device/gpu/transfer_engine.hpp"
#include "test_support.hpp"

using gts::strided_array;
using gts::device::direction;
using gts::device::detail::copy_plan;
using gts::device::detail::fill_plan;
namespace sim = gts::device::sim_impl;

namespace {

// What the simulated runtime was asked to do (to check which paths the tests reached).
struct op_log {
  std::map<std::string, int> ops;
  op_log* also = nullptr;  ///< A log that accumulates every op (coverage over all tests).
  void add(const std::string& s) {
    ++ops[s];
    if (also != nullptr) also->add(s);
  }
  int get(const std::string& s) const {
    auto it = ops.find(s);
    return it == ops.end() ? 0 : it->second;
  }
};

class sim_rt {
 public:
  explicit sim_rt(op_log& log, int64_t max_pitch = INT64_MAX) : log_(log), max_pitch_(max_pitch) {}

  void memcpy(void* dst, const void* src, std::size_t bytes) {
    log_.add("memcpy");
    std::memcpy(dst, src, bytes);
  }
  bool memcpy_2d(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                 std::size_t width, std::size_t height) {
    if (static_cast<int64_t>(dpitch) > max_pitch_ || static_cast<int64_t>(spitch) > max_pitch_) {
      log_.add("memcpy_2d_refused");
      return false;
    }
    log_.add("memcpy_2d");
    for (std::size_t r = 0; r < height; ++r) {
      std::memcpy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch,
                  width);
    }
    return true;
  }
  void memset(void* dst, unsigned char v, std::size_t bytes) {
    log_.add("memset");
    std::memset(dst, v, bytes);
  }
  void wait() { log_.add("wait"); }

  // Device temporaries: 256-byte aligned like cudaMalloc, poisoned like fresh device memory.
  class temp {
   public:
    explicit temp(std::size_t n) : buf_(n + 256, std::byte{0xEE}) {}
    [[nodiscard]] std::byte* get() {
      auto p = reinterpret_cast<uintptr_t>(buf_.data());
      return buf_.data() + ((256 - p % 256) % 256);
    }

   private:
    std::vector<std::byte> buf_;
  };
  temp device_temp(std::size_t bytes) {
    log_.add("temp");
    return temp(bytes);
  }

  // A GPU faults on a misaligned access where the host does not: every address a kernel
  // forms from a plan must be a multiple of the plan's unit.
  static bool aligned(const void* base, const int64_t* strides, int ndim, int unit) {
    if (reinterpret_cast<uintptr_t>(base) % static_cast<uintptr_t>(unit) != 0) return false;
    for (int d = 0; d < ndim; ++d) {
      if (strides[d] % unit != 0) return false;
    }
    return true;
  }

  void launch_copy(const copy_plan& p) {
    if (p.count == 0) return;
    CHECK_MSG(aligned(p.dst, p.dst_strides, p.ndim, p.unit) &&
                  aligned(p.src, p.src_strides, p.ndim, p.unit),
              "misaligned copy plan, unit %d", p.unit);
    switch (p.unit) {
      case 1:
        copy_t<sim::word<1>::type>(p);
        break;
      case 2:
        copy_t<sim::word<2>::type>(p);
        break;
      case 4:
        copy_t<sim::word<4>::type>(p);
        break;
      case 8:
        copy_t<sim::word<8>::type>(p);
        break;
      default:
        copy_t<sim::word<16>::type>(p);
        break;
    }
    log_.add("unit" + std::to_string(p.unit));
  }

  void launch_fill(const fill_plan& p) {
    if (p.count == 0) return;
    CHECK_MSG(p.misaligned || aligned(p.dst, p.strides, p.ndim, p.unit),
              "misaligned fill plan, unit %d", p.unit);
    const sim::launch_choice c = sim::choose_fill(p);
    if (c.kind == sim::kernel_kind::bytes) {
      log_.add("fill_bytes");
      sim::kbytes v{};
      std::memcpy(v.b, p.pattern, sizeof v.b);
      for (int64_t i = 0; i < c.total; ++i) sim::fill_bytes_element(c.k, p.dst, v, p.itemsize, i);
      return;
    }
    switch (p.unit) {
      case 1:
        fill_t<sim::word<1>::type>(p, c);
        break;
      case 2:
        fill_t<sim::word<2>::type>(p, c);
        break;
      case 4:
        fill_t<sim::word<4>::type>(p, c);
        break;
      case 8:
        fill_t<sim::word<8>::type>(p, c);
        break;
      default:
        fill_t<sim::word<16>::type>(p, c);
        break;
    }
  }

 private:
  template <class T>
  void copy_t(const copy_plan& p) {
    const sim::launch_choice c = sim::choose_copy(p);
    switch (c.kind) {
      case sim::kernel_kind::rows:
        log_.add("rows");
        for (int64_t b = 0; b < c.total; ++b) {
          for (unsigned tid = 0; tid < unsigned(sim::row_threads); ++tid) {
            sim::copy_rows_step<T>(c.k, p.dst, p.src, c.rows, b, tid);
          }
        }
        break;
      case sim::kernel_kind::transpose: {
        log_.add("transpose");
        std::vector<T> storage(sim::tile_dim * (sim::tile_dim + 1));
        auto* buf = reinterpret_cast<T(*)[sim::tile_dim + 1]>(storage.data());
        for (int64_t t = 0; t < c.total; ++t) {
          const sim::tile_pos tp = sim::transpose_tile(c.k, c.sd, c.tiles_d, c.tiles_s, t);
          // Poison the tile: a store reading a slot no load wrote would show up.
          std::memset(static_cast<void*>(storage.data()), 0xCD, storage.size() * sizeof(T));
          for (unsigned ty = 0; ty < unsigned(sim::tile_rows); ++ty) {
            for (unsigned tx = 0; tx < unsigned(sim::tile_dim); ++tx) {
              sim::transpose_load<T>(c.k, p.src, c.sd, tp, tx, ty, buf);
            }
          }
          for (unsigned ty = 0; ty < unsigned(sim::tile_rows); ++ty) {
            for (unsigned tx = 0; tx < unsigned(sim::tile_dim); ++tx) {
              sim::transpose_store<T>(c.k, p.dst, c.sd, tp, tx, ty, buf);
            }
          }
        }
        break;
      }
      default:
        log_.add("elements");
        for (int64_t i = 0; i < c.total; ++i) sim::copy_element<T>(c.k, p.dst, p.src, i);
        break;
    }
  }

  template <class T>
  void fill_t(const fill_plan& p, const sim::launch_choice& c) {
    T value;
    std::memcpy(&value, p.pattern, sizeof(T));
    if (c.kind == sim::kernel_kind::rows) {
      log_.add("fill_rows");
      for (int64_t b = 0; b < c.total; ++b) {
        for (unsigned tid = 0; tid < unsigned(sim::row_threads); ++tid) {
          sim::fill_rows_step<T>(c.k, p.dst, value, c.rows, b, tid);
        }
      }
    } else {
      log_.add("fill_elements");
      for (int64_t i = 0; i < c.total; ++i) sim::fill_element<T>(c.k, p.dst, value, i);
    }
  }

  op_log& log_;
  int64_t max_pitch_;
};

// An aligned buffer standing in for host or device memory.
struct buffer {
  std::vector<std::byte> raw;
  std::byte* ptr;
  int64_t bytes;
  buffer(int64_t n, unsigned char v)
      : raw(static_cast<std::size_t>(n + 256), std::byte{v}), bytes(n) {
    auto p = reinterpret_cast<uintptr_t>(raw.data());
    ptr = raw.data() + ((256 - p % 256) % 256);
  }
};

// Random round trips through the engine, every direction, every unit size.
void random_copies(op_log& log, int trials, unsigned seed, bool misaligned) {
  std::mt19937_64 rng(seed);
  const int sizes[] = {1, 2, 4, 8, 16};
  for (int t = 0; t < trials; ++t) {
    const int itemsize = sizes[rng() % 5];
    const int ndim = 1 + static_cast<int>(rng() % 4);
    int64_t shape[gts::max_ndim];
    int64_t total = 1;
    for (int d = 0; d < ndim; ++d) {
      // Mix short and long extents so rows (>=128) and tiles (>=16) both occur.
      const int64_t ext = rng() % 3 == 0 ? 128 + static_cast<int64_t>(rng() % 200)
                                         : 1 + static_cast<int64_t>(rng() % 40);
      shape[d] = total * ext > 60000 ? 1 + static_cast<int64_t>(rng() % 3) : ext;
      total *= shape[d];
    }
    test::layout_options o;
    o.align = misaligned ? 1 : itemsize;
    const test::layout la = test::random_layout(rng, ndim, shape, itemsize, o);
    const test::layout l1 = test::random_layout(rng, ndim, shape, itemsize, o);
    const test::layout l2 = test::random_layout(rng, ndim, shape, itemsize, o);
    const test::layout lr = test::random_layout(rng, ndim, shape, itemsize, o);
    buffer a(la.bytes, 0x11), d1(l1.bytes, 0x33), d2(l2.bytes, 0x44), r(lr.bytes, 0x22);
    test::write_pattern(a.ptr, la, itemsize, seed + t);
    sim_rt rt(log, rng() % 4 == 0 ? 64 : INT64_MAX);
    gts::device::detail::engine_copy(rt, l1.at(d1.ptr, itemsize), la.at(a.ptr, itemsize),
                                     direction::host_to_device);
    gts::device::detail::engine_copy(rt, l2.at(d2.ptr, itemsize), l1.at(d1.ptr, itemsize),
                                     direction::device_to_device);
    gts::device::detail::engine_copy(rt, lr.at(r.ptr, itemsize), l2.at(d2.ptr, itemsize),
                                     direction::device_to_host);
    const int64_t b1 = test::verify(d1.ptr, l1, itemsize, seed + t, 0x33);
    const int64_t b2 = test::verify(d2.ptr, l2, itemsize, seed + t, 0x44);
    const int64_t br = test::verify(r.ptr, lr, itemsize, seed + t, 0x22);
    CHECK_MSG(
        b1 == 0 && b2 == 0 && br == 0,
        "trial %d (seed %u): itemsize %d ndim %d shape %lld,%lld,%lld,%lld: bad %lld/%lld/%lld", t,
        seed, itemsize, ndim, static_cast<long long>(shape[0]),
        static_cast<long long>(ndim > 1 ? shape[1] : 0),
        static_cast<long long>(ndim > 2 ? shape[2] : 0),
        static_cast<long long>(ndim > 3 ? shape[3] : 0), static_cast<long long>(b1),
        static_cast<long long>(b2), static_cast<long long>(br));
  }
}

void random_fills(op_log& log, int trials, unsigned seed, bool misaligned) {
  std::mt19937_64 rng(seed);
  const int sizes[] = {1, 2, 4, 8, 16};
  for (int t = 0; t < trials; ++t) {
    const int itemsize = sizes[rng() % 5];
    const int ndim = 1 + static_cast<int>(rng() % 4);
    int64_t shape[gts::max_ndim];
    int64_t total = 1;
    for (int d = 0; d < ndim; ++d) {
      const int64_t ext = rng() % 3 == 0 ? 128 + static_cast<int64_t>(rng() % 1200)
                                         : 1 + static_cast<int64_t>(rng() % 40);
      shape[d] = total * ext > 100000 ? 1 + static_cast<int64_t>(rng() % 3) : ext;
      total *= shape[d];
    }
    test::layout_options o;
    o.align = misaligned ? 1 : itemsize;
    const test::layout l = test::random_layout(rng, ndim, shape, itemsize, o);
    unsigned char value[16];
    const bool same = rng() % 4 == 0;
    for (int b = 0; b < 16; ++b) value[b] = same ? 0x7E : static_cast<unsigned char>(rng());
    buffer d(l.bytes, 0x5C);
    sim_rt rt(log);
    gts::device::detail::engine_fill(rt, l.at(d.ptr, itemsize), value);
    const int64_t bad = test::verify_fill(d.ptr, l, itemsize, value, 0x5C);
    CHECK_MSG(bad == 0, "fill trial %d: itemsize %d ndim %d: %lld bad bytes", t, itemsize, ndim,
              static_cast<long long>(bad));
  }
}

strided_array make(std::byte* p, int itemsize, std::initializer_list<int64_t> shape,
                   std::initializer_list<int64_t> strides) {
  strided_array a;
  a.data = p;
  a.ndim = static_cast<int>(shape.size());
  int d = 0;
  for (int64_t s : shape) a.shape[d++] = s;
  d = 0;
  for (int64_t s : strides) a.strides[d++] = s;
  a.type = gts::dtype{'f', itemsize};
  return a;
}

// Chosen shapes whose path is known: the fast paths must be taken where they apply.
void path_choices(op_log& total) {
  buffer h(1 << 20, 0), dv(1 << 20, 0), dv2(1 << 20, 0);
  {  // Same dense layout both sides: one memcpy, widened.
    op_log log;
    log.also = &total;
    sim_rt rt(log);
    gts::device::detail::engine_copy(rt, make(dv.ptr, 8, {10, 20, 30}, {4800, 240, 8}),
                                     make(h.ptr, 8, {10, 20, 30}, {4800, 240, 8}),
                                     direction::host_to_device);
    CHECK(log.get("memcpy") == 1 && log.ops.size() == 1);
  }
  {  // Padded 3-D, same layout, host -> device: 2-D memcpy per outer index, no kernel.
    op_log log;
    log.also = &total;
    sim_rt rt(log);
    gts::device::detail::engine_copy(rt, make(dv.ptr, 8, {10, 20, 30}, {20 * 32 * 8, 32 * 8, 8}),
                                     make(h.ptr, 8, {10, 20, 30}, {20 * 32 * 8, 32 * 8, 8}),
                                     direction::host_to_device);
    CHECK(log.get("memcpy_2d") == 1);  // Outer dims merge: one call.
    CHECK(log.get("rows") == 0 && log.get("temp") == 0);
  }
  {  // A 3-D view of a padded parent: 2-D memcpy for each of the 10 outer planes.
    op_log log;
    log.also = &total;
    sim_rt rt(log);
    gts::device::detail::engine_copy(rt, make(dv.ptr, 8, {10, 20, 30}, {24 * 32 * 8, 32 * 8, 8}),
                                     make(h.ptr, 8, {10, 20, 30}, {24 * 32 * 8, 32 * 8, 8}),
                                     direction::device_to_host);
    CHECK(log.get("memcpy_2d") == 10);
  }
  {  // Pitch beyond the copy engine's limit: 2-D memcpy refused, staged upload instead.
    op_log log;
    log.also = &total;
    sim_rt rt(log, 64);
    const test::layout l = [] {
      test::layout x;
      x.ndim = 2;
      x.shape[0] = 10;
      x.shape[1] = 5;
      x.strides[0] = 96;
      x.strides[1] = 8;
      x.bytes = 10 * 96;
      return x;
    }();
    buffer src(l.bytes, 0x11), dst(l.bytes, 0x22);
    test::write_pattern(src.ptr, l, 8, 5u);
    gts::device::detail::engine_copy(rt, l.at(dst.ptr, 8), l.at(src.ptr, 8),
                                     direction::host_to_device);
    CHECK(log.get("memcpy_2d_refused") == 1 && log.get("temp") == 1);
    CHECK(test::verify(dst.ptr, l, 8, 5u, 0x22) == 0);
  }
  {  // Layout change host -> device: dense upload, then a device transpose, no host transpose.
    op_log log;
    log.also = &total;
    sim_rt rt(log);
    gts::device::detail::engine_copy(rt, make(dv.ptr, 8, {64, 48}, {8, 64 * 8}),
                                     make(h.ptr, 8, {64, 48}, {48 * 8, 8}),
                                     direction::host_to_device);
    CHECK(log.get("temp") == 1 && log.get("memcpy") == 1 && log.get("transpose") == 1);
    CHECK(log.get("wait") == 0);  // Dense source: nothing waits for the host.
  }
  {  // Layout change device -> device: the tiled transpose, 8-byte units.
    op_log log;
    log.also = &total;
    sim_rt rt(log);
    gts::device::detail::engine_copy(rt, make(dv.ptr, 8, {40, 50, 60}, {8, 40 * 8, 2000 * 8}),
                                     make(dv2.ptr, 8, {40, 50, 60}, {3000 * 8, 60 * 8, 8}),
                                     direction::device_to_device);
    CHECK(log.get("transpose") == 1 && log.get("unit8") == 1);
  }
  {  // Same inner dim, different outer order: rows kernel, widened to 16-byte units.
    op_log log;
    log.also = &total;
    sim_rt rt(log);
    gts::device::detail::engine_copy(rt, make(dv.ptr, 4, {8, 9, 256}, {256 * 4, 8 * 256 * 4, 4}),
                                     make(dv2.ptr, 4, {8, 9, 256}, {9 * 256 * 4, 256 * 4, 4}),
                                     direction::device_to_device);
    CHECK(log.get("rows") == 1 && log.get("unit16") == 1);
  }
  {  // Dense fill with a byte pattern: memset; with a non-byte pattern: 16-byte rows.
    op_log log;
    log.also = &total;
    sim_rt rt(log);
    const double zero = 0.0, one = 1.0;
    gts::device::detail::engine_fill(rt, make(dv.ptr, 8, {100, 100}, {800, 8}), &zero);
    CHECK(log.get("memset") == 1);
    gts::device::detail::engine_fill(rt, make(dv.ptr, 8, {100, 100}, {800, 8}), &one);
    CHECK(log.get("fill_rows") == 1);
    double got[4];
    std::memcpy(got, dv.ptr + 8 * 5000, sizeof got);
    CHECK(got[0] == 1.0 && got[3] == 1.0);
  }
  {  // Misaligned elements: the byte-wise fill.
    op_log log;
    log.also = &total;
    sim_rt rt(log);
    const double v = 3.25;
    gts::device::detail::engine_fill(rt, make(dv.ptr + 3, 8, {10}, {8}), &v);
    CHECK(log.get("fill_bytes") == 1);
    double got;
    std::memcpy(&got, dv.ptr + 3 + 8 * 9, 8);
    CHECK(got == 3.25);
  }
  {  // Negative strides on both sides in the same order: still one memcpy.
    op_log log;
    log.also = &total;
    sim_rt rt(log);
    gts::device::detail::engine_copy(rt, make(dv.ptr + 8 * 99, 8, {100}, {-8}),
                                     make(h.ptr + 8 * 99, 8, {100}, {-8}),
                                     direction::host_to_device);
    CHECK(log.get("memcpy") == 1 && log.ops.size() == 1);
  }
}

// plan_copy / plan_fill / is_dense / span_of on known inputs.
void plan_checks() {
  using namespace gts::device::detail;
  alignas(64) static std::byte mem[1 << 16];
  {
    const strided_array a = make(mem, 8, {4, 5}, {40, 8});
    CHECK(is_dense(a));
    CHECK(span_of(a).lo == 0 && span_of(a).hi == 160);
    const strided_array b = make(mem + 8 * 19, 8, {4, 5}, {-40, -8});
    CHECK(is_dense(b));
    CHECK(span_of(b).lo == -152 && span_of(b).hi == 8);
    const strided_array c = make(mem, 8, {4, 5}, {48, 8});  // Padded.
    CHECK(!is_dense(c));
    const strided_array f = make(mem, 8, {4, 5}, {8, 32});  // Fortran order.
    CHECK(is_dense(f));
  }
  {
    const strided_array d = make(mem, 4, {6, 7, 8}, {7 * 8 * 4, 8 * 4, 4});
    const copy_plan p = plan_copy(d, d);
    CHECK(p.is_memcpy());
    CHECK(p.unit == 16 && p.count == 6 * 7 * 8 / 4);
  }
  {  // Odd element count: widening stops where the row length no longer divides.
    const strided_array d = make(mem, 4, {3}, {4});
    const copy_plan p = plan_copy(d, d);
    CHECK(p.is_memcpy() && p.unit == 4 && p.count == 3);
  }
  {  // Misaligned address: the unit shrinks, element bytes become a dim.
    const strided_array d = make(mem + 2, 8, {5, 3}, {24, 8});
    const strided_array s = make(mem + 1024, 8, {5, 3}, {8, 40});
    const copy_plan p = plan_copy(d, s);
    CHECK(p.unit == 2);
    CHECK(p.ndim == 3 && p.shape[2] == 4);
  }
  {  // Compact copy of a padded, reversed array keeps its dim order.
    const strided_array a = make(mem + 8 * 100, 8, {3, 4}, {-8, 48});
    const strided_array c = compact_like(a, mem);
    CHECK(c.strides[0] == 8 && c.strides[1] == 24);
    CHECK(is_dense(c));
  }
  {
    const double v = 1.5;
    const fill_plan p = plan_fill(make(mem, 8, {7, 9}, {72, 8}), &v);
    CHECK(p.is_dense() && p.unit == 8 && !p.is_byte_pattern());
    const fill_plan q = plan_fill(make(mem, 8, {8, 8}, {64, 8}), &v);
    CHECK(q.unit == 16 && q.count == 32);
    unsigned char pat[16];
    std::memcpy(pat, q.pattern, 16);
    double a0, a1;
    std::memcpy(&a0, pat, 8);
    std::memcpy(&a1, pat + 8, 8);
    CHECK(a0 == 1.5 && a1 == 1.5);
    const unsigned char bad_value[3] = {1, 2, 3};
    strided_array odd = make(mem, 3, {4}, {3});
    EXPECT_ERROR(gts::error_kind::unsupported, "item size", (void)plan_fill(odd, bad_value));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::atoi(argv[1]) : 150;
  plan_checks();
  op_log log;
  path_choices(log);
  random_copies(log, trials, 7u, false);
  random_copies(log, trials / 3, 8u, true);
  random_fills(log, trials, 11u, false);
  random_fills(log, trials / 3, 12u, true);
  // The random layouts must have reached every kernel and path.
  for (const char* path : {"memcpy", "memcpy_2d", "memcpy_2d_refused", "temp", "rows", "transpose",
                           "elements", "memset", "fill_rows", "fill_elements", "fill_bytes",
                           "unit1", "unit2", "unit4", "unit8", "unit16"}) {
    CHECK_MSG(log.get(path) > 0, "path '%s' never taken", path);
  }
  for (const auto& [name, n] : log.ops) std::printf("  %-18s %d\n", name.c_str(), n);
  return test::report("test_gpu_kernels_sim");
}
