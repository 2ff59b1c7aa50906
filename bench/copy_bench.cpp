// Copy figures of gtstorage-bench (issue 10): layout-changing copies against the same-layout
// copy of the same field, for float32, for a 4-D field with a trailing data dim, and the halo
// exchange's face pack/unpack against memcpy of the same bytes. Every ratio compares jobs timed
// interleaved in one process (one round of each per repetition, medians of the rounds), on one
// thread, so load from other processes on a shared machine hits both sides alike.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bench_common.hpp"

namespace bench {
namespace {

// A storage created through the API and its host descriptor.
struct storage {
  gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
  gtstorage_interface_info info{};

  storage(int ndim, const int64_t* shape, const char* dtype, const char* dims, const char* preset,
          const int64_t* halo = nullptr, int32_t pitch_padding = GTSTORAGE_PITCH_PADDING_NONE) {
    gtstorage_create_options o =
        create_options(static_cast<uint32_t>(ndim), shape, preset, GTSTORAGE_INIT_UNINITIALIZED);
    o.dtype = dtype;
    o.dims = dims;
    o.halo = halo;
    o.pitch_padding = pitch_padding;
    check(gtstorage_create(&o, &h), "gtstorage_create");
    describe();
  }
  explicit storage(gtstorage_handle view) : h(view) { describe(); }
  storage(const storage&) = delete;
  storage& operator=(const storage&) = delete;
  ~storage() { gtstorage_release(h); }

