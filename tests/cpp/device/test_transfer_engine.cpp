// The transfer engine (src/device/gpu/transfer_engine.hpp) against a recording host runtime: which
// calls carry out each kind of copy and fill (one memcpy for a block, the copy engine's 2-D
// memcpy for padded rows, staging through a device temporary and a kernel for a layout change,
// a memset for a byte pattern), in which order (the waits before host code reads a source or
// frees a host temporary), and that the bytes land where they must, with nothing outside the
// destination's elements written. The CUDA, HIP and emulated backends all run this logic with
// their runtime as the policy; here every choice is observable on its own.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../support.hpp"
#include "device/gpu/transfer_engine.hpp"

namespace {

using gts::strided_array;
using gts::device::direction;
using gts::device::detail::copy_plan;
using gts::device::detail::fill_plan;

// A runtime policy on host memory that records its calls ("memcpy", "memcpy_2d", "memset",
// "wait", "temp", "launch_copy", "launch_fill").
struct recording_rt {
  std::vector<std::string> calls;
  bool refuse_2d = false;  // a pitch beyond the copy engine's limit

  struct temp {
    std::unique_ptr<std::byte[]> bytes;
    [[nodiscard]] std::byte* get() const { return bytes.get(); }
  };

  void memcpy(void* dst, const void* src, std::size_t n) {
    calls.emplace_back("memcpy");
    std::memcpy(dst, src, n);
  }
  bool memcpy_2d(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                 std::size_t width, std::size_t height) {
    if (refuse_2d) return false;
    calls.emplace_back("memcpy_2d");
    for (std::size_t r = 0; r < height; ++r) {
      std::memcpy(static_cast<std::byte*>(dst) + r * dpitch,
                  static_cast<const std::byte*>(src) + r * spitch, width);
    }
    return true;
  }
  void memset(void* dst, unsigned char value, std::size_t n) {
    calls.emplace_back("memset");
    std::memset(dst, value, n);
  }
  void wait() { calls.emplace_back("wait"); }
  temp device_temp(std::size_t n) {
    calls.emplace_back("temp");
    return temp{std::make_unique<std::byte[]>(n)};
  }
  // The kernels' contract: every element of the plan's shape, unit bytes each.
  void launch_copy(const copy_plan& p) {
    calls.emplace_back("launch_copy");
    for_each(p.ndim, p.shape, [&](const int64_t* idx) {
      int64_t d = 0, s = 0;
      for (int k = 0; k < p.ndim; ++k) {
        d += idx[k] * p.dst_strides[k];
        s += idx[k] * p.src_strides[k];
      }
      std::memcpy(p.dst + d, p.src + s, static_cast<std::size_t>(p.unit));
    });
  }
  void launch_fill(const fill_plan& p) {
    calls.emplace_back("launch_fill");
    for_each(p.ndim, p.shape, [&](const int64_t* idx) {
      int64_t d = 0;
      for (int k = 0; k < p.ndim; ++k) d += idx[k] * p.strides[k];
      std::memcpy(p.dst + d, p.pattern, static_cast<std::size_t>(p.unit));
    });
  }

  template <class F>
  static void for_each(int ndim, const int64_t* shape, F&& f) {
    int64_t n = 1;
    for (int k = 0; k < ndim; ++k) n *= shape[k];
    int64_t idx[gts::device::detail::plan_max_dims] = {};
    for (int64_t i = 0; i < n; ++i) {
      int64_t r = i;
      for (int k = ndim - 1; k >= 0; --k) {
        idx[k] = r % shape[k];
        r /= shape[k];
      }
      f(idx);
    }
  }
};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& c : v) s += (s.empty() ? "" : " ") + c;
  return s;
}

// A layout of @p shape (C order over @p order, innermost padded by @p pad elements).
test::layout make_layout(std::vector<int64_t> shape, std::vector<int> order, int64_t pad,
                         int itemsize) {
  test::layout l;
  l.ndim = static_cast<int>(shape.size());
  int64_t s = itemsize;
  for (int k = l.ndim - 1; k >= 0; --k) {
    const int d = order[static_cast<std::size_t>(k)];
    l.shape[d] = shape[static_cast<std::size_t>(d)];
    l.strides[d] = s;
    s *= l.shape[d] + (k == l.ndim - 1 ? pad : 0);
  }
  l.offset = 0;
  l.bytes = s;
  return l;
}

