// Part of the GPU backend (gpu_backend.inl): the kernels, grid-stride loops over the step
// functions of gpu_kernels.hpp, and their launches for a copy or fill plan.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "device/gpu/gpu_kernels.hpp"  // (needs the names header: GTS_GPU_NS)
#include "device/strided_plan.hpp"

namespace gts::device::GTS_GPU_NS {
namespace {

template <class T>
__global__ void __launch_bounds__(row_threads)
    copy_rows_kernel(kdims d, std::byte* dst, const std::byte* src, rows_shape r, int64_t total) {
  for (int64_t b = blockIdx.x; b < total; b += gridDim.x) {
    copy_rows_step<T>(d, dst, src, r, b, threadIdx.x);
  }
}

template <class T>
__global__ void __launch_bounds__(row_threads)
    fill_rows_kernel(kdims d, std::byte* dst, T value, rows_shape r, int64_t total) {
  for (int64_t b = blockIdx.x; b < total; b += gridDim.x) {
    fill_rows_step<T>(d, dst, value, r, b, threadIdx.x);
  }
}

template <class T>
__global__ void __launch_bounds__(element_threads)
    copy_elements_kernel(kdims d, std::byte* dst, const std::byte* src, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    copy_element<T>(d, dst, src, i);
  }
}

template <class T>
__global__ void __launch_bounds__(element_threads)
    fill_elements_kernel(kdims d, std::byte* dst, T value, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    fill_element<T>(d, dst, value, i);
  }
}

__global__ void __launch_bounds__(element_threads)
    fill_bytes_kernel(kdims d, std::byte* dst, kbytes value, int itemsize, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    fill_bytes_element(d, dst, value, itemsize, i);
  }
}

// Layout change through a shared-memory tile (+1 column against bank conflicts): coalesced
// reads along the source-inner dim, coalesced writes along the destination-inner dim. The
// second barrier keeps the next tile's loads from overwriting what others still store.
template <class T>
__global__ void __launch_bounds__(tile_dim* tile_rows)
    transpose_kernel(kdims d, std::byte* dst, const std::byte* src, int sd, int64_t tiles_d,
                     int64_t tiles_s, int64_t total) {
  __shared__ T buf[tile_dim][tile_dim + 1];
  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    const tile_pos p = transpose_tile(d, sd, tiles_d, tiles_s, t);
    transpose_load<T>(d, src, sd, p, threadIdx.x, threadIdx.y, buf);
    __syncthreads();
    transpose_store<T>(d, dst, sd, p, threadIdx.x, threadIdx.y, buf);
    __syncthreads();
  }
}

// Enough resident blocks to fill every SM several times over; the loops above take the rest.
unsigned grid_for(int64_t work_items, int sms) {
  const int64_t cap = int64_t(sms) * 16;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(work_items, cap)));
}

unsigned element_grid(int64_t n, int sms) {
  return grid_for((n + element_threads - 1) / element_threads, sms);
}

template <class T>
void launch_copy_t(const copy_plan& p, gpuStream_t s, int sms) {
  const launch_choice c = choose_copy(p);
  gpuError_t e = gpuSuccess;
  switch (c.kind) {
    case kernel_kind::rows:
      e = gpu_launch(copy_rows_kernel<T>, dim3(grid_for(c.total, sms)), dim3(row_threads), s, c.k,
                     p.dst, p.src, c.rows, c.total);
      break;
    case kernel_kind::transpose:
      e = gpu_launch(transpose_kernel<T>, dim3(grid_for(c.total, sms)), dim3(tile_dim, tile_rows),
                     s, c.k, p.dst, p.src, c.sd, c.tiles_d, c.tiles_s, c.total);
      break;
    default:
      e = gpu_launch(copy_elements_kernel<T>, dim3(element_grid(c.total, sms)),
                     dim3(element_threads), s, c.k, p.dst, p.src, c.total);
      break;
  }
  check_stream_call(e, "kernel launch (copy)", reinterpret_cast<uint64_t>(s));
}

void launch_copy(const copy_plan& p, gpuStream_t s, int sms) {
  if (p.count == 0) return;
  switch (p.unit) {
    case 1:
      launch_copy_t<word<1>::type>(p, s, sms);
      break;
    case 2:
      launch_copy_t<word<2>::type>(p, s, sms);
      break;
    case 4:
      launch_copy_t<word<4>::type>(p, s, sms);
      break;
    case 8:
      launch_copy_t<word<8>::type>(p, s, sms);
      break;
    default:
      launch_copy_t<word<16>::type>(p, s, sms);
      break;
  }
}

template <class T>
gpuError_t launch_fill_t(const fill_plan& p, const launch_choice& c, gpuStream_t s, int sms) {
  T value;
  std::memcpy(&value, p.pattern, sizeof(T));
  if (c.kind == kernel_kind::rows) {
    return gpu_launch(fill_rows_kernel<T>, dim3(grid_for(c.total, sms)), dim3(row_threads), s, c.k,
                      p.dst, value, c.rows, c.total);
  }
  return gpu_launch(fill_elements_kernel<T>, dim3(element_grid(c.total, sms)),
                    dim3(element_threads), s, c.k, p.dst, value, c.total);
}

void launch_fill(const fill_plan& p, gpuStream_t s, int sms) {
  if (p.count == 0) return;
  const launch_choice c = choose_fill(p);
  gpuError_t e = gpuSuccess;
  if (c.kind == kernel_kind::bytes) {
    kbytes v{};
    std::memcpy(v.b, p.pattern, sizeof v.b);
    e = gpu_launch(fill_bytes_kernel, dim3(element_grid(c.total, sms)), dim3(element_threads), s,
                   c.k, p.dst, v, p.itemsize, c.total);
  } else {
    switch (p.unit) {
      case 1:
        e = launch_fill_t<word<1>::type>(p, c, s, sms);
        break;
      case 2:
        e = launch_fill_t<word<2>::type>(p, c, s, sms);
        break;
      case 4:
        e = launch_fill_t<word<4>::type>(p, c, s, sms);
        break;
      case 8:
        e = launch_fill_t<word<8>::type>(p, c, s, sms);
        break;
      default:
        e = launch_fill_t<word<16>::type>(p, c, s, sms);
        break;
    }
  }
  check_stream_call(e, "kernel launch (fill)", reinterpret_cast<uint64_t>(s));
}

}  // namespace
}  // namespace gts::device::GTS_GPU_NS
