// Runs the grid of a simulated kernel on the calling host thread: block after block, and every
// thread of a block as a fiber with its own stack, so that __syncthreads() can suspend a thread
// until all threads of its block have arrived. Between barriers the threads run one after the
// other in a shuffled (seeded) order, and blocks run in a shuffled order too: a kernel that
// relies on an order CUDA does not promise, or that lacks a barrier, computes wrong values.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "emulated/cuda_api.hpp"

namespace gts::emulated::detail {

struct schedule {
  uint64_t seed = 1;
  bool shuffle = true;
};

/// Runs @p body for every thread of @p grid x @p block. Returns "" or, when a thread's body
/// threw, the exception's message (the grid is then abandoned, like a faulting kernel).
std::string run_grid(dim3 grid, dim3 block, const std::function<void()>& body, schedule order);

/// True while the calling host thread runs a kernel thread (inside run_grid).
bool in_kernel();

}  // namespace gts::emulated::detail