// Copies a pattern from @p src_l to @p dst_l through the engine; returns the calls and checks
// the destination (elements hold the pattern, other bytes the sentinel).
std::string run_copy(const test::layout& dst_l, const test::layout& src_l, direction dir,
                     int itemsize, bool refuse_2d = false) {
  std::vector<std::byte> src(static_cast<std::size_t>(src_l.bytes), std::byte{0x11});
  std::vector<std::byte> dst(static_cast<std::size_t>(dst_l.bytes), std::byte{0xA5});
  test::write_pattern(src.data(), src_l, itemsize, 7);
  recording_rt rt;
  rt.refuse_2d = refuse_2d;
  gts::device::detail::engine_copy(rt, dst_l.at(dst.data(), itemsize),
                                   src_l.at(src.data(), itemsize), dir);
  const int64_t bad = test::verify(dst.data(), dst_l, itemsize, 7, 0xA5);
  CHECK_MSG(bad == 0, "%lld wrong bytes after: %s", static_cast<long long>(bad),
            joined(rt.calls).c_str());
  return joined(rt.calls);
}

#define CHECK_CALLS(got, want) \
  CHECK_MSG((got) == (want), "calls '%s', expected '%s'", (got).c_str(), want)

void one_block_is_one_memcpy() {
  const auto l = make_layout({4, 5, 6}, {0, 1, 2}, 0, 8);
  for (direction dir :
       {direction::host_to_device, direction::device_to_host, direction::device_to_device}) {
    const std::string calls = run_copy(l, l, dir, 8);
    CHECK_CALLS(calls, "memcpy");
  }
}

// @p l with @p extra bytes more between the planes of its outer dim (a sliced parent), so the
// planner cannot merge that dim with the rows.
test::layout with_gap_between_planes(test::layout l, int64_t extra) {
  l.strides[0] += extra;
  l.bytes += extra * l.shape[0];
  return l;
}

void padded_rows_go_through_the_copy_engine() {
  // Same order, the destination's rows padded: the planner merges the planes into 20 rows of
  // one pitch, one 2-D memcpy; no staging.
  const auto dst = make_layout({4, 5, 6}, {0, 1, 2}, 3, 8);
  const auto src = make_layout({4, 5, 6}, {0, 1, 2}, 0, 8);
  CHECK_CALLS(run_copy(dst, src, direction::host_to_device, 8), "memcpy_2d");
  CHECK_CALLS(run_copy(src, dst, direction::device_to_host, 8), "memcpy_2d");
  // Planes apart from each other: one 2-D memcpy per plane.
  const auto dst_planes = with_gap_between_planes(dst, 16);
  CHECK_CALLS(run_copy(dst_planes, src, direction::host_to_device, 8),
              "memcpy_2d memcpy_2d memcpy_2d memcpy_2d");
  CHECK_CALLS(run_copy(src, dst_planes, direction::device_to_host, 8),
              "memcpy_2d memcpy_2d memcpy_2d memcpy_2d");
  // Between two device buffers the copy engine is not used: a kernel does it in one launch.
  CHECK_CALLS(run_copy(dst_planes, src, direction::device_to_device, 8), "launch_copy");
}

void refused_pitch_and_many_rows_are_staged() {
  const auto dst = make_layout({4, 5, 6}, {0, 1, 2}, 3, 8);
  const auto src = make_layout({4, 5, 6}, {0, 1, 2}, 0, 8);
  // A pitch the engine refuses: the dense source goes up whole and a kernel pads it.
  CHECK_CALLS(run_copy(dst, src, direction::host_to_device, 8, true), "temp memcpy launch_copy");
  // More than max_2d_calls planes apart: staging is cheaper than that many calls.
  const int64_t outer = gts::device::detail::max_2d_calls + 1;
  const auto dst_many = with_gap_between_planes(make_layout({outer, 2, 3}, {0, 1, 2}, 1, 4), 8);
  const auto src_many = make_layout({outer, 2, 3}, {0, 1, 2}, 0, 4);
  CHECK_CALLS(run_copy(dst_many, src_many, direction::host_to_device, 4),
              "temp memcpy launch_copy");
  // max_2d_calls planes are still the copy engine's.
  const auto dst_max = with_gap_between_planes(
      make_layout({gts::device::detail::max_2d_calls, 2, 3}, {0, 1, 2}, 1, 4), 8);
  const auto src_max = make_layout({gts::device::detail::max_2d_calls, 2, 3}, {0, 1, 2}, 0, 4);
  const std::string calls = run_copy(dst_max, src_max, direction::host_to_device, 4);
  CHECK_MSG(calls.find("temp") == std::string::npos &&
                calls.size() == static_cast<std::size_t>(gts::device::detail::max_2d_calls) *
                                        std::string("memcpy_2d ").size() -
                                    1,
            "calls '%s'", calls.c_str());
}

