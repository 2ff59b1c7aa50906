#include "storage/storage.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/tls.hpp"
#include "kernels/kernels.hpp"
#include "layout/checked_math.hpp"
#include "storage/plan_cache.hpp"

namespace gts {
namespace {

// Zeros of a small host block are one memset: the fill kernel would end in the same memset
// (far below its threading and streaming-store thresholds) after checking and normalizing its
// array, which cost as much again in a small create.
constexpr int64_t small_fill_bytes = int64_t(64) << 10;

// The address of a wrap without elements that came without one (never dereferenced: nothing
// is read or written through a storage without elements). Aligned as any preset asks.
alignas(256) std::byte empty_span[1];

int idx(side s) {
  return static_cast<int>(s);
}

void set_root_array(strided_array& a, std::byte* element0, const allocation_plan& plan) {
  a.data = element0;
  a.ndim = plan.ndim;
  a.type = plan.type;
  for (int d = 0; d < plan.ndim; ++d) {
    a.shape[d] = plan.shape[d];
    a.strides[d] = plan.strides[d];
  }
}

strided_array bytes_array(std::byte* base, int64_t bytes) {
  strided_array a;
  a.data = base;
  a.ndim = 1;
  a.shape[0] = bytes;
  a.strides[0] = 1;
  a.type = dtype{'u', 1};
  return a;
}

// Lowest and one-past-highest byte touched by an array (empty arrays touch nothing). Checked:
// a wrapped geometry whose span does not fit the address space is an overflow error.
void span_of(const strided_array& a, std::byte*& lo, std::byte*& hi) {
  for (int d = 0; d < a.ndim; ++d) {
    if (a.shape[d] == 0) {
      lo = hi = a.data;
      return;
    }
  }
  int64_t low = 0, high = a.type.itemsize;
  for (int d = 0; d < a.ndim; ++d) {
    const int64_t reach = checked_mul(a.strides[d], a.shape[d] - 1, "strides");
    int64_t& end = reach < 0 ? low : high;
    end = checked_add(end, reach, "strides");
  }
  const auto base = static_cast<int64_t>(reinterpret_cast<uintptr_t>(a.data));
  int64_t first = 0, last = 0;
  if (__builtin_add_overflow(base, low, &first) || __builtin_add_overflow(base, high, &last) ||
      first < 0) {
    fail(error_kind::overflow, "strides: the array's span does not fit the address space");
  }
  lo = a.data + low;
  hi = a.data + high;
}

bool host_accessible(const storage& s, side sd) {
  return sd == side::host || s.buffers->device.kind == device::memory_kind::unified;
}

// Unified memory is read and written by the host directly, so what is queued on the storage's
// stream (an application's kernel, a prefetch) must be done first, as a mirror's stream-ordered
// copy would wait for it.
void wait_for_device_work(const storage& s) {
  const buffer_set& b = *s.buffers;
  if (b.device.present() && b.device.kind == device::memory_kind::unified && b.backend != nullptr) {
    b.backend->synchronize(s.stream);
  }
}

// Side a read of @p s uses: the host unless only the device holds current data.
side read_side(const storage& s) {
  s.buffers->wait_pending();
  wait_for_device_work(s);
  if (!s.has(side::host)) return side::device;
  if (s.buffers->mirrored() && s.buffers->state() == sync_state::device_dirty) return side::device;
  return side::host;
}

// Side a write to @p s uses (host if it has one); for mirrors that side is made current first,
// so a partial write leaves no stale remainder, and marked modified afterwards by the caller.
// @p param names the storage in messages as the caller's function does ("dst", "handle").
side prepare_write(const storage& s, const char* param) {
  if (s.readonly) fail(error_kind::readonly, std::string(param) + ": the storage is read-only");
  s.buffers->wait_pending();
  wait_for_device_work(s);
  const side sd = s.has(side::host) ? side::host : side::device;
  if (s.buffers->mirrored()) {
    s.buffers->acquire(sd, false, s.stream, true);
  }
  return sd;
}

void finish_write(const storage& s, side sd) {
  if (s.buffers->mirrored()) {
    s.buffers->modify(sd, false, s.stream, true);
  }
}

device::direction direction_of(bool dst_host, bool src_host) {
  if (dst_host && !src_host) return device::direction::device_to_host;
  if (!dst_host && src_host) return device::direction::host_to_device;
  return device::direction::device_to_device;
}

// Counts one host<->device transfer of @p a in the buffer's and the global counters, so copies
// made by the copy API are as visible as those made by syncs.
void count_transfer(device::direction dir, const strided_array& a, transfer_counters* counters) {
  const int64_t bytes = a.size() * a.type.itemsize;
  if (dir == device::direction::host_to_device) {
    if (counters != nullptr) counters->add_h2d(bytes);
    stats().transfers.add_h2d(bytes);
  } else if (dir == device::direction::device_to_host) {
    if (counters != nullptr) counters->add_d2h(bytes);
    stats().transfers.add_d2h(bytes);
  }
}

strided_array contiguous_like(const strided_array& a, dtype type,
                              std::vector<std::byte>& storage_) {
  strided_array c = a;
  c.type = type;
  int64_t stride = type.itemsize;
  for (int d = a.ndim - 1; d >= 0; --d) {
    c.strides[d] = stride;
    stride = checked_mul(stride, std::max<int64_t>(a.shape[d], 1), "shape");
  }
  storage_.resize(static_cast<size_t>(stride));
  c.data = storage_.data();
  return c;
}

// Copies between any two arrays where either may be device memory. Host<->host converts
// dtypes; transfers involving a device go through a host staging array when dtypes differ.
// With @p wait false a same-dtype copy involving the device is only enqueued on @p stream;
// returns whether it was (work left queued that the caller must account for).
bool copy_arrays(const strided_array& dst, bool dst_host, const strided_array& src, bool src_host,
                 uint64_t stream, device::backend* backend, transfer_counters* counters,
                 bool wait = true,
                 kernels::store_policy stores = kernels::store_policy::automatic) {
  if (src.size() == 0) return false;  // nothing to move (and no device call for an empty array)
  if (dst_host && src_host) {
    kernels::copy(dst, src, stores);
    return false;
  }
  device::backend& be = backend != nullptr ? *backend : device::active();
  // A copy that fails part-way leaves what it queued before the failure on the stream, writing
  // into memory the caller frees next (a staging vector below, the caller's array): drained.
  auto device_copy = [&](const strided_array& to, const strided_array& from,
                         device::direction dir) {
    device::enqueue_or_drain(be, stream, [&] { be.copy_strided(to, from, dir, stream); });
    be.synchronize(stream);
    count_transfer(dir, from, counters);
  };
  if (dst.type == src.type) {
    if (!wait) {
      const device::direction dir = direction_of(dst_host, src_host);
      device::enqueue_or_drain(be, stream, [&] { be.copy_strided(dst, src, dir, stream); });
      count_transfer(dir, src, counters);
      return true;
    }
    device_copy(dst, src, direction_of(dst_host, src_host));
    return false;
  }
  // Convert on the host: stage the device-side operand(s) as C-contiguous host arrays.
  std::vector<std::byte> tmp, tmp2;
  if (src_host) {  // host src -> device dst
    const strided_array staged = contiguous_like(dst, dst.type, tmp);
    kernels::copy(staged, src);
    device_copy(dst, staged, device::direction::host_to_device);
    return false;
  }
  const strided_array staged = contiguous_like(src, src.type, tmp);
  device_copy(staged, src, device::direction::device_to_host);
  if (dst_host) {
    kernels::copy(dst, staged);
    return false;
  }
  const strided_array converted = contiguous_like(dst, dst.type, tmp2);
  kernels::copy(converted, staged);
  device_copy(dst, converted, device::direction::host_to_device);
  return false;
}

// copy_arrays, but correct when source and destination overlap in one address space (views of
// one buffer, two wraps of the same memory, a caller array aliasing the storage): the source is
// then read into a private copy first, as NumPy does. Returns whether work was left queued
// (see copy_arrays).
bool move_elements(const strided_array& dst, bool dst_host, const strided_array& src, bool src_host,
                   uint64_t stream, device::backend* backend, transfer_counters* counters,
                   bool wait = true,
                   kernels::store_policy stores = kernels::store_policy::automatic) {
  std::byte *dlo = nullptr, *dhi = nullptr, *slo = nullptr, *shi = nullptr;
  span_of(dst, dlo, dhi);
  span_of(src, slo, shi);
  if (dst_host == src_host && dlo < shi && slo < dhi) {
    std::vector<std::byte> tmp;
    const strided_array staged = contiguous_like(src, src.type, tmp);
    copy_arrays(staged, true, src, src_host, stream, backend, counters);
    copy_arrays(dst, dst_host, staged, true, stream, backend, counters, true, stores);
    return false;
  }
  return copy_arrays(dst, dst_host, src, src_host, stream, backend, counters, wait, stores);
}

void check_same_shape(int ndim_a, const int64_t* a, int ndim_b, const int64_t* b,
                      const char* param) {
  bool same = ndim_a == ndim_b;
  for (int d = 0; same && d < ndim_a; ++d) same = a[d] == b[d];
  if (!same) {
    auto show = [](int n, const int64_t* s) {
      std::string t = "(";
      for (int d = 0; d < n; ++d) t += (d ? ", " : "") + std::to_string(s[d]);
      return t + ")";
    };
    fail(error_kind::shape_mismatch,
         std::string(param) + ": shape " + show(ndim_b, b) + " does not match " + show(ndim_a, a));
  }
}

// Rejects strides that are not multiples of the item size or that let two elements overlap.
// Sufficient test: sorted by |stride|, each stride must clear the whole extent of the smaller ones.
void check_strides(const int64_t* shape, const int64_t* strides, int ndim, int64_t itemsize,
                   const char* param) {
  std::array<int, max_ndim> order{};
  int n = 0;
  for (int d = 0; d < ndim; ++d) {
    if (strides[d] == INT64_MIN) {
      fail_arg(param, "stride of dimension " + std::to_string(d) + " is out of range");
    }
  }
  for (int d = 0; d < ndim; ++d) {
    if (strides[d] % itemsize != 0) {
      fail_arg(param, "stride " + std::to_string(strides[d]) + " of dimension " +
                          std::to_string(d) + " is not a multiple of the item size " +
                          std::to_string(itemsize));
    }
    if (shape[d] == 0) return;  // empty: nothing can overlap
    if (shape[d] > 1) order[n++] = d;
  }
  std::sort(order.begin(), order.begin() + n,
            [&](int a, int b) { return std::llabs(strides[a]) < std::llabs(strides[b]); });
  int64_t reach = itemsize;  // bytes spanned by the dims sorted so far
  for (int i = 0; i < n; ++i) {
    const int d = order[i];
    const int64_t s = std::llabs(strides[d]);
    if (s < reach) {
      fail_arg(param, "stride " + std::to_string(strides[d]) + " of dimension " +
                          std::to_string(d) + " makes elements overlap (needs |stride| ≥ " +
                          std::to_string(reach) + ")");
    }
    reach = checked_add(reach, checked_mul(s, shape[d] - 1, param), param);
  }
}

}  // namespace

strided_array storage::array(side s) const {
  strided_array a;
  a.data = data[idx(s)];
  a.ndim = ndim;
  a.type = type;
  for (int d = 0; d < ndim; ++d) {
    a.shape[d] = shape[d];
    a.strides[d] = strides[idx(s)][d];
  }
  return a;
}

void storage::finalize(const layout_map* planned) {
  const int64_t count = size();
  for (int k = 0; k < 2; ++k) {
    layout_map derived;  // only filled without a planned layout
    if (planned == nullptr) derived = layout_from_strides(strides[k].data(), ndim);
    const layout_map& l = planned != nullptr ? *planned : derived;
    for (int d = 0; d < ndim; ++d) layouts[k][d] = static_cast<uint8_t>(l[d]);
    int64_t expected = type.itemsize;
    bool contiguous = true;
    for (int d = ndim - 1; d >= 0; --d) {
      if (shape[d] != 1 && strides[k][d] != expected) contiguous = false;
      expected *= shape[d];
    }
    c_contiguous[k] = contiguous || count == 0;
  }
  nbytes = count * type.itemsize;
  // Typestr by hand (this runs on every create and view): "<f8", "|b1", "<c16".
  char* t = typestr.data();
  *t++ = type.itemsize == 1 ? '|' : '<';
  *t++ = type.kind;
  if (type.itemsize >= 10) *t++ = static_cast<char>('0' + type.itemsize / 10);
  *t++ = static_cast<char>('0' + type.itemsize % 10);
  *t = '\0';
}

int64_t storage::size() const {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= shape[d];
  return n;
}

strided_array caller_array(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                           const char* dtype_str, dtype fallback, const char* param) {
  const std::string p(param);
  if (ndim < 0 || ndim > max_ndim) {
    fail_arg(p + "ndim", std::to_string(ndim) + " is out of range 0 … " + std::to_string(max_ndim));
  }
  if (shape == nullptr && ndim > 0) fail_arg(p + "shape", "must not be NULL");
  strided_array a;
  a.ndim = ndim;
  a.type = dtype_str ? parse_dtype(dtype_str, (p + "dtype").c_str()) : fallback;
  int64_t stride = a.type.itemsize;
  bool empty = false;
  for (int d = ndim - 1; d >= 0; --d) {
    if (shape[d] < 0) {
      fail_arg(p + "shape", "extent " + std::to_string(shape[d]) + " of dimension " +
                                std::to_string(d) + " must be ≥ 0");
    }
    a.shape[d] = shape[d];
    a.strides[d] = strides ? strides[d] : stride;
    stride = checked_mul(stride, std::max<int64_t>(shape[d], 1), (p + "shape").c_str());
    empty = empty || shape[d] == 0;
  }
  if (strides != nullptr)
    check_strides(a.shape, a.strides, ndim, a.type.itemsize, (p + "strides").c_str());
  if (data == nullptr && !empty) fail_arg(p + "data", "must not be NULL");
  a.data = static_cast<std::byte*>(data);
  return a;
}

namespace {

// ---- released storages kept for reuse (storage::retire) --------------------------------------
// Models create and release the same small temporaries over and over. A released storage with
// its own small host block and no view is kept (a few per thread) and handed out again by the
// next create of the same memoized plan on that thread, which then skips allocating and
// building the storage, its buffer set and its block. Not under AddressSanitizer, which would
// then miss a use after release.
#if defined(__SANITIZE_ADDRESS__)
#define GTS_KEEP_STORAGES 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GTS_KEEP_STORAGES 0
#endif
#endif
#ifndef GTS_KEEP_STORAGES
#define GTS_KEEP_STORAGES 1
#endif

// Ids of memoized host geometries (host_geometry_slot::id): unique in the process, so a
// storage released on another thread than it was created on never matches a wrong plan.
std::atomic<uint64_t> next_geometry_id{1};

#if GTS_KEEP_STORAGES
constexpr int spare_count = 4;
// Blocks up to this size are kept with their storage (the host allocator parks one such block
// per thread as well); larger or pooled ones go back to the allocator and the pool, whose
// statistics and trim must see them.
constexpr std::size_t spare_block_limit = std::size_t(64) << 10;

// Trivially destructible (one TLS address computation per access); the reaper below frees the
// spares at thread exit. A kept storage is not live, but the library-wide counters are not
// changed for it: each thread counts its own kept storages here, with plain stores (the four
// locked additions a create + release would make otherwise cost 2.5 ns each on the VM), and
// gtstorage_get_stats subtracts the sum over the threads (kept_totals).
struct spare_list {
  storage* spares[spare_count] = {};
  int next_evicted = 0;
  bool reaper_set = false;  // registered: reaper constructed, in the list of kept_totals
  bool dead = false;        // the reaper ran: nothing is kept any more
  std::atomic<int64_t> kept_buffers{0};  // written by the owning thread only
  std::atomic<int64_t> kept_bytes{0};
  spare_list* next = nullptr;  // the registered lists (kept_registry)
};

// The lists of the threads that kept a storage, for kept_totals.
struct kept_registry {
  std::mutex mutex;
  spare_list* head = nullptr;
};

kept_registry& registry() {
  static auto* const r = new kept_registry;  // leaked: thread exits may come after static exit
  return *r;
}

void count_kept(spare_list& l, const storage& s, int64_t sign) {
  l.kept_buffers.store(l.kept_buffers.load(std::memory_order_relaxed) + sign,
                       std::memory_order_relaxed);
  l.kept_bytes.store(l.kept_bytes.load(std::memory_order_relaxed) +
                         sign * static_cast<int64_t>(s.buffers->host.block.bytes),
                     std::memory_order_relaxed);
}

// Destroys a storage kept in @p l.
void drop_kept(spare_list& l, storage* s) noexcept {
  count_kept(l, *s, -1);
  delete s;
}

thread_local spare_list spares;

struct spare_reaper {
  spare_reaper() = default;
  spare_reaper(const spare_reaper&) = delete;
  spare_reaper& operator=(const spare_reaper&) = delete;
  ~spare_reaper() {
    spare_list& l = spares;
    l.dead = true;
    for (storage*& s : l.spares) {
      if (s != nullptr) drop_kept(l, s);
      s = nullptr;
    }
    kept_registry& r = registry();
    const std::lock_guard<std::mutex> lock(r.mutex);
    for (spare_list** p = &r.head; *p != nullptr; p = &(*p)->next) {
      if (*p == &l) {
        *p = l.next;
        break;
      }
    }
  }
};
thread_local spare_reaper reaper;

// Once per thread, out of the fast path: the reaper's destructor is registered for the thread's
// exit, and the list joins the registry.
__attribute__((noinline)) void register_list(spare_list& l) noexcept {
  static_cast<void>(&reaper);
  kept_registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  l.next = r.head;
  r.head = &l;
  l.reaper_set = true;
}

// Whether released storage @p s can be kept: created from a memoized plan, the only user of its
// buffers (no view, no wrapped memory), with a small unpooled host block and nothing else.
bool keepable(const storage& s) {
  if (s.recycle.id == 0 || s.buffers == nullptr || s.buffers.use_count() != 1) return false;
  const buffer_set& b = *s.buffers;
  return b.host.owner == side_owner::host_block && b.device.owner == side_owner::none &&
         b.backend == nullptr && b.release == nullptr && !b.has_pending() && !b.host.block.pooled &&
         !b.host.block.mapped && b.host.block.bytes <= spare_block_limit;
}
#endif  // GTS_KEEP_STORAGES

// A kept storage of geometry @p id, ready for reuse; nullptr if this thread keeps none.
std::unique_ptr<storage> take_spare(uint64_t id) {
#if GTS_KEEP_STORAGES
  spare_list& l = tls_ref(spares);
  for (storage*& s : l.spares) {
    if (s != nullptr && s->recycle.id == id) {
      std::unique_ptr<storage> st(s);
      s = nullptr;
      count_kept(l, *st, -1);
      st->stream = 0;
      st->buffers->prepare_reuse();
      return st;
    }
  }
#else
  (void)id;
#endif
  return nullptr;
}

// The geometry of a new storage of @p plan whose buffers are set up (present sides and their
// data addresses).
void derive_geometry(storage& st, const allocation_plan& plan) {
  const buffer_set& bs = *st.buffers;
  st.ndim = plan.ndim;
  st.type = plan.type;
  st.readonly = false;
  st.stream = 0;
  for (int d = 0; d < plan.ndim; ++d) {
    st.shape[d] = plan.shape[d];
    st.dims[d] = plan.dims[d];
    st.halo[d] = plan.halo[d];
    // A dimension of extent 0 holds no aligned element (as a view of it reports, see slice).
    st.aligned_index[d] = plan.shape[d] > 0 ? plan.aligned_index[d] : -1;
  }
  for (side s : {side::host, side::device}) {
    const bool present = bs.get(s).present();
    // An absent side gets zero strides (views compute strides for both sides).
    for (int d = 0; d < plan.ndim; ++d) st.strides[idx(s)][d] = present ? plan.strides[d] : 0;
    st.data[idx(s)] = present ? bs.get(s).full.data : nullptr;
  }
  // The planned layout, not one re-derived from strides: they tie for extent-1 dims.
  st.finalize(&plan.layout);
}

}  // namespace

namespace {

// A new storage for storage::create (its checks done): buffers allocated and the geometry set,
// contents not initialized.
std::unique_ptr<storage> new_storage(const create_request& req, const allocation_plan& plan,
                                     bool gpu, managed_kind managed,
                                     host_geometry_slot* memo_geometry) {
  const bool need_host = !gpu || managed == managed_kind::mirror;
  const bool need_device = gpu;
  auto buffers = std::allocate_shared<buffer_set>(object_allocator<buffer_set>());
  buffers->managed = managed;
  if (gpu || req.host_memory == host_memory_kind::pinned) buffers->backend = &device::active();
  const auto bytes = static_cast<size_t>(plan.allocation_bytes);
  // The plan's byte_offset is relative to a block aligned to alignment_bytes. Powers of two get
  // at least a cache line; other alignments (24 bytes for <f8) are served as they are, by
  // over-allocating (GT4Py's way), on the host and the device alike.
  const size_t align = static_cast<size_t>(is_power_of_two(plan.alignment_bytes)
                                               ? std::max<int64_t>(plan.alignment_bytes, 64)
                                               : plan.alignment_bytes);
  int device_id = 0;
  if (gpu || req.host_memory == host_memory_kind::pinned) {
    device::backend& be = device::active();
    if (be.device_count() <= 0) {
      const bool emulated = std::string(be.name()) == "emulated";
      // The parameter that asked for a device: the preset or device for a GPU storage, else
      // host_memory (page-locked memory is the device runtime's).
      fail(be.no_device_kind(),
           std::string(gpu ? "device: no usable GPU"
                           : "host_memory: GTSTORAGE_HOST_PINNED needs "
                             "a usable GPU") +
               " (device backend '" + be.name() + "' reports 0 devices: " + be.no_device_reason() +
               "); use " + (gpu ? "a CPU preset" : "GTSTORAGE_HOST_PAGEABLE") +
               (emulated ? "" : " or set GTSTORAGE_DEVICE_BACKEND=emulated for testing"));
    }
    device_id = req.device_id >= 0 ? req.device_id : be.current_device();
    if (device_id >= be.device_count()) {
      fail_arg("device_id", std::to_string(device_id) + " is out of range 0 … " +
                                std::to_string(be.device_count() - 1));
    }
  }

  if (need_host) {
    side_buffer& h = buffers->host;
    if (req.host_memory == host_memory_kind::pinned) {
      h.base = static_cast<std::byte*>(
          req.pooled
              ? buffers->backend->allocate_pooled(bytes, align, device::memory_kind::pinned_host,
                                                  device_id, buffers->default_stream)
              : buffers->backend->allocate(bytes, align, device::memory_kind::pinned_host,
                                           device_id));
      h.owner = side_owner::backend;
      h.kind = device::memory_kind::pinned_host;
      h.device_id = device_id;
      h.dl_device_type = buffers->backend->dl_device_type(device::memory_kind::pinned_host);
      stats().host_bytes.fetch_add(plan.allocation_bytes, std::memory_order_relaxed);
    } else {
      h.block = allocate_host(bytes, align, req.pooled);
      h.base = static_cast<std::byte*>(h.block.ptr);
      h.owner = side_owner::host_block;
      stats().host_bytes.fetch_add(static_cast<int64_t>(h.block.bytes), std::memory_order_relaxed);
    }
    h.bytes = plan.allocation_bytes;
    set_root_array(h.full, h.base + plan.byte_offset, plan);
    h.dense_allocation = true;
  }
  if (need_device) {
    side_buffer& dv = buffers->device;
    const auto kind = managed == managed_kind::unified ? device::memory_kind::unified
                                                       : device::memory_kind::device;
    dv.base = static_cast<std::byte*>(
        req.pooled ? buffers->backend->allocate_pooled(bytes, align, kind, device_id,
                                                       buffers->default_stream)
                   : buffers->backend->allocate(bytes, align, kind, device_id));
    dv.owner = side_owner::backend;
    dv.kind = kind;
    dv.device_id = device_id;
    dv.dl_device_type = buffers->backend->dl_device_type(kind);
    dv.dl_device_id = device::dl::device_id_for(dv.dl_device_type, device_id);
    dv.bytes = plan.allocation_bytes;
    set_root_array(dv.full, dv.base + plan.byte_offset, plan);
    dv.dense_allocation = true;
    stats().device_bytes.fetch_add(plan.allocation_bytes, std::memory_order_relaxed);
    if (managed == managed_kind::unified) {
      side_buffer& h = buffers->host;
      h = dv;
      h.owner = side_owner::alias;
    }
  }

  auto st = std::unique_ptr<storage>(new storage);  // default-init: arrays filled below
  st->buffers = std::move(buffers);
  // A storage with only a host side has the geometry of every other one of its plan, but for
  // its data: copied from the memo after the first (it is derived below and kept there).
  const bool host_only = !need_device;
  if (host_only && memo_geometry != nullptr && memo_geometry->valid) {
    // memcpy: wide moves (the assignment compiled to 117 eight-byte ones).
    std::memcpy(static_cast<view_geometry*>(st.get()), &memo_geometry->slot.geometry,
                sizeof(view_geometry));
    st->data[idx(side::host)] = st->buffers->host.full.data;
  } else {
    derive_geometry(*st, plan);
    if (host_only && memo_geometry != nullptr) {
      view_geometry& g = *::new (&memo_geometry->slot.geometry) view_geometry(*st);
      g.data = {};
      memo_geometry->id = next_geometry_id.fetch_add(1, std::memory_order_relaxed);
      memo_geometry->valid = true;
    }
  }
  if (host_only && req.host_memory == host_memory_kind::pageable && memo_geometry != nullptr) {
    st->recycle.id = memo_geometry->id;
  }
  return st;
}

}  // namespace

std::unique_ptr<storage> storage::create(const create_request& req) {
  // This thread's memo of recent plans (a small create spent most of its time planning). Valid
  // until this thread plans again, which nothing below does.
  host_geometry_slot* memo_geometry = nullptr;
  const allocation_plan& plan = cached_plan(req.plan, memo_geometry);
  if (req.init == init_kind::value && req.fill_value == nullptr)
    fail_arg("fill_value", "must not be NULL with GTSTORAGE_INIT_VALUE");
  if (req.init == init_kind::copy) {
    if (req.source == nullptr) fail_arg("source", "must not be NULL with GTSTORAGE_INIT_COPY");
    check_same_shape(plan.ndim, plan.shape.data(), req.source->ndim, req.source->shape, "source");
  }
  const bool gpu = req.device == device_choice::preset
                       ? plan.source_preset.device == device_kind::gpu
                       : req.device == device_choice::gpu;
  const managed_kind managed = gpu ? req.managed : managed_kind::none;
  if (!gpu && req.managed != managed_kind::none) {
    fail_arg(
        "managed",
        "a CPU storage cannot be managed (GTSTORAGE_MANAGED_MIRROR/UNIFIED need device = GPU)");
  }
  if (req.device_id < -1) fail_arg("device_id", std::to_string(req.device_id) + " must be ≥ -1");

  const bool need_host = !gpu || managed == managed_kind::mirror;
  // A small host storage released earlier on this thread from the same plan, else a new one.
  std::unique_ptr<storage> st;
  if (!gpu && req.host_memory == host_memory_kind::pageable && memo_geometry != nullptr &&
      memo_geometry->valid) {
    st = take_spare(memo_geometry->id);
  }
  if (st == nullptr) st = new_storage(req, plan, gpu, managed, memo_geometry);
  buffer_set* const bs = st->buffers.get();

  // Initial contents: written on the host when there is one (mirrors then start host-dirty, so
  // the first device use transfers once), else on the device.
  const side init_side = need_host || managed == managed_kind::unified ? side::host : side::device;
  const bool host_side = host_accessible(*st, init_side);
  const side_buffer& ib = bs->get(init_side);
  device::backend* be = bs->backend;
  auto fill_with = [&](const strided_array& target, const void* value) {
    if (host_side && managed != managed_kind::unified) {
      kernels::fill(target, value);
    } else {
      device::enqueue_or_drain(*be, 0, [&] { be->fill(target, value, 0); });
      be->synchronize(0);
    }
  };
  switch (req.init) {
    case init_kind::zeros: {  // zeros: padding and halo included; fresh mappings are already zero
      if (ib.owner == side_owner::host_block && ib.block.fresh_zero) break;
      if (host_side && managed != managed_kind::unified && ib.bytes <= small_fill_bytes) {
        std::memset(ib.base, 0, static_cast<size_t>(ib.bytes));  // what the kernel does there
      } else {
        const std::byte zero{0};
        fill_with(bytes_array(ib.base, ib.bytes), &zero);
      }
      break;
    }
    case init_kind::ones:
    case init_kind::value: {
      alignas(16) std::byte value[16] = {};
      if (req.init == init_kind::ones) {
        const double one = 1.0;
        kernels::convert_element(value, plan.type, &one, dtype{'f', 8});
      } else {
        std::memcpy(value, req.fill_value, static_cast<size_t>(plan.type.itemsize));
      }
      fill_with(ib.full, value);
      break;
    }
    case init_kind::copy:
      move_elements(ib.full, host_side, *req.source, true, 0, bs->backend, &bs->transfers);
      break;
    case init_kind::uninitialized:
      break;
  }
  if (req.init != init_kind::uninitialized && bs->mirrored()) {
    bs->modify(side::host, false, 0, true);
  }
  st->readonly = req.readonly;
  return st;
}

void storage::retire(storage* s) noexcept {
  // The handle stops using its stream (the application may destroy the stream after this).
  if (s != nullptr && s->stream != 0 && s->buffers != nullptr) s->buffers->leave_stream(s->stream);
#if GTS_KEEP_STORAGES
  if (s != nullptr && keepable(*s)) {
    spare_list& l = tls_ref(spares);
    if (!l.dead) {
      if (!l.reaper_set) register_list(l);
      s->buffers->host.block.fresh_zero = false;  // its contents are the last user's
      count_kept(l, *s, 1);
      // An empty place, else the one kept longest.
      storage** place = nullptr;
      for (storage*& k : l.spares) {
        if (k == nullptr) {
          place = &k;
          break;
        }
      }
      if (place == nullptr) {
        place = &l.spares[l.next_evicted];
        l.next_evicted = (l.next_evicted + 1) % spare_count;
        drop_kept(l, *place);
      }
      *place = s;
      return;
    }
  }
#endif
  delete s;
}

kept_counts kept_totals() {
  kept_counts k;
#if GTS_KEEP_STORAGES
  kept_registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  for (const spare_list* l = r.head; l != nullptr; l = l->next) {
    k.buffers += l->kept_buffers.load(std::memory_order_relaxed);
    k.host_bytes += l->kept_bytes.load(std::memory_order_relaxed);
  }
#endif
  return k;
}

namespace {

// Fails unless the span of wrapped side @p b lies inside the allocation the backend knows for
// its element (0, …, 0), the address the caller gave (nothing to check where it knows none, or
// for an array without elements).
void check_inside_allocation(device::backend& be, const side_buffer& b, const char* param) {
  if (b.bytes == 0) return;
  const void* base = nullptr;
  std::size_t bytes = 0;
  if (!be.tools().allocation_range(b.full.data, &base, &bytes)) return;
  const auto lo = reinterpret_cast<uintptr_t>(b.base);
  const auto start = reinterpret_cast<uintptr_t>(base);
  const uintptr_t end = start + bytes;
  if (lo < start || static_cast<uint64_t>(b.bytes) > end - lo) {
    char text[96];
    std::snprintf(text, sizeof text, "[%p, +%lld) lies outside the allocation [%p, +%zu)",
                  static_cast<const void*>(b.base), static_cast<long long>(b.bytes), base, bytes);
    fail_arg(std::string(param) + "data",
             std::string("the elements' bytes ") + text +
                 " that the device backend reports for that address (shape or strides too large)");
  }
}

// Host data that the device runtime knows as device memory would be read and written by host
// code (a fill, a copy, NumPy): refused. Unified and pinned memory are host-addressable, and
// where the runtime knows their allocation the elements must lie inside it. Asked only of a
// backend already in use, so that a host-only program never starts a GPU runtime (memory of a
// runtime the library has not used cannot be told from host memory).
void check_host_memory(const side_buffer& b, const void* data) {
  device::backend* be = device::selected();
  if (be == nullptr || data == nullptr || be->device_count() <= 0) return;
  const device::pointer_info pi = be->tools().query_pointer(data);
  if (pi.space == device::pointer_space::host) return;
  if (pi.space == device::pointer_space::device) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", data);
    fail_arg("data", std::string(addr) + " is device memory (device " +
                         std::to_string(pi.device_id) + " of the '" + be->name() +
                         "' device backend), which host code cannot address (wrap it as device "
                         "memory)");
  }
  check_inside_allocation(*be, b, "");
}

}  // namespace

