// Fibers for the threads of a simulated block (see block_scheduler.hpp).
//
// A context switch here is a handful of register moves (x86-64: a tiny assembly routine that
// saves the callee-saved registers and the stack pointer), not swapcontext(), which makes a
// system call for the signal mask on every switch: a launch of 32 blocks of 256 threads with two
// barriers per tile switches hundreds of thousands of times. Other architectures fall back to
// ucontext. AddressSanitizer and ThreadSanitizer are told about every switch (their fiber APIs),
// so the sanitizer builds check kernels as they check any other code.
#include "emulated/block_scheduler.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

// The hand-written switch returns onto another stack, which a CET shadow stack would refuse;
// glibc's swapcontext knows how to switch shadow stacks.
#if !(defined(__x86_64__) && defined(__linux__)) || (defined(__CET__) && (__CET__ & 2))
#include <ucontext.h>
#define GTS_SIM_UCONTEXT 1
#endif

#if defined(__SANITIZE_ADDRESS__)
#define GTS_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GTS_SIM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define GTS_SIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GTS_SIM_TSAN 1
#endif
#endif
#if defined(GTS_SIM_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(GTS_SIM_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

#if !defined(GTS_SIM_UCONTEXT)
// void gts_sim_switch(void** save_sp, void* load_sp): saves the callee-saved registers, MXCSR and
// the x87 control word on the current stack, stores the stack pointer in *save_sp, and resumes
// the context whose stack pointer is load_sp. gts_sim_start is where a fresh fiber's first
// switch "returns" to: it calls r12(r13) on the fiber's stack (which never returns).
__asm__(
    ".pushsection .text\n"
    ".globl gts_sim_switch\n"
    ".hidden gts_sim_switch\n"
    ".type gts_sim_switch,@function\n"
    "gts_sim_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  subq $8, %rsp\n"
    "  stmxcsr (%rsp)\n"
    "  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  ldmxcsr (%rsp)\n"
    "  fldcw 4(%rsp)\n"
    "  addq $8, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size gts_sim_switch, .-gts_sim_switch\n"
    ".globl gts_sim_start\n"
    ".hidden gts_sim_start\n"
    ".type gts_sim_start,@function\n"
    "gts_sim_start:\n"
    "  .cfi_startproc\n"
    "  .cfi_undefined rip\n"
    "  movq %r13, %rdi\n"
    "  callq *%r12\n"
    "  ud2\n"
    "  .cfi_endproc\n"
    ".size gts_sim_start, .-gts_sim_start\n"
    ".popsection\n");
extern "C" void gts_sim_switch(void** save_sp, void* load_sp);
extern "C" void gts_sim_start();
#endif

namespace gts::emulated {

thread_local uint3 threadIdx{0, 0, 0};
thread_local uint3 blockIdx{0, 0, 0};
thread_local dim3 blockDim{1, 1, 1};
thread_local dim3 gridDim{1, 1, 1};

namespace detail {
namespace {

constexpr std::size_t stack_bytes = std::size_t(256) << 10;  // sanitizers need headroom
constexpr unsigned max_block_threads = 1024;

enum class fiber_state { ready, running, at_barrier, done };

// One side of a context switch: a fiber, or the scheduler (the host thread's own stack). What the
// switch saves, and what the sanitizers are told about the side it lands on.
struct switch_point {
  void* sp = nullptr;  // saved stack pointer while suspended
#if defined(GTS_SIM_UCONTEXT)
  ucontext_t uc{};
#endif
#if defined(GTS_SIM_ASAN)
  void* fake_stack = nullptr;
  const void* stack_lo = nullptr;
  std::size_t stack_size = 0;
#endif
#if defined(GTS_SIM_TSAN)
  void* tsan = nullptr;
#endif
};

// A fiber runs kernel threads one after another: its entry function loops, running the body of
// the thread it is given, then handing control back (state done) until it is resumed for the
// next one. It never returns, so its stack (and AddressSanitizer's fake stack for it) lives as
// long as the fiber; a fresh fiber per kernel thread would make ASan map a new fake stack for
// every thread.
struct fiber {
  std::byte* map = nullptr;  // guard page + stack
  std::byte* stack_lo = nullptr;
  std::size_t stack_size = 0;
  switch_point point;
  fiber_state state = fiber_state::ready;
  bool started = false;  // its entry function is running (suspended or not)
  uint3 idx{0, 0, 0};
  const char* barrier_file = nullptr;  // the __syncthreads() it waits at
  int barrier_line = 0;
};

// What the fibers of the block running on this host thread share.
struct block_context {
  std::vector<std::unique_ptr<fiber>> fibers;  // reused across blocks and launches
  fiber* current = nullptr;
  const std::function<void()>* body = nullptr;
  std::string error;  // first exception a thread threw
  switch_point scheduler;