  void describe() {
    info.struct_size = sizeof info;
    check(gtstorage_interface(h, GTSTORAGE_SIDE_HOST, &info), "gtstorage_interface");
  }
  [[nodiscard]] int64_t count() const {
    int64_t n = 1;
    for (uint32_t d = 0; d < info.ndim; ++d) n *= info.shape[d];
    return n;
  }
  [[nodiscard]] int itemsize() const { return info.typestr[2] - '0'; }
};

// Writes distinct values (the element's index) into every element, through an element loop
// over the descriptor, so a misplaced element shows up in same_values.
void fill_index(const storage& s) {
  const int nd = static_cast<int>(s.info.ndim);
  const int size = s.itemsize();
  int64_t idx[GTSTORAGE_MAX_NDIM] = {};
  auto* base = static_cast<char*>(s.info.data);
  for (int64_t i = 0, n = s.count(); i < n; ++i) {
    char* p = base;
    for (int d = 0; d < nd; ++d) p += idx[d] * s.info.strides[d];
    if (size == 8) {
      const double v = static_cast<double>(i);
      std::memcpy(p, &v, 8);
    } else {
      const float v = static_cast<float>(i % (1 << 24));
      std::memcpy(p, &v, 4);
    }
    for (int d = nd - 1; d >= 0 && ++idx[d] == s.info.shape[d]; --d) idx[d] = 0;
  }
}

// True if every element of a equals the one of b (bitwise), compared through both descriptors.
bool same_values(const storage& a, const storage& b) {
  const int nd = static_cast<int>(a.info.ndim);
  const int size = a.itemsize();
  int64_t idx[GTSTORAGE_MAX_NDIM] = {};
  for (int64_t i = 0, n = a.count(); i < n; ++i) {
    const char* p = static_cast<const char*>(a.info.data);
    const char* q = static_cast<const char*>(b.info.data);
    for (int d = 0; d < nd; ++d) {
      p += idx[d] * a.info.strides[d];
      q += idx[d] * b.info.strides[d];
    }
    if (std::memcmp(p, q, static_cast<std::size_t>(size)) != 0) return false;
    for (int d = nd - 1; d >= 0 && ++idx[d] == a.info.shape[d]; --d) idx[d] = 0;
  }
  return true;
}

// Median time of each job over @p reps rounds (one untimed warm-up round first).
std::vector<double> interleaved(int reps, const std::vector<std::function<void()>>& jobs) {
  std::vector<std::vector<double>> t(jobs.size());
  for (int r = 0; r <= reps; ++r) {
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      const double a = now_s();
      jobs[k]();
      if (r > 0) t[k].push_back(now_s() - a);
    }
  }
  std::vector<double> med;
  for (auto& v : t) med.push_back(median(v));
  return med;
}

template <class F>
auto one_thread(F&& f) {
#ifdef _OPENMP
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  auto r = f();
  omp_set_num_threads(saved);
  return r;
#else
  return f();
#endif
}

json_object ratio(double value, double limit) {
  return ratio_target(value, limit, true);
}

// Touches every cache line that the rows of @p s cover (rows: runs along its smallest-stride
// dimension), first reading one byte per line, then rewriting one byte per line with its own
// value; only bytes inside the rows are touched. Any pack reads each of those lines and any
// unpack writes each of them, whatever the kernel, so the time of this loop (no copying at all,
// same row order, the reads prefetched 32 rows ahead as the library's short-row copy does)
// estimates what a pack + unpack cannot go below on this machine: with 24-byte face rows it is
// set by the number of lines, not by the bytes the halo needs. (Rows of whole lines can be
// unpacked with streaming stores, which write a line without reading it first: there a pack +
// unpack can beat this loop, which reads every line before writing it.)
void touch_row_lines(const storage& s) {
  const int nd = static_cast<int>(s.info.ndim);
  if (s.count() == 0) return;
  // inner: the rows' dimension (smallest stride); mid: the next one, walked by pointer steps.
  int inner = 0;
  for (int d = 1; d < nd; ++d) {
    if (std::abs(s.info.strides[d]) < std::abs(s.info.strides[inner])) inner = d;
  }
  int mid = -1;
  for (int d = 0; d < nd; ++d) {
    if (d != inner && (mid < 0 || std::abs(s.info.strides[d]) < std::abs(s.info.strides[mid]))) {
      mid = d;
    }
  }
  const int64_t row_bytes = (s.info.shape[inner] - 1) * s.info.strides[inner] + s.itemsize();
  const int64_t rows = mid < 0 ? 1 : s.info.shape[mid];
  const int64_t row_step = mid < 0 ? 0 : s.info.strides[mid];
  auto for_each_line = [&](bool prefetch, auto&& f) {
    int64_t idx[GTSTORAGE_MAX_NDIM] = {};
    for (;;) {
      const auto* base = static_cast<const unsigned char*>(s.info.data);
      for (int d = 0; d < nd; ++d) base += idx[d] * s.info.strides[d];
      for (int64_t r = 0; r < rows; ++r) {
        if (prefetch) __builtin_prefetch(base + (r + 32) * row_step, 0, 3);
        const auto first = reinterpret_cast<uintptr_t>(base + r * row_step);
        const uintptr_t end = first + static_cast<uintptr_t>(row_bytes);
        for (uintptr_t q = first; q < end; q = (q & ~uintptr_t(63)) + 64) {
          f(reinterpret_cast<volatile unsigned char*>(q));
        }
      }
      int d = nd - 1;
      for (; d >= 0; --d) {
        if (d == inner || d == mid) continue;
        if (++idx[d] < s.info.shape[d]) break;
        idx[d] = 0;
      }
      if (d < 0) return;
    }
  };
  unsigned sum = 0;
  for_each_line(true, [&](volatile unsigned char* q) { sum += *q; });
  for_each_line(false, [&](volatile unsigned char* q) { *q = *q; });
  static volatile unsigned sink;
  sink = sink + sum;
}

std::function<void()> copy_job(const storage& d, const storage& s) {
  return [&d, &s] { check(gtstorage_copy(d.h, s.h), "gtstorage_copy"); };
}

// Same-layout copy and F -> K-fastest copy of one field; returns {same, f_to_k} medians. With
// @p pitch_padding the F and K-fastest fields are created with it (the same-layout pair never:
// the padded copy is compared with the plain contiguous one).
std::vector<double> layout_pair(int reps, int ndim, const int64_t* shape, const char* dtype,
                                const char* dims, const char* what,
                                int32_t pitch_padding = GTSTORAGE_PITCH_PADDING_NONE) {
  const storage a(ndim, shape, dtype, dims, "numpy"), b(ndim, shape, dtype, dims, "numpy");
  const storage f(ndim, shape, dtype, dims, "F", nullptr, pitch_padding);
  const storage k(ndim, shape, dtype, dims, "gt:cpu_kfirst", nullptr, pitch_padding);
  for (const storage* s : {&a, &b, &f, &k}) fill_index(*s);
  const std::vector<double> t = one_thread([&] {
    return interleaved(reps, {copy_job(b, a), copy_job(k, f)});
  });
  if (!same_values(k, f) || !same_values(b, a)) {
    std::fprintf(stderr, "gtstorage-bench: %s copy gave wrong values\n", what);
    std::exit(1);
  }
  return t;
}

#if defined(__SSE2__)
// The destination side of the F -> K-fastest transpose alone: the whole 128-byte runs that the
// strip kernel (src/kernels/simd.cpp) writes with non-temporal stores, in its order (16 K
// columns at a time; for each, J outer and I inner), into the K-fastest float64 field, reading
// nothing. Whatever the kernel does on the read side, it cannot be faster than its stores
// alone. Returns {same-layout copy, stores alone} medians, or an empty vector where K has no
// whole strip or its rows are not on 16-byte boundaries (the stores need them).
std::vector<double> strip_stores_pair(int reps, const int64_t* shape, int32_t pitch_padding) {
  const storage a(3, shape, "<f8", "IJK", "numpy"), b(3, shape, "<f8", "IJK", "numpy");
  const storage k(3, shape, "<f8", "IJK", "gt:cpu_kfirst", nullptr, pitch_padding);
  for (const storage* s : {&a, &b, &k}) fill_index(*s);
  const int64_t si = k.info.strides[0], sj = k.info.strides[1];
  auto* base = static_cast<unsigned char*>(k.info.data);
  if (shape[2] < 16 || k.info.strides[2] != 8 || reinterpret_cast<uintptr_t>(base) % 16 != 0 ||
      si % 16 != 0 || sj % 16 != 0) {
    return {};
  }
  const int64_t ni = shape[0], nj = shape[1], strips = shape[2] / 16;
  auto stores = [=] {
    const __m128i v = _mm_set1_epi64x(1);
    for (int64_t s = 0; s < strips; ++s) {
      for (int64_t j = 0; j < nj; ++j) {
        for (int64_t i = 0; i < ni; ++i) {
          auto* q = reinterpret_cast<__m128i*>(base + i * si + j * sj + s * 128);
          for (int w = 0; w < 8; ++w) _mm_stream_si128(q + w, v);
        }
      }
    }
    _mm_sfence();
  };
  return one_thread([&] { return interleaved(reps, {copy_job(b, a), stores}); });
}
#endif

}  // namespace