std::unique_ptr<storage> storage::wrap(const wrap_request& req) {
  if (req.ndim < 0 || req.ndim > max_ndim) {
    fail_arg("ndim", std::to_string(req.ndim) + " is out of range 0 … " + std::to_string(max_ndim));
  }
  if (req.shape == nullptr && req.ndim > 0) fail_arg("shape", "must not be NULL");
  if (req.data == nullptr && req.device_data == nullptr) {
    bool empty = false;
    for (int d = 0; d < req.ndim; ++d) empty = empty || req.shape[d] == 0;
    if (!empty) fail_arg("data", "data and device_data must not both be NULL");
  }
  if (req.device_id < -1) fail_arg("device_id", std::to_string(req.device_id) + " must be ≥ -1");
  // An ordinal says where device_data lives; host memory has none, and accepting one anyway
  // would let a caller believe the storage is on that device.
  if (req.device_data == nullptr && req.device_id != -1 && !req.empty_device) {
    fail_arg("device_id", std::to_string(req.device_id) +
                              " was given, but there is no device_data (host memory has no "
                              "device ordinal: pass -1)");
  }
  // A dirty side needs two sides; one buffer is always in sync with itself.
  if ((req.data == nullptr || req.device_data == nullptr) && req.sync_state != sync_state::clean) {
    fail_arg("sync_state",
             std::string(req.sync_state == sync_state::host_dirty ? "GTSTORAGE_SYNC_HOST_DIRTY"
                                                                  : "GTSTORAGE_SYNC_DEVICE_DIRTY") +
                 " describes a host + device pair; a wrap of one buffer is "
                 "GTSTORAGE_SYNC_CLEAN");
  }
  auto st = std::unique_ptr<storage>(new storage);
  const int n = req.ndim;
  st->ndim = n;
  st->type = parse_dtype(req.dtype);
  st->dims = parse_dims(req.dims, n);
  for (int d = 0; d < n; ++d) {
    if (req.shape[d] < 0) {
      fail_arg("shape", "extent " + std::to_string(req.shape[d]) + " of dimension " +
                            std::to_string(d) + " must be ≥ 0");
    }
    st->shape[d] = req.shape[d];
    const int64_t lo = req.halo ? req.halo[2 * d] : 0;
    const int64_t hi = req.halo ? req.halo[2 * d + 1] : 0;
    if (lo < 0 || hi < 0 || lo > st->shape[d] || hi > st->shape[d] - lo) {
      fail_arg("halo", "widths (" + std::to_string(lo) + ", " + std::to_string(hi) +
                           ") of dimension " + std::to_string(d) +
                           " must be ≥ 0 and fit in its extent " + std::to_string(st->shape[d]));
    }
    st->halo[d] = {lo, hi};
    st->aligned_index[d] = lo < st->shape[d] ? lo : -1;
  }
  auto buffers = std::allocate_shared<buffer_set>(object_allocator<buffer_set>());
  for (int k = 0; k < 2; ++k) {
    for (int d = 0; d < n; ++d) st->strides[k][d] = 0;  // absent sides keep zero strides
  }
  auto setup = [&](side s, void* ptr, const int64_t* strides_in, const char* param) {
    strided_array a = caller_array(ptr, n, req.shape, strides_in ? strides_in : req.strides,
                                   nullptr, st->type, param);
    side_buffer& b = buffers->get(s);
    b.owner = side_owner::wrapped;
    b.readonly = req.readonly;
    b.full = a;
    std::byte *lo = nullptr, *hi = nullptr;
    span_of(a, lo, hi);
    b.base = lo;
    b.bytes = hi - lo;
    b.dense_allocation = b.bytes == a.size() * a.type.itemsize;
    st->data[idx(s)] = a.data;
    for (int d = 0; d < n; ++d) st->strides[idx(s)][d] = a.strides[d];
  };
  // An empty array may come without any pointer (NumPy, Fortran and CUDA do that): a host side
  // at an address of the library's own, since descriptors promise a non-null data address.
  bool empty = false;
  for (int d = 0; d < n; ++d) empty = empty || req.shape[d] == 0;
  const bool empty_device =
      empty && req.empty_device && req.data == nullptr && req.device_data == nullptr;
  if (req.data != nullptr || (req.device_data == nullptr && empty && !empty_device)) {
    setup(side::host, req.data != nullptr ? req.data : empty_span, req.strides, "");
    check_host_memory(buffers->host, req.data);
  }
  if (req.device_data != nullptr || empty_device) {
    device::backend& be = device::active();
    if (be.device_count() <= 0) {
      fail(be.no_device_kind(), std::string("device_data: no usable GPU (device backend '") +
                                    be.name() + "' reports 0 devices: " + be.no_device_reason() +
                                    ")");
    }
    if (req.device_id >= be.device_count()) {
      fail_arg("device_id", std::to_string(req.device_id) + " is out of range 0 … " +
                                std::to_string(be.device_count() - 1));
    }
    // The runtime knows what the memory is and where it lives (a CuPy array on GPU 1, managed
    // memory, pinned host memory): that, not the caller's current device, goes into the
    // descriptors.
    device::pointer_info pi = be.tools().query_pointer(req.device_data);
    if (empty_device) {  // no address to ask about: device memory where the caller says
      pi.space = device::pointer_space::device;
      pi.device_id = req.device_id >= 0 ? req.device_id : be.current_device();
    }
    if (pi.space == device::pointer_space::host) {
      char addr[32];
      std::snprintf(addr, sizeof addr, "%p", req.device_data);
      fail_arg("device_data", std::string(addr) +
                                  " is not device, managed or pinned memory of the '" + be.name() +
                                  "' device backend (the runtime reports ordinary " +
                                  "host memory; pass host memory as data)");
    }
    const auto kind = pi.space == device::pointer_space::unified ? device::memory_kind::unified
                      : pi.space == device::pointer_space::pinned_host
                          ? device::memory_kind::pinned_host
                          : device::memory_kind::device;
    const int id = pi.device_id >= 0 ? pi.device_id : 0;
    if (req.device_id >= 0 && kind != device::memory_kind::pinned_host && req.device_id != id) {
      fail_arg("device_id", std::to_string(req.device_id) +
                                " was given, but device_data lives on device " +
                                std::to_string(id));
    }
    setup(side::device, empty_device ? empty_span : req.device_data, req.device_strides, "device_");
    // Where the backend knows the allocation, the elements must lie inside it: a shape larger
    // than the memory would let a fill or copy write past its end (the device does not check).
    check_inside_allocation(be, buffers->device, "device_");
    buffers->backend = &be;
    buffers->device.kind = kind;
    buffers->device.device_id = id;
    buffers->device.dl_device_type = be.dl_device_type(kind);
    buffers->device.dl_device_id = device::dl::device_id_for(buffers->device.dl_device_type, id);
    buffers->managed = req.data != nullptr ? managed_kind::mirror : managed_kind::none;
    if (req.data != nullptr) {
      if (req.sync_state == sync_state::clean) {
        buffers->mark_synchronized(0, true);
      } else {
        buffers->modify(req.sync_state == sync_state::host_dirty ? side::host : side::device, true,
                        0, true);
      }
    }
  }
  st->buffers = buffers;
  st->readonly = req.readonly;
  // Only now can nothing fail any more: from here on the callback belongs to the buffers.
  buffers->release = req.release;
  buffers->release_user_data = req.user_data;
  st->finalize();
  return st;
}