  block_context() = default;
  block_context(const block_context&) = delete;
  block_context& operator=(const block_context&) = delete;
  ~block_context() {
    for (auto& f : fibers) {
#if defined(GTS_SIM_TSAN)
      if (f->point.tsan != nullptr) __tsan_destroy_fiber(f->point.tsan);
#endif
      munmap(f->map, f->stack_size + static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
    }
  }
};

thread_local block_context* this_block = nullptr;

std::string describe_index(uint3 i) {
  return "(" + std::to_string(i.x) + ", " + std::to_string(i.y) + ", " + std::to_string(i.z) + ")";
}

std::string describe_site(const fiber& f) {
  return std::string(f.barrier_file != nullptr ? f.barrier_file : "?") + ":" +
         std::to_string(f.barrier_line);
}

// "" if every thread in @p waiting waits at the same __syncthreads() call, else what
// compute-sanitizer's synccheck would say (threads that exited count as arrived, as on Volta and
// later).
std::string divergent_barrier(const block_context& b, const std::vector<unsigned>& waiting) {
  if (waiting.size() < 2) return {};
  const fiber& first = *b.fibers[waiting.front()];
  for (unsigned t : waiting) {
    const fiber& f = *b.fibers[t];
    const bool same_file = f.barrier_file == first.barrier_file ||
                           (f.barrier_file != nullptr && first.barrier_file != nullptr &&
                            std::strcmp(f.barrier_file, first.barrier_file) == 0);
    if (same_file && f.barrier_line == first.barrier_line) continue;
    return "divergent __syncthreads() in block " + describe_index(blockIdx) + ": thread " +
           describe_index(first.idx) + " waits at " + describe_site(first) + ", thread " +
           describe_index(f.idx) + " at " + describe_site(f) +
           " (every thread of a block must reach the same barrier)";
  }
  return {};
}

block_context& context() {
  // One per host thread that runs kernels; its fibers' stacks are freed when the thread exits.
  thread_local block_context ctx;
  return ctx;
}

fiber* new_fiber() {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* m = mmap(nullptr, stack_bytes + page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  // The lowest page stays inaccessible: a stack overflow faults instead of corrupting memory.
  mprotect(m, page, PROT_NONE);
  auto f = std::make_unique<fiber>();
  f->map = static_cast<std::byte*>(m);
  f->stack_lo = f->map + page;
  f->stack_size = stack_bytes;
#if defined(GTS_SIM_ASAN)
  f->point.stack_lo = f->stack_lo;
  f->point.stack_size = stack_bytes;
#endif
#if defined(GTS_SIM_TSAN)
  f->point.tsan = __tsan_create_fiber(0);
#endif
  return f.release();
}

// Control passes from @p from to @p to; returns when something switches back to @p from.
void switch_between(switch_point& from, switch_point& to) {
#if defined(GTS_SIM_TSAN)
  __tsan_switch_to_fiber(to.tsan, 0);
#endif
#if defined(GTS_SIM_ASAN)
  __sanitizer_start_switch_fiber(&from.fake_stack, to.stack_lo, to.stack_size);
#endif
#if defined(GTS_SIM_UCONTEXT)
  swapcontext(&from.uc, &to.uc);
#else
  gts_sim_switch(&from.sp, to.sp);
#endif
#if defined(GTS_SIM_ASAN)
  __sanitizer_finish_switch_fiber(from.fake_stack, nullptr, nullptr);
#endif
}

// Control passes to the scheduler (the fiber is suspended at a barrier or finished); returns
// when the fiber is resumed: after a barrier, or to run the next kernel thread.
void switch_to_scheduler(block_context& b, fiber& f) {
  switch_between(f.point, b.scheduler);
}

// The entry function of a fiber: runs kernel threads, one per resume, forever.
void fiber_main(void* arg) {
  auto* f = static_cast<fiber*>(arg);
#if defined(GTS_SIM_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, &this_block->scheduler.stack_lo,
                                  &this_block->scheduler.stack_size);
#endif
  for (;;) {
    block_context& b = *this_block;  // the host thread's context (the fiber never migrates)
    try {
      (*b.body)();
    } catch (const std::exception& e) {
      if (b.error.empty()) b.error = e.what();
    } catch (...) {
      if (b.error.empty()) b.error = "a kernel thread threw an unknown exception";
    }
    f->state = fiber_state::done;
    switch_to_scheduler(b, *f);
  }
}

#if defined(GTS_SIM_UCONTEXT)
void fiber_entry_uc(unsigned lo, unsigned hi) {
  fiber_main(reinterpret_cast<void*>((uintptr_t(hi) << 32) | uintptr_t(lo)));
}
#endif

// Makes @p f start at fiber_main(f) on its next resume.
void prepare(fiber& f) {
#if defined(GTS_SIM_UCONTEXT)
  getcontext(&f.point.uc);
  f.point.uc.uc_stack.ss_sp = f.stack_lo;
  f.point.uc.uc_stack.ss_size = f.stack_size;
  f.point.uc.uc_link = nullptr;
  const auto p = reinterpret_cast<uintptr_t>(&f);
  makecontext(&f.point.uc, reinterpret_cast<void (*)()>(fiber_entry_uc), 2,
              unsigned(p & 0xffffffffu), unsigned(p >> 32));
#else
  // Initial frame, from low to high: MXCSR + x87 control word, r15, r14, r13, r12, rbx, rbp,
  // return address. The top is 16-byte aligned, so gts_sim_start's call sees the ABI alignment.
  auto top = reinterpret_cast<uintptr_t>(f.stack_lo + f.stack_size) & ~uintptr_t(15);
  auto* frame = reinterpret_cast<uint64_t*>(top - 64);
  uint32_t mxcsr = 0;
  uint16_t fpucw = 0;
  __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
  __asm__ volatile("fnstcw %0" : "=m"(fpucw));
  frame[0] = uint64_t(mxcsr) | (uint64_t(fpucw) << 32);
  frame[1] = 0;                                           // r15
  frame[2] = 0;                                           // r14
  frame[3] = reinterpret_cast<uint64_t>(&f);              // r13: the argument
  frame[4] = reinterpret_cast<uint64_t>(&fiber_main);     // r12: the function
  frame[5] = 0;                                           // rbx
  frame[6] = 0;                                           // rbp
  frame[7] = reinterpret_cast<uint64_t>(&gts_sim_start);  // return address
  f.point.sp = frame;
#endif
  f.started = true;
}

// Runs @p f until it reaches a barrier or finishes.
void resume(block_context& b, fiber& f) {
  if (!f.started) prepare(f);
  b.current = &f;
  threadIdx = f.idx;
  f.state = fiber_state::running;
  switch_between(b.scheduler, f.point);
  b.current = nullptr;
}

// splitmix64: a small, good, seedable generator (the order only needs to be reproducible).
struct rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[next() % i]);
  }
};

}  // namespace