// Adds the copy figures to @p j and their targets to @p targets.
void copy_bench(const config& cfg, json_object& j, json_object& targets) {
  const int reps = std::max(cfg.reps, 7);  // ratios below are medians of at least 7 rounds
  auto gbs = [](double bytes, double s) { return bytes / s / 1e9; };

  // float32 field of the configured extents.
  {
    const int64_t shape[3] = {cfg.ni, cfg.nj, cfg.nk};
    const double bytes = 4.0 * static_cast<double>(shape[0] * shape[1] * shape[2]);
    const auto t = layout_pair(reps, 3, shape, "<f4", "IJK", "f4");
    j.number("copy_same_layout_f4_1t_gbs", gbs(2 * bytes, t[0]), 2);
    j.number("copy_f_to_kfirst_f4_1t_gbs", gbs(2 * bytes, t[1]), 2);
    targets.object("copy_f_to_kfirst_f4_1t_vs_same_layout", ratio(t[0] / t[1], 0.9));
  }

  // float32 with K rows that are not a multiple of 64 bytes (K extent + 8: 136 floats, 544
  // bytes per row, so every other row starts mid-line): the windowed transpose's case. Reported
  // as measured, without a target (the targets name the field above).
  {
    const int64_t shape[3] = {cfg.ni, cfg.nj, cfg.nk + 8};
    const double bytes = 4.0 * static_cast<double>(shape[0] * shape[1] * shape[2]);
    const auto t = layout_pair(reps, 3, shape, "<f4", "IJK", "f4 (K + 8)");
    j.number("copy_same_layout_f4_k8_1t_gbs", gbs(2 * bytes, t[0]), 2);
    j.number("copy_f_to_kfirst_f4_k8_1t_gbs", gbs(2 * bytes, t[1]), 2);
    j.number("copy_f_to_kfirst_f4_k8_1t_vs_same_layout", t[0] / t[1], 3);
  }

  // The same copies between fields created with GTSTORAGE_PITCH_PADDING_AVOID_ALIASING. GT4Py's
  // pitches of these fields (2 MiB planes and 512 KiB destination I rows for float64 at
  // 512x512x128) are multiples of 4 KiB, so the 16 source lines a transpose step reads, and the 8
  // destination lines it writes, share their address bits below 4 KiB (one L1 set); the padded
  // pitches spread them over the sets. Measured before the option existed, with wrapped arrays
  // (float64, same-run ratios to the same-layout copy): source and destination pitches 192
  // bytes longer 0.99-1.04, 64 bytes 0.98, only the source 0.88, only the destination 0.80,
  // neither (or 4 KiB longer) 0.68-0.72. Reported without targets: the option changes the
  // strides (GT4Py's are the default), and the targets name the fields above.
  {
    const int64_t shape3[3] = {cfg.ni, cfg.nj, cfg.nk};
    const double n3 = static_cast<double>(shape3[0] * shape3[1] * shape3[2]);
    constexpr int32_t pad = GTSTORAGE_PITCH_PADDING_AVOID_ALIASING;
    auto t = layout_pair(reps, 3, shape3, "<f8", "IJK", "padded f8", pad);
    j.number("copy_f_to_kfirst_padded_1t_gbs", gbs(16 * n3, t[1]), 2);
    j.number("copy_f_to_kfirst_padded_1t_vs_same_layout", t[0] / t[1], 3);
    t = layout_pair(reps, 3, shape3, "<f4", "IJK", "padded f4", pad);
    j.number("copy_f_to_kfirst_f4_padded_1t_gbs", gbs(8 * n3, t[1]), 2);
    j.number("copy_f_to_kfirst_f4_padded_1t_vs_same_layout", t[0] / t[1], 3);
    const int64_t shape4[4] = {std::max<int64_t>(1, cfg.ni / 2), std::max<int64_t>(1, cfg.nj / 2),
                               std::max<int64_t>(1, cfg.nk / 2), 3};
    const double n4 = static_cast<double>(shape4[0] * shape4[1] * shape4[2] * shape4[3]);
    t = layout_pair(reps, 4, shape4, "<f8", "IJK0", "padded 4-D", pad);
    j.number("copy_f_to_kfirst_4d_padded_1t_gbs", gbs(16 * n4, t[1]), 2);
    j.number("copy_f_to_kfirst_4d_padded_1t_vs_same_layout", t[0] / t[1], 3);
  }

#if defined(__SSE2__)
  // What bounds the float64 F -> K copy at GT4Py's strides: the kernel's destination stores
  // alone (no reads), over the same-layout copy, at GT4Py's strides and with pitch padding. On
  // the 2-core Zen 5 VM the stores alone take as long as the whole same-layout copy at GT4Py's
  // strides (0.94-1.01; 128-byte runs 512 KiB apart, all at the same offset in their 4 KiB
  // page) and 1.48-1.60 padded, so there a 0.9x copy would have to hide all its reads in 5-10%
  // more time. Reported without targets.
  {
    const int64_t shape3[3] = {cfg.ni, cfg.nj, cfg.nk};
    auto t = strip_stores_pair(reps, shape3, GTSTORAGE_PITCH_PADDING_NONE);
    if (!t.empty()) j.number("copy_f_to_kfirst_stores_alone_1t_vs_same_layout", t[0] / t[1], 3);
    t = strip_stores_pair(reps, shape3, GTSTORAGE_PITCH_PADDING_AVOID_ALIASING);
    if (!t.empty()) {
      j.number("copy_f_to_kfirst_stores_alone_padded_1t_vs_same_layout", t[0] / t[1], 3);
    }
  }
#endif

  // 4-D float64 field with a trailing data dim (dims IJK0): F order (I fastest, data dim
  // slowest) -> K fastest with the data dim outermost (GT4Py's by-name rule).
  {
    const int64_t shape[4] = {std::max<int64_t>(1, cfg.ni / 2), std::max<int64_t>(1, cfg.nj / 2),
                              std::max<int64_t>(1, cfg.nk / 2), 3};
    const double bytes = 8.0 * static_cast<double>(shape[0] * shape[1] * shape[2] * shape[3]);
    const auto t = layout_pair(reps, 4, shape, "<f8", "IJK0", "4-D");
    j.raw("size_4d", "[" + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ", " +
                         std::to_string(shape[2]) + ", 3]");
    j.number("copy_same_layout_4d_1t_gbs", gbs(2 * bytes, t[0]), 2);
    j.number("copy_f_to_kfirst_4d_1t_gbs", gbs(2 * bytes, t[1]), 2);
    targets.object("copy_f_to_kfirst_4d_1t_vs_same_layout", ratio(t[0] / t[1], 0.9));
  }

  // Halo exchange: the 6 faces (width 3) of a field whose interior has the configured extents
  // are packed into contiguous buffers and unpacked back, against memcpy of the same bytes
  // from and to buffers of the same sizes. Measured for both CPU stride orders. The library's
  // figure is what libgtstorage_mpi's GTSTORAGE_EXCHANGE_PACK does with regions of 1 MiB or more
  // (these faces: 1.5-6.3 MiB): gtstorage_copy_sides() between the face views and wrapped
  // buffers, with GTSTORAGE_COPY_FLAG_STREAMING; the same
  // copies through gtstorage_copy_to_array()/_from_array() (stores chosen by size) are reported
  // beside it.
  constexpr int64_t h = 3;
  const int64_t n[3] = {cfg.ni, cfg.nj, cfg.nk};
  const int64_t full[3] = {n[0] + 2 * h, n[1] + 2 * h, n[2] + 2 * h};
  const int64_t halo[6] = {h, h, h, h, h, h};
  for (const char* preset : {"gt:cpu_kfirst", "gt:cpu_ifirst"}) {
    const bool ifirst = std::string(preset) == "gt:cpu_ifirst";
    const storage field(3, full, "<f8", "IJK", preset, halo);
    fill_index(field);
    // Face f covers the halo of dimension f/2 on side f%2 and the interior of the others.
    std::vector<std::unique_ptr<storage>> faces;
    std::vector<std::vector<double>> bufs, scratch;
    std::vector<std::vector<int64_t>> face_shapes, buf_strides;
    double face_bytes = 0;
    for (int f = 0; f < 6; ++f) {
      gtstorage_slice_spec spec[3];
      std::vector<int64_t> shape(3);
      for (int d = 0; d < 3; ++d) {
        const bool own = d == f / 2;
        const int64_t lo = own ? (f % 2 == 0 ? 0 : h + n[d]) : h;
        shape[d] = own ? h : n[d];
        spec[d] = {lo, lo + shape[d], 1, GTSTORAGE_SLICE_RANGE, 0};
      }
      gtstorage_handle v = GTSTORAGE_NULL_HANDLE;
      check(gtstorage_slice(field.h, spec, 3, &v), "gtstorage_slice");
      faces.push_back(std::make_unique<storage>(v));
      const int64_t cnt = shape[0] * shape[1] * shape[2];
      bufs.emplace_back(static_cast<std::size_t>(cnt), 0.0);
      scratch.emplace_back(static_cast<std::size_t>(cnt), 1.0);
      face_shapes.push_back(shape);
      // Each buffer is contiguous in the field's own stride order (what a halo exchange
      // sends), so packing gathers runs and never transposes.
      std::vector<int64_t> st(3);
      if (ifirst) {
        st = {8, 8 * shape[0], 8 * shape[0] * shape[1]};
      } else {
        st = {8 * shape[1] * shape[2], 8 * shape[2], 8};
      }
      buf_strides.push_back(st);
      face_bytes += 8.0 * static_cast<double>(cnt);
    }
    auto array_of = [&](int f) {
      gtstorage_array a = GTSTORAGE_ARRAY_INIT;
      a.ndim = 3;
      a.data = bufs[f].data();
      a.shape = face_shapes[f].data();
      a.strides = buf_strides[f].data();
      return a;
    };
    std::vector<std::unique_ptr<storage>> wrapped;
    for (int f = 0; f < 6; ++f) {
      gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
      w.ndim = 3;
      w.data = bufs[f].data();
      w.shape = face_shapes[f].data();
      w.strides = buf_strides[f].data();
      w.dtype = "<f8";
      gtstorage_handle wh = GTSTORAGE_NULL_HANDLE;
      check(gtstorage_wrap(&w, &wh), "gtstorage_wrap");
      wrapped.push_back(std::make_unique<storage>(wh));
    }
    constexpr int host = GTSTORAGE_SIDE_HOST;
    auto pack = [&](int f) {
      check(gtstorage_copy_sides(wrapped[f]->h, host, faces[f]->h, host, 0,
                                 GTSTORAGE_COPY_FLAG_STREAMING),
            "gtstorage_copy_sides");
    };
    auto pack_unpack = [&] {
      for (int f = 0; f < 6; ++f) pack(f);
      for (int f = 0; f < 6; ++f) {
        check(gtstorage_copy_sides(faces[f]->h, host, wrapped[f]->h, host, 0,
                                   GTSTORAGE_COPY_FLAG_STREAMING),
              "gtstorage_copy_sides");
      }
    };
    auto pack_unpack_automatic = [&] {
      for (int f = 0; f < 6; ++f) {
        const gtstorage_array a = array_of(f);
        check(gtstorage_copy_to_array(&a, faces[f]->h), "gtstorage_copy_to_array");
      }
      for (int f = 0; f < 6; ++f) {
        const gtstorage_array a = array_of(f);
        check(gtstorage_copy_from_array(faces[f]->h, &a), "gtstorage_copy_from_array");
      }
    };
    auto memcpy_same = [&] {
      for (int f = 0; f < 6; ++f) {
        std::memcpy(bufs[f].data(), scratch[f].data(), bufs[f].size() * 8);
      }
      for (int f = 0; f < 6; ++f) {
        std::memcpy(scratch[f].data(), bufs[f].data(), bufs[f].size() * 8);
      }
    };
    auto line_floor = [&] {
      for (const auto& face : faces) touch_row_lines(*face);
    };
    const std::vector<double> t = one_thread([&] {
      return interleaved(reps, {memcpy_same, pack_unpack, line_floor, pack_unpack_automatic});
    });
    // Check the packed faces against the field, element by element.
    for (int f = 0; f < 6; ++f) {
      std::fill(bufs[f].begin(), bufs[f].end(), -1.0);
      pack(f);
      const gtstorage_interface_info& fi = faces[f]->info;
      const int64_t* s = face_shapes[f].data();
      const int64_t* bs = buf_strides[f].data();
      for (int64_t i = 0; i < s[0]; ++i) {
        for (int64_t jj = 0; jj < s[1]; ++jj) {
          for (int64_t kk = 0; kk < s[2]; ++kk) {
            const char* p = static_cast<const char*>(fi.data) + i * fi.strides[0] +
                            jj * fi.strides[1] + kk * fi.strides[2];
            const char* q =
                reinterpret_cast<const char*>(bufs[f].data()) + i * bs[0] + jj * bs[1] + kk * bs[2];
            if (std::memcmp(p, q, 8) != 0) {
              std::fprintf(stderr, "gtstorage-bench: halo pack (%s) gave wrong values\n", preset);
              std::exit(1);
            }
          }
        }
      }
    }
    const std::string tag = ifirst ? "ifirst" : "kfirst";
    // Bytes moved: each face read and written once by the pack and once by the unpack.
    j.number("halo_pack_unpack_" + tag + "_1t_gbs", gbs(4 * face_bytes, t[1]), 2);
    j.number("halo_memcpy_same_bytes_" + tag + "_1t_gbs", gbs(4 * face_bytes, t[0]), 2);
    targets.object("halo_pack_unpack_" + tag + "_1t_vs_memcpy", ratio(t[0] / t[1], 0.7));
    // What bounds the ratio above: the time to read and rewrite the field's cache lines under
    // the faces (no copy at all). memcpy / that time is the best ratio any pack + unpack could
    // reach on this machine; floor / pack is how close the library's kernels come to it.
    j.number("halo_line_touch_floor_" + tag + "_1t_ms", t[2] * 1e3, 3);
    j.number("halo_pack_unpack_" + tag + "_1t_ms", t[1] * 1e3, 3);
    j.number("halo_memcpy_same_bytes_" + tag + "_1t_ms", t[0] * 1e3, 3);
    j.number("halo_best_reachable_" + tag + "_1t_vs_memcpy", t[0] / t[2], 3);
    j.number("halo_pack_unpack_" + tag + "_1t_vs_line_touch_floor", t[2] / t[1], 3);
    j.number("halo_pack_unpack_automatic_stores_" + tag + "_1t_ms", t[3] * 1e3, 3);
    j.number("halo_pack_unpack_automatic_stores_" + tag + "_1t_vs_memcpy", t[0] / t[3], 3);
  }
}

}  // namespace bench