std::unique_ptr<storage> storage::slice(const slice_range* ranges, int n) const {
  if (ranges == nullptr) fail_arg("spec", "must not be NULL");
  if (n != ndim) {
    fail_arg("nspec",
             std::to_string(n) + " specs given for a storage of ndim " + std::to_string(ndim));
  }
  auto v = std::make_unique<storage>(*this);
  v->ndim = 0;
  for (int s = 0; s < 2; ++s) v->data[s] = data[s];
  // Moves a view's data pointer to element `i` along a stride. The offset cannot overflow for a
  // storage that holds elements (its span was checked when it was made); an empty one may carry
  // any strides, and there an unrepresentable offset leaves the pointer where it is: nothing
  // will ever be read through it.
  const auto advance = [](std::byte*& p, int64_t i, int64_t stride) {
    int64_t offset = 0;
    if (p == nullptr || __builtin_mul_overflow(i, stride, &offset)) return;
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    const auto magnitude =
        offset < 0 ? 0 - static_cast<std::uintptr_t>(offset) : static_cast<std::uintptr_t>(offset);
    const bool wraps = offset < 0 ? magnitude > address : magnitude > UINTPTR_MAX - address;
    if (!wraps) p += offset;
  };
  for (int d = 0; d < ndim; ++d) {
    const slice_range& r = ranges[d];
    const int64_t extent = shape[d];
    const std::string where =
        " of dimension " + std::to_string(d) + " (extent " + std::to_string(extent) + ")";
    if (r.index) {
      int64_t i = r.start < 0 ? r.start + extent : r.start;
      if (r.start == INT64_MIN || i < 0 || i >= extent) {
        fail_arg("spec",
                 "index " + (r.start == INT64_MIN ? std::string("NONE") : std::to_string(r.start)) +
                     where + " is out of range");
      }
      for (int s = 0; s < 2; ++s) advance(v->data[s], i, strides[s][d]);
      continue;
    }
    if (r.step == 0) fail_arg("spec", "step" + where + " must not be 0");
    if (r.step == INT64_MIN) fail_arg("spec", "step" + where + " is out of range");
    // Python's slice.indices(extent).
    int64_t start, stop;
    const int64_t step = r.step;
    const int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? extent - 1 : extent;
    auto clampi = [&](int64_t x, int64_t dflt) {
      if (x == INT64_MIN) return dflt;
      if (x < 0) {
        x += extent;
        return x < lower ? lower : x;
      }
      return x > upper ? upper : x;
    };
    start = clampi(r.start, step < 0 ? upper : lower);
    stop = clampi(r.stop, step < 0 ? lower : upper);
    int64_t len = 0;
    if (step > 0 && start < stop) len = (stop - start - 1) / step + 1;
    if (step < 0 && stop < start) len = (start - stop - 1) / (-step) + 1;
    const int o = v->ndim++;
    v->shape[o] = len;
    v->dims[o] = dims[d];
    for (int s = 0; s < 2; ++s) {
      if (len > 0) advance(v->data[s], start, strides[s][d]);
      // stride * step as NumPy; only where it overflows and the extent is at most 1 (so the
      // stride is never used to address anything) is the original stride kept instead.
      int64_t strided = 0;
      if (__builtin_mul_overflow(strides[s][d], step, &strided)) {
        if (len > 1) fail_arg("spec", "step" + where + " makes the stride overflow");
        strided = strides[s][d];
      }
      v->strides[s][o] = strided;
    }
    if (step == 1) {
      const int64_t lo = std::clamp<int64_t>(halo[d][0] - start, 0, len);
      const int64_t hi = std::clamp<int64_t>(start + len - (extent - halo[d][1]), 0, len - lo);
      v->halo[o] = {lo, hi};
    } else {
      v->halo[o] = {0, 0};
    }
    const int64_t ai = aligned_index[d];
    int64_t nai = -1;
    if (ai >= 0 && len > 0 && (ai - start) % step == 0) {
      const int64_t k = (ai - start) / step;
      if (k >= 0 && k < len) nai = k;
    }
    v->aligned_index[o] = nai;
  }
  v->finalize();
  return v;
}