bool in_kernel() {
  return this_block != nullptr && this_block->current != nullptr;
}

std::string run_grid(dim3 grid, dim3 block, const std::function<void()>& body, schedule order) {
  block_context& b = context();
  const unsigned nthreads = block.x * block.y * block.z;
  if (nthreads == 0 || nthreads > max_block_threads) return "invalid block size";
  while (b.fibers.size() < nthreads) b.fibers.emplace_back(new_fiber());
  b.body = &body;
  b.error.clear();
#if defined(GTS_SIM_TSAN)
  b.scheduler.tsan = __tsan_get_current_fiber();
#endif
  block_context* const outer = this_block;
  this_block = &b;
  const dim3 saved_grid = gridDim, saved_block = blockDim;
  const uint3 saved_block_idx = blockIdx, saved_thread_idx = threadIdx;
  gridDim = grid;
  blockDim = block;

  rng r{order.seed};
  const uint64_t nblocks = uint64_t(grid.x) * grid.y * grid.z;
  // Blocks in a shuffled order (an index permutation via an affine map keeps this O(1) memory
  // for huge grids: i -> (a * i + c) mod n with a coprime to n; below 2^32 blocks the product
  // cannot overflow, and no simulated grid comes near that).
  uint64_t mul = 1, add = 0;
  if (order.shuffle && nblocks > 1 && nblocks < (uint64_t(1) << 32)) {
    add = r.next() % nblocks;
    mul = (r.next() % nblocks) | 1;
    auto gcd = [](uint64_t x, uint64_t y) {
      while (y != 0) {
        const uint64_t t = x % y;
        x = y;
        y = t;
      }
      return x;
    };
    while (gcd(mul, nblocks) != 1) mul += 2;
  }
  std::vector<unsigned> runnable;
  runnable.reserve(nthreads);
  for (uint64_t k = 0; k < nblocks && b.error.empty(); ++k) {
    const uint64_t lin = (mul * k + add) % nblocks;
    blockIdx = uint3{unsigned(lin % grid.x), unsigned((lin / grid.x) % grid.y),
                     unsigned(lin / (uint64_t(grid.x) * grid.y))};
    runnable.clear();
    for (unsigned t = 0; t < nthreads; ++t) {
      fiber& f = *b.fibers[t];
      f.idx = uint3{t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
      f.state = fiber_state::ready;
      runnable.push_back(t);
    }
    // Phases between barriers: every thread that is not at the barrier runs until it arrives
    // there or exits; then the barrier opens for all that wait (threads that exited count as
    // arrived, as on Volta and later).
    while (!runnable.empty()) {
      if (order.shuffle) r.shuffle(runnable);
      for (unsigned t : runnable) resume(b, *b.fibers[t]);
      runnable.clear();
      for (unsigned t = 0; t < nthreads; ++t) {
        fiber& f = *b.fibers[t];
        if (f.state == fiber_state::at_barrier) runnable.push_back(t);
      }
      if (b.error.empty()) b.error = divergent_barrier(b, runnable);
      if (!b.error.empty()) break;
    }
  }
  // A fiber left at a barrier when a thread threw is in the middle of a kernel thread: it starts
  // afresh next time (its stack holds nothing that needs destruction; kernels are plain
  // functions).
  for (unsigned t = 0; t < nthreads; ++t) {
    if (b.fibers[t]->state == fiber_state::at_barrier) b.fibers[t]->started = false;
  }
  gridDim = saved_grid;
  blockDim = saved_block;
  blockIdx = saved_block_idx;
  threadIdx = saved_thread_idx;
  this_block = outer;
  return b.error;
}

}  // namespace detail

void sync_threads(const char* file, int line) {
  detail::block_context* b = detail::this_block;
  if (b == nullptr || b->current == nullptr) return;  // not in a kernel: nothing to wait for
  detail::fiber& f = *b->current;
  f.state = detail::fiber_state::at_barrier;
  f.barrier_file = file;
  f.barrier_line = line;
  detail::switch_to_scheduler(*b, f);
}

}  // namespace gts::emulated