void layout_changes_are_made_on_the_device() {
  const auto k_first = make_layout({4, 5, 6}, {2, 0, 1}, 0, 8);
  const auto c_order = make_layout({4, 5, 6}, {0, 1, 2}, 0, 8);
  // Up: the dense source moves as it is, a kernel changes the layout; no host wait.
  CHECK_CALLS(run_copy(k_first, c_order, direction::host_to_device, 8), "temp memcpy launch_copy");
  // Down into a dense destination: the kernel writes the destination's order, then one copy.
  CHECK_CALLS(run_copy(c_order, k_first, direction::device_to_host, 8), "temp launch_copy memcpy");
  // On the device: one kernel.
  CHECK_CALLS(run_copy(c_order, k_first, direction::device_to_device, 8), "launch_copy");
}

void gaps_on_the_host_side_wait_for_the_stream() {
  // A sliced host source (gaps between rows) with another layout on the device: the host packs
  // it first, after waiting for queued work that may still write it, and waits again before
  // its temporary is freed.
  test::layout sliced = make_layout({4, 5, 6}, {0, 1, 2}, 0, 8);
  sliced.strides[0] *= 2;  // every other plane of a parent twice as large
  sliced.bytes *= 2;
  const auto k_first = make_layout({4, 5, 6}, {2, 0, 1}, 0, 8);
  CHECK_CALLS(run_copy(k_first, sliced, direction::host_to_device, 8),
              "wait temp memcpy launch_copy wait");
  // Down into a host destination with gaps: compact on the device, copy, wait, scatter on the
  // host (which reads the host temporary only after the wait).
  CHECK_CALLS(run_copy(sliced, k_first, direction::device_to_host, 8),
              "temp launch_copy memcpy wait");
}

void random_layouts_copy_every_element() {
  std::mt19937_64 rng(20261128);
  for (int it = 0; it < 300; ++it) {
    const int ndim = 1 + static_cast<int>(rng() % 4);
    int64_t shape[4];
    for (int d = 0; d < ndim; ++d) shape[d] = 1 + static_cast<int64_t>(rng() % 6);
    const int itemsize = 1 << (rng() % 4);
    const auto dl = test::random_layout(rng, ndim, shape, itemsize);
    const auto sl = test::random_layout(rng, ndim, shape, itemsize);
    const auto dir = static_cast<direction>(rng() % 3);
    (void)run_copy(dl, sl, dir, itemsize, rng() % 4 == 0);
  }
}

std::string run_fill(const test::layout& l, int itemsize, const void* value) {
  std::vector<std::byte> buf(static_cast<std::size_t>(l.bytes), std::byte{0xA5});
  recording_rt rt;
  gts::device::detail::engine_fill(rt, l.at(buf.data(), itemsize), value);
  const int64_t bad = test::verify_fill(buf.data(), l, itemsize, value, 0xA5);
  CHECK_MSG(bad == 0, "%lld wrong bytes after: %s", static_cast<long long>(bad),
            joined(rt.calls).c_str());
  return joined(rt.calls);
}

void fills_use_memset_only_for_byte_patterns() {
  const auto dense = make_layout({3, 4, 5}, {0, 1, 2}, 0, 8);
  const auto padded = make_layout({3, 4, 5}, {0, 1, 2}, 2, 8);
  const double zero = 0.0, one = 1.0;
  const int64_t minus_one = -1;
  CHECK_CALLS(run_fill(dense, 8, &zero), "memset");
  CHECK_CALLS(run_fill(dense, 8, &minus_one), "memset");  // every byte 0xFF
  CHECK_CALLS(run_fill(dense, 8, &one), "launch_fill");
  CHECK_CALLS(run_fill(padded, 8, &zero), "launch_fill");  // the padding must stay untouched
}

void nothing_to_do_calls_nothing() {
  const auto empty = make_layout({0, 4}, {0, 1}, 0, 8);
  CHECK_CALLS(run_copy(empty, empty, direction::host_to_device, 8), "");
  const double one = 1.0;
  CHECK_CALLS(run_fill(empty, 8, &one), "");
}

}  // namespace

int main() {
  one_block_is_one_memcpy();
  padded_rows_go_through_the_copy_engine();
  refused_pitch_and_many_rows_are_staged();
  layout_changes_are_made_on_the_device();
  gaps_on_the_host_side_wait_for_the_stream();
  random_layouts_copy_every_element();
  fills_use_memset_only_for_byte_patterns();
  nothing_to_do_calls_nothing();
  return test::report("test_transfer_engine");
}