std::unique_ptr<storage> storage::transpose(const int32_t* perm, int n) const {
  if (perm == nullptr && n != 0) fail_arg("perm", "must not be NULL");
  if (n != ndim) {
    fail_arg("nperm",
             std::to_string(n) + " entries given for a storage of ndim " + std::to_string(ndim));
  }
  bool seen[max_ndim] = {};
  for (int d = 0; d < n; ++d) {
    if (perm[d] < 0 || perm[d] >= n || seen[perm[d]]) {
      fail_arg("perm", "is not a permutation of 0 … " + std::to_string(n - 1));
    }
    seen[perm[d]] = true;
  }
  auto v = std::make_unique<storage>(*this);
  for (int d = 0; d < n; ++d) {
    const int o = perm[d];
    v->shape[d] = shape[o];
    v->dims[d] = dims[o];
    v->halo[d] = halo[o];
    v->aligned_index[d] = aligned_index[o];
    for (int s = 0; s < 2; ++s) v->strides[s][d] = strides[s][o];
  }
  v->finalize();
  return v;
}

std::unique_ptr<storage> storage::domain_view() const {
  slice_range r[max_ndim];
  for (int d = 0; d < ndim; ++d) r[d] = {halo[d][0], shape[d] - halo[d][1], 1, false};
  return slice(r, ndim);
}

void storage::copy_from(const storage& src) {
  check_same_shape(ndim, shape.data(), src.ndim, src.shape.data(), "src");
  const side ss = read_side(src);
  const side ds = prepare_write(*this, "dst");
  const bool dst_host = host_accessible(*this, ds), src_host = host_accessible(src, ss);
  // The source may be another producer's device buffer on its own stream (a wrapped CUDA Array
  // Interface v3 buffer adopts it): what is queued there must land before this copy reads it.
  if (!src_host && src.stream != stream) src.buffers->backend->synchronize(src.stream);
  // A transfer goes through (and is counted by) the device side's buffers.
  const storage& dev = !dst_host ? *this : src;
  move_elements(array(ds), dst_host, src.array(ss), src_host, stream, dev.buffers->backend,
                dst_host && src_host ? nullptr : &dev.buffers->transfers);
  finish_write(*this, ds);
}

void storage::copy_from_host(const strided_array& src) {
  check_same_shape(ndim, shape.data(), src.ndim, src.shape, "src");
  const side ds = prepare_write(*this, "dst");
  move_elements(array(ds), host_accessible(*this, ds), src, true, stream, buffers->backend,
                &buffers->transfers);
  finish_write(*this, ds);
}

void storage::copy_sides(side ds, const storage& src, side ss, uint64_t stream, bool wait,
                         bool streaming) {
  check_same_shape(ndim, shape.data(), src.ndim, src.shape.data(), "src");
  auto side_name = [](side sd) { return sd == side::host ? "host" : "device"; };
  if (!has(ds)) {
    fail(error_kind::no_such_buffer,
         std::string("dst: the storage has no ") + side_name(ds) + " buffer");
  }
  if (!src.has(ss)) {
    fail(error_kind::no_such_buffer,
         std::string("src: the storage has no ") + side_name(ss) + " buffer");
  }
  if (readonly || buffers->get(ds).readonly) {
    fail(error_kind::readonly, "dst: the storage is read-only");
  }
  wait_for_device_work(src);
  wait_for_device_work(*this);
  const bool dst_host = host_accessible(*this, ds), src_host = host_accessible(src, ss);
  const auto stores =
      streaming ? kernels::store_policy::streaming : kernels::store_policy::automatic;
  if (dst_host && src_host) {
    src.buffers->wait_pending();
    buffers->wait_pending();
    move_elements(array(ds), true, src.array(ss), true, 0, nullptr, nullptr, true, stores);
    return;
  }
  // The work runs on one stream; what is queued on the other storage's device side must land
  // first (it may still be writing the source, or reading the destination), and so must the
  // work the library left queued on either buffer set: an async copy of one dtype touches the
  // memory only on the stream, which waits for it on the device; every other copy may touch
  // host memory from the host (staging for a dtype conversion), so the host waits.
  const uint64_t on = stream != 0 ? stream : (!src_host ? src.stream : this->stream);
  const storage& dev = !dst_host ? *this : src;
  device::backend& be = *dev.buffers->backend;
  if (!wait && type == src.type) {
    src.buffers->order_after_pending(be, on);
    buffers->order_after_pending(be, on);
  } else {
    src.buffers->wait_pending();
    buffers->wait_pending();
  }
  if (!src_host && src.stream != on) src.buffers->backend->synchronize(src.stream);
  if (!dst_host && this->stream != on) buffers->backend->synchronize(this->stream);
  const bool queued = move_elements(array(ds), dst_host, src.array(ss), src_host, on, &be,
                                    &dev.buffers->transfers, wait, stores);
  // Left queued: both memories are in use until the copy lands, whoever is released or
  // touched next (F6 of issue 23: the release of an async copy's destination freed host
  // memory the copy still wrote).
  if (queued) {
    const int device_id = dev.buffers->device.device_id;
    src.buffers->queued_on(be, device_id, on);
    if (buffers != src.buffers) buffers->queued_on(be, device_id, on);
  }
}

void storage::copy_to_host(const strided_array& dst) const {
  check_same_shape(ndim, shape.data(), dst.ndim, dst.shape, "dst");
  const side ss = read_side(*this);
  move_elements(dst, true, array(ss), host_accessible(*this, ss), stream, buffers->backend,
                &buffers->transfers);
}

void storage::fill(const void* value) {
  if (value == nullptr) fail_arg("value", "must not be NULL");
  const side ds = prepare_write(*this, "handle");
  const strided_array a = array(ds);
  // Unified memory is filled on the device, where it lives; any other memory the host reaches
  // (a host side, also the wrapped host side of a pair whose device side is unified) on the host.
  if (host_accessible(*this, ds) && buffers->get(ds).kind != device::memory_kind::unified) {
    kernels::fill(a, value);
  } else {
    device::backend& be = *buffers->backend;
    device::enqueue_or_drain(be, stream, [&] { be.fill(a, value, stream); });
    be.synchronize(stream);
  }
  finish_write(*this, ds);
}

}  // namespace gts
