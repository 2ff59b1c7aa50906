// Every exported gtstorage_* entry point except the error/status functions (boundary.cpp), the
// sync ones (capi_sync.cpp) and the DLPack ones (capi_dlpack.cpp). Each one: check the C arguments,
// translate public enum values (enums.hpp), call into the storage layer inside guarded(), and copy
// results out.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "capi/boundary.hpp"
#include "capi/entry_checks.hpp"
#include "capi/enums.hpp"
#include "capi/handle_table.hpp"
#include "capi/interface.hpp"
#include "device/device_backend.hpp"
#include "kernels/kernels.hpp"
#include "layout/allocation_plan.hpp"
#include "storage/plan_cache.hpp"
#include "storage/pools.hpp"
#include "storage/storage.hpp"

// The boundary (guarded, the struct-size contract of boundary.hpp: every size a struct had in a
// released version is accepted, inputs are read and outputs written only up to the caller's
// struct_size), its argument checks and the handle table.
using namespace gts::capi;

namespace gts::capi {

void fail_null(const char* name) {
  gts::fail_arg(name, "must not be NULL");
}

void fail_side(int32_t side) {
  gts::fail_arg("side", std::to_string(side) + " is not GTSTORAGE_SIDE_HOST (0) or _DEVICE (1)");
}

}  // namespace gts::capi

namespace {

// Copies @p full into @p out up to the caller's struct_size (checked by check_struct).
template <class T>
void copy_out(T* out, const T& full) {
  const uint32_t size = out->struct_size;
  std::memcpy(out, &full, size);
  out->struct_size = size;
}

// A count the caller passed as uint32_t (ndim, nperm), checked before it is narrowed, so the
// message shows the value the caller wrote (4294967295, not a clamped one).
int count_arg(uint32_t n, const std::string& name) {
  if (__builtin_expect(n > GTSTORAGE_MAX_NDIM, 0)) {
    gts::fail_arg(name,
                  std::to_string(n) + " is out of range 0 … " + std::to_string(GTSTORAGE_MAX_NDIM));
  }
  return static_cast<int>(n);
}

// A handle argument named as the caller wrote it: the table reports "handle: …"; calls with
// two handles (or one called src/dst) say which one ("src: 42 was released …").
[[noreturn]] __attribute__((cold, noinline)) void rethrow_as(const gts::error& e,
                                                             const char* name) {
  std::string msg = e.what();
  const std::string prefix = "handle:";
  if (msg.compare(0, prefix.size(), prefix) == 0) msg = name + (":" + msg.substr(prefix.size()));
  throw gts::error(e.kind(), msg);
}

gts::storage& get_as(gtstorage_handle h, const char* name) {
  try {
    return table().get(h);
  } catch (const gts::error& e) {
    rethrow_as(e, name);
  }
}

// The pools a ::gtstorage_memory value names (ALL: every pool).
int pools_of(int32_t memory, bool allow_all, gts::pool_memory* out) {
  switch (memory) {
    case GTSTORAGE_MEMORY_HOST:
      out[0] = gts::pool_memory::host;
      return 1;
    case GTSTORAGE_MEMORY_PINNED_HOST:
      out[0] = gts::pool_memory::pinned_host;
      return 1;
    case GTSTORAGE_MEMORY_DEVICE:
      out[0] = gts::pool_memory::device;
      return 1;
    case GTSTORAGE_MEMORY_ALL:
      if (!allow_all) break;
      out[0] = gts::pool_memory::host;
      out[1] = gts::pool_memory::pinned_host;
      out[2] = gts::pool_memory::device;
      return 3;
    default:
      break;
  }
  gts::fail_arg("memory",
                std::to_string(memory) + " is not a gtstorage_memory (" +
                    (allow_all ? "0 … 3" : "0 … 2; GTSTORAGE_MEMORY_ALL is not one pool") + ")");
}

void check_bytes(int64_t value, const char* name) {
  if (value < 0) gts::fail_arg(name, std::to_string(value) + " is negative");
}

// Applies @p apply(pool, bytes) to every pool @p memory names (ALL: each), @p bytes checked
// first (named @p name in the message).
int for_each_pool(int32_t memory, int64_t bytes, const char* name,
                  void (*apply)(gts::pool_memory, int64_t)) {
  return guarded([&] {
    gts::pool_memory m[3];
    const int n = pools_of(memory, true, m);
    check_bytes(bytes, name);
    for (int i = 0; i < n; ++i) apply(m[i], bytes);
  });
}

// The fields that a create and a wrap request both take from their options: the array's
// extents, element type, dims labels and halo (ndim checked by count_arg).
template <class Request, class Options>
void copy_geometry(const Options* o, Request& r) {
  r.ndim = count_arg(o->ndim, "ndim");
  r.shape = o->shape;
  r.dtype = o->dtype;
  r.dims = o->dims;
  r.halo = o->halo;
}

void fill_plan_request(const gtstorage_create_options* o, gts::plan_request& r) {
  copy_geometry(o, r);
  r.preset = o->preset;
  r.layout = o->layout;
  r.aligned_index = o->aligned_index;
  r.alignment_bytes = o->alignment_bytes;
  r.padding = gts::capi::pitch_padding_of(o->pitch_padding);
}

gts::plan_request plan_request_of(const gtstorage_create_options* o) {
  gts::plan_request r;
  fill_plan_request(o, r);
  return r;
}

gts::strided_array array_of(const gtstorage_array* a, gts::dtype fallback, const char* name) {
  static const gtstorage_array defaults = GTSTORAGE_ARRAY_INIT;
  gtstorage_array local;
  a = read_in(a, name, local, defaults);
  const std::string prefix = std::string(name) + ".";  // messages name "src.shape" etc.
  return gts::caller_array(a->data, count_arg(a->ndim, prefix + "ndim"), a->shape, a->strides,
                           a->dtype, fallback, prefix.c_str());
}

void copy_name(char* dst, size_t size, const char* src) {
  const size_t n = std::min(std::strlen(src), size - 1);
  std::memcpy(dst, src, n);
  dst[n] = '\0';
}

}  // namespace

extern "C" {

uint32_t gtstorage_version(void) {
  return GTSTORAGE_VERSION_NUMBER;
}

const char* gtstorage_version_string(void) {
#define GTS_STR2(x) #x
#define GTS_STR(x) GTS_STR2(x)
  return GTS_STR(GTSTORAGE_VERSION_MAJOR) "." GTS_STR(GTSTORAGE_VERSION_MINOR) "." GTS_STR(
      GTSTORAGE_VERSION_PATCH);
}

int gtstorage_retain(gtstorage_handle handle) {
  return guarded([&] { table().retain(handle); });
}

int gtstorage_release(gtstorage_handle handle) {
  return guarded([&] { table().release(handle); });
}

int gtstorage_refcount(gtstorage_handle handle, int64_t* out_count) {
  return guarded([&] {
    check_out(out_count, "out_count");
    *out_count = table().refcount(handle);
  });
}

namespace {
const gtstorage_create_options create_defaults = GTSTORAGE_CREATE_OPTIONS_INIT;
const gtstorage_wrap_options wrap_defaults = GTSTORAGE_WRAP_OPTIONS_INIT;
const gtstorage_dlpack_options dlpack_defaults = GTSTORAGE_DLPACK_OPTIONS_INIT;
}  // namespace

int gtstorage_create_options_init_sized(gtstorage_create_options* options, size_t struct_size) {
  return guarded([&] { gts::capi::init_sized(options, struct_size, create_defaults, "options"); });
}

int gtstorage_create_options_init(gtstorage_create_options* options) {
  // The size-less form writes the layout it was introduced with (1.0), never more: a caller
  // built against 1.0 has a struct of that size, whatever this library's sizeof is.
  return gtstorage_create_options_init_sized(options,
                                             gts::capi::first_size<gtstorage_create_options>());
}

int gtstorage_wrap_options_init_sized(gtstorage_wrap_options* options, size_t struct_size) {
  return guarded([&] { gts::capi::init_sized(options, struct_size, wrap_defaults, "options"); });
}

int gtstorage_wrap_options_init(gtstorage_wrap_options* options) {
  return gtstorage_wrap_options_init_sized(options,
                                           gts::capi::first_size<gtstorage_wrap_options>());
}

int gtstorage_dlpack_options_init_sized(gtstorage_dlpack_options* options, size_t struct_size) {
  return guarded([&] { gts::capi::init_sized(options, struct_size, dlpack_defaults, "options"); });
}

int gtstorage_create(const gtstorage_create_options* options, gtstorage_handle* out) {
  return guarded([&] {
    gtstorage_create_options local;
    const auto* const opts = read_in(options, "options", local, create_defaults);
    check_out(out, "out");
    gts::create_request req;
    fill_plan_request(opts, req.plan);
    req.device = gts::capi::device_choice_of(opts->device);
    req.managed = gts::capi::managed_of(opts->managed);
    req.host_memory = gts::capi::host_memory_of(opts->host_memory);
    req.init = gts::capi::init_of(opts->init);
    req.device_id = opts->device_id;
    req.readonly = opts->readonly != 0;
    req.fill_value = opts->fill_value;
    if (opts->pool != GTSTORAGE_POOL_DEFAULT && opts->pool != GTSTORAGE_POOL_OFF) {
      gts::fail_arg("pool",
                    std::to_string(opts->pool) + " is not a gtstorage_pool_use (0 default, 1 off)");
    }
    req.pooled = opts->pool == GTSTORAGE_POOL_DEFAULT;
    gts::strided_array source;
    if (opts->init == GTSTORAGE_INIT_COPY && opts->source != nullptr) {
      // The source's dtype defaults to the storage's.
      source = array_of(opts->source, gts::parse_dtype(opts->dtype), "source");
      req.source = &source;
    }
    *out = table().insert(gts::storage::create(req));
  });
}

int gtstorage_wrap(const gtstorage_wrap_options* options, gtstorage_handle* out) {
  return guarded([&] {
    gtstorage_wrap_options local;
    const auto* const opts = read_in(options, "options", local, wrap_defaults);
    check_out(out, "out");
    if (opts->reserved != 0) gts::fail_arg("options.reserved", "must be 0");
    gts::wrap_request req;
    copy_geometry(opts, req);
    req.data = opts->data;
    req.strides = opts->strides;
    req.readonly = opts->readonly != 0;
    req.device_id = opts->device_id;
    req.release = opts->release;
    req.user_data = opts->user_data;
    req.device_data = opts->device_data;
    req.device_strides = opts->device_strides;
    req.sync_state = gts::capi::sync_state_of(opts->sync_state);
    auto st = gts::storage::wrap(req);
    // insert() can only fail when the table is full; the callback then runs as the storage is
    // destroyed, which is wrong for a failed wrap: detach it first and restore on success.
    auto buffers = st->buffers;
    const auto release = buffers->release;
    buffers->release = nullptr;
    *out = table().insert(std::move(st));
    buffers->release = release;
  });
}

int gtstorage_plan(const gtstorage_create_options* options, gtstorage_plan_info* out_info) {
  return guarded([&] {
    gtstorage_create_options local;
    const auto* const opts = read_in(options, "options", local, create_defaults);
    check_struct(out_info, "out");
    if (opts->device < GTSTORAGE_DEVICE_DEFAULT || opts->device > GTSTORAGE_DEVICE_GPU) {
      gts::fail_arg("device", std::to_string(opts->device) +
                                  " is not a gtstorage_device (0 default, 1 CPU, 2 GPU)");
    }
    const gts::allocation_plan& p = gts::cached_plan(plan_request_of(opts));
    write_out(out_info, "out", [&](gtstorage_plan_info* out) {
      const int n = p.ndim;
      out->ndim = static_cast<uint32_t>(n);
      for (int d = 0; d < n; ++d) {
        out->shape[d] = p.shape[d];
        out->padded_shape[d] = p.padded_shape[d];
        out->strides[d] = p.strides[d];
        out->layout[d] = p.layout[d];
        out->halo[d][0] = p.halo[d][0];
        out->halo[d][1] = p.halo[d][1];
        out->aligned_index[d] = p.aligned_index[d];
        std::memcpy(out->dims[d], p.dims[d].data(), GTSTORAGE_DIM_LABEL_SIZE);
      }
      copy_name(out->typestr, sizeof out->typestr, p.type.typestr().c_str());
      copy_name(out->preset, sizeof out->preset, p.source_preset.name.data());
      out->itemsize = p.type.itemsize;
      out->alignment_bytes = p.alignment_bytes;
      out->byte_offset = p.byte_offset;
      out->padded_bytes = p.padded_bytes;
      out->allocation_bytes = p.allocation_bytes;
      out->contiguous_dim = p.contiguous_dim;
      const bool gpu = opts->device == GTSTORAGE_DEVICE_DEFAULT
                           ? p.source_preset.device == gts::device_kind::gpu
                           : opts->device == GTSTORAGE_DEVICE_GPU;
      out->device = gpu ? GTSTORAGE_DEVICE_GPU : GTSTORAGE_DEVICE_CPU;
    });
  });
}

int gtstorage_preset_count(int32_t* out_count) {
  return guarded([&] {
    check_out(out_count, "out_count");
    *out_count = gts::preset_count();
  });
}

namespace {
void preset_to_info(const gts::preset& p, gtstorage_preset_info* out) {
  std::memcpy(out->name, p.name.data(), sizeof out->name);
  out->reserved = 0;
  out->alignment = p.alignment;
  out->alignment_unit = gts::capi::to_c(p.unit);
  out->device = gts::capi::to_c(p.device);
  out->rule = gts::capi::to_c(p.rule);
  for (int a = 0; a < 3; ++a) out->base_layout[a] = p.base_layout[a];
}
}  // namespace

int gtstorage_preset_at(int32_t index, gtstorage_preset_info* out) {
  return guarded([&] {
    check_struct(out, "out");
    const gts::preset& p = gts::preset_at(index);
    write_out(out, "out", [&](gtstorage_preset_info* o) { preset_to_info(p, o); });
  });
}

int gtstorage_preset_find(const char* name, gtstorage_preset_info* out) {
  return guarded([&] {
    if (name == nullptr) gts::fail_arg("name", "must not be NULL");
    check_struct(out, "out");
    const gts::preset& p = gts::find_preset(name);
    write_out(out, "out", [&](gtstorage_preset_info* o) { preset_to_info(p, o); });
  });
}

int gtstorage_preset_register(const gtstorage_preset_info* info) {
  return guarded([&] {
    static const gtstorage_preset_info preset_defaults = GTSTORAGE_PRESET_INFO_INIT;
    gtstorage_preset_info local;
    const auto* const in = read_in(info, "info", local, preset_defaults);
    if (in->reserved != 0) gts::fail_arg("info.reserved", "must be 0");
    gts::preset p;
    if (strnlen(in->name, sizeof in->name) == sizeof in->name) {
      gts::fail_arg("name", "is not NUL-terminated within 32 bytes");
    }
    std::memcpy(p.name.data(), in->name, sizeof in->name);
    p.alignment = in->alignment;
    p.unit = gts::capi::alignment_unit_of(in->alignment_unit);
    p.device = gts::capi::device_kind_of(in->device);
    p.rule = gts::capi::layout_rule_of(in->rule);
    for (int a = 0; a < 3; ++a) p.base_layout[a] = in->base_layout[a];
    gts::register_preset(p);
  });
}

int gtstorage_slice(gtstorage_handle src, const gtstorage_slice_spec* spec, uint32_t nspec,
                    gtstorage_handle* out) {
  return guarded([&] {
    check_out(out, "out");
    const gts::storage& s = get_as(src, "src");
    if (spec == nullptr && nspec != 0) gts::fail_arg("spec", "must not be NULL");
    if (nspec != static_cast<uint32_t>(s.ndim)) {
      gts::fail_arg("nspec", std::to_string(nspec) + " specs given for a storage of ndim " +
                                 std::to_string(s.ndim));
    }
    gts::slice_range r[gts::max_ndim];
    for (uint32_t d = 0; d < nspec; ++d) {
      if (spec[d].kind != GTSTORAGE_SLICE_RANGE && spec[d].kind != GTSTORAGE_SLICE_INDEX) {
        gts::fail_arg("spec", "kind " + std::to_string(spec[d].kind) + " of dimension " +
                                  std::to_string(d) + " is not GTSTORAGE_SLICE_RANGE or _INDEX");
      }
      if (spec[d].reserved != 0) {
        gts::fail_arg("spec", "reserved field of dimension " + std::to_string(d) + " must be 0");
      }
      r[d] = {spec[d].start, spec[d].stop, spec[d].step, spec[d].kind == GTSTORAGE_SLICE_INDEX};
    }
    *out = table().insert(s.slice(r, static_cast<int>(nspec)));
  });
}

int gtstorage_transpose(gtstorage_handle src, const int32_t* perm, uint32_t nperm,
                        gtstorage_handle* out) {
  return guarded([&] {
    check_out(out, "out");
    const gts::storage& s = get_as(src, "src");
    if (nperm != static_cast<uint32_t>(s.ndim)) {  // before narrowing: the caller's value
      gts::fail_arg("nperm", std::to_string(nperm) + " entries given for a storage of ndim " +
                                 std::to_string(s.ndim));
    }
    *out = table().insert(s.transpose(perm, static_cast<int>(nperm)));
  });
}

int gtstorage_domain_view(gtstorage_handle src, gtstorage_handle* out) {
  return guarded([&] {
    check_out(out, "out");
    *out = table().insert(get_as(src, "src").domain_view());
  });
}

int gtstorage_interface(gtstorage_handle handle, int32_t side, gtstorage_interface_info* out) {
  return guarded([&] {
    check_struct(out, "out");
    check_side(side);
    const gts::storage& s = table().get(handle);
    // A descriptor hands the memory out: the work the library left queued on it lands first.
    s.buffers->wait_pending();
    write_out(out, "out", [&](gtstorage_interface_info* o) {
      gts::capi::fill_interface(s, gts::capi::side_of(side), o);
    });
  });
}

int gtstorage_data(gtstorage_handle handle, int32_t side, void** out_data) {
  return guarded([&] {
    check_out(out_data, "out_data");
    check_side(side);
    const gts::storage& s = table().get(handle);
    if (!s.has(gts::capi::side_of(side))) gts::capi::fail_no_buffer(s, gts::capi::side_of(side));
    s.buffers->wait_pending();  // as gtstorage_interface
    *out_data = s.data[side];
  });
}

int gtstorage_has_side(gtstorage_handle handle, int32_t side, int32_t* out_has) {
  return guarded([&] {
    check_out(out_has, "out_has");
    check_side(side);
    *out_has = table().get(handle).has(gts::capi::side_of(side)) ? 1 : 0;
  });
}

int gtstorage_copy(gtstorage_handle dst, gtstorage_handle src) {
  return guarded([&] {
    gts::storage& d = get_as(dst, "dst");
    const gts::storage& s = get_as(src, "src");
    d.copy_from(s);
  });
}

int gtstorage_copy_sides(gtstorage_handle dst, int32_t dst_side, gtstorage_handle src,
                         int32_t src_side, uint64_t stream, uint32_t flags) {
  return guarded([&] {
    for (const auto& [value, name] : {std::pair{dst_side, "dst_side"}, {src_side, "src_side"}}) {
      if (value != GTSTORAGE_SIDE_HOST && value != GTSTORAGE_SIDE_DEVICE) {
        gts::fail_arg(name, std::to_string(value) +
                                " is not GTSTORAGE_SIDE_HOST (0) or GTSTORAGE_SIDE_DEVICE (1)");
      }
    }
    constexpr auto known = uint32_t(GTSTORAGE_COPY_FLAG_ASYNC | GTSTORAGE_COPY_FLAG_STREAMING);
    if ((flags & ~known) != 0) {
      gts::fail_arg("flags", std::to_string(flags) +
                                 " has bits other than GTSTORAGE_COPY_FLAG_ASYNC (1) and "
                                 "GTSTORAGE_COPY_FLAG_STREAMING (2)");
    }
    gts::storage& d = get_as(dst, "dst");
    const gts::storage& s = get_as(src, "src");
    check_stream(d, stream);
    check_stream(s, stream);
    d.copy_sides(gts::capi::side_of(dst_side), s, gts::capi::side_of(src_side), stream,
                 (flags & GTSTORAGE_COPY_FLAG_ASYNC) == 0,
                 (flags & GTSTORAGE_COPY_FLAG_STREAMING) != 0);
  });
}

int gtstorage_copy_from_array(gtstorage_handle dst, const gtstorage_array* src) {
  return guarded([&] {
    gts::storage& d = get_as(dst, "dst");
    d.copy_from_host(array_of(src, d.type, "src"));
  });
}

int gtstorage_copy_to_array(const gtstorage_array* dst, gtstorage_handle src) {
  return guarded([&] {
    const gts::storage& s = get_as(src, "src");
    s.copy_to_host(array_of(dst, s.type, "dst"));
  });
}

int gtstorage_fill(gtstorage_handle handle, const void* value) {
  return guarded([&] { table().get(handle).fill(value); });
}

int gtstorage_fill_double(gtstorage_handle handle, double value) {
  return guarded([&] {
    gts::storage& s = table().get(handle);
    alignas(16) unsigned char converted[16] = {};
    gts::kernels::convert_element(converted, s.type, &value, gts::dtype{'f', 8});
    s.fill(converted);
  });
}

int gtstorage_device_count(int32_t* out_count) {
  return guarded([&] {
    check_out(out_count, "out_count");
    gts::device::backend& be = gts::device::active();
    *out_count = be.device_count();
    // A GPU held back by an old driver is an error to report, not "no GPU here".
    if (*out_count == 0 && be.no_device_kind() == gts::error_kind::driver_too_old) {
      gts::fail(gts::error_kind::driver_too_old, be.no_device_reason());
    }
  });
}

int gtstorage_set_device_backend(const char* name) {
  return guarded([&] {
    if (name == nullptr) gts::fail_arg("name", "must not be NULL");
    // Naming the active backend switches nothing, so it is fine while storages live (an
    // unknown name fails here; an invalid GTSTORAGE_DEVICE_BACKEND leaves none active).
    gts::device::backend& wanted = gts::device::get_backend(name);
    bool active = false;
    try {
      active = &wanted == &gts::device::active();
    } catch (const gts::error&) {
    }
    if (active) return;
    if (gts::stats().device_bytes.load() != 0) {
      gts::fail_arg("name", std::string("cannot switch the device backend to '") + name +
                                "' while device storages of '" + gts::device::active().name() +
                                "' are alive");
    }
    gts::device::set_backend(name);
  });
}

int gtstorage_get_device_backend(char* buf, size_t size) {
  return guarded([&] {
    if (buf == nullptr) gts::fail_arg("buf", "must not be NULL");
    const char* name = gts::device::active().name();
    if (std::strlen(name) + 1 > size) {
      gts::fail(gts::error_kind::buffer_too_small,
                "size: " + std::to_string(size) + " bytes cannot hold '" + name + "'");
    }
    std::memcpy(buf, name, std::strlen(name) + 1);
  });
}

int gtstorage_set_device(int32_t device_id) {
  return guarded([&] {
    gts::device::backend& be = gts::device::active();
    const int count = be.device_count();
    if (count == 0) {
      gts::fail(be.no_device_kind(), "device_id: " + std::to_string(device_id) +
                                         " cannot be made current: " + be.no_device_reason());
    }
    if (device_id < 0 || device_id >= count) {
      gts::fail_arg("device_id", std::to_string(device_id) + " is out of range 0 … " +
                                     std::to_string(count - 1) + " (" + std::to_string(count) +
                                     " devices)");
    }
    gts::device::set_current_device(device_id);
  });
}

int gtstorage_get_device(int32_t* out_device_id) {
  return guarded([&] {
    check_out(out_device_id, "out_device_id");
    gts::device::backend& be = gts::device::active();
    if (be.device_count() == 0) gts::fail(be.no_device_kind(), be.no_device_reason());
    *out_device_id = static_cast<int32_t>(be.current_device());
  });
}

int gtstorage_get_stats(gtstorage_stats* out) {
  return guarded([&] {
    check_struct(out, "out");
    const gts::global_stats& s = gts::stats();
    gtstorage_stats full{};
    full.live_handles = table().live();
    full.live_buffers = s.live_buffers.load();
    full.host_bytes = s.host_bytes.load();
    full.device_bytes = s.device_bytes.load();
    full.h2d_count = s.transfers.h2d_count.load();
    full.h2d_bytes = s.transfers.h2d_bytes.load();
    full.d2h_count = s.transfers.d2h_count.load();
    full.d2h_bytes = s.transfers.d2h_bytes.load();
    if (out->struct_size > offsetof(gtstorage_stats, pool_held_bytes)) {
      for (gts::pool_memory m :
           {gts::pool_memory::host, gts::pool_memory::pinned_host, gts::pool_memory::device}) {
        const gts::pool_counters c = gts::pool_stats(m);
        full.pool_held_bytes += c.held_bytes;
        full.pool_hits += c.hits;
        full.pool_misses += c.misses;
        full.pool_high_water_bytes += c.high_water_bytes;
      }
    }
    copy_out(out, full);
  });
}

int gtstorage_reset_transfer_stats(void) {
  return guarded([&] {
    gts::stats().transfers.reset();
    gts::pool_reset_counters();
  });
}

int gtstorage_pool_get_stats(int32_t memory, gtstorage_pool_stats* out) {
  return guarded([&] {
    check_struct(out, "out");
    gts::pool_memory m[3];
    pools_of(memory, false, m);
    const gts::pool_counters c = gts::pool_stats(m[0]);
    gtstorage_pool_stats full{};
    full.held_bytes = c.held_bytes;
    full.held_blocks = c.held_blocks;
    full.in_use_bytes = c.in_use_bytes;
    full.high_water_bytes = c.high_water_bytes;
    full.hits = c.hits;
    full.misses = c.misses;
    full.evictions = c.evictions;
    full.limit_bytes = c.limit_bytes;
    copy_out(out, full);
  });
}

int gtstorage_pool_set_limit(int32_t memory, int64_t limit_bytes) {
  return for_each_pool(memory, limit_bytes, "limit_bytes", &gts::pool_set_limit);
}

int gtstorage_pool_trim(int32_t memory, int64_t keep_bytes) {
  return for_each_pool(memory, keep_bytes, "keep_bytes", &gts::pool_trim);
}

int gtstorage_get_transfer_stats(gtstorage_handle handle, gtstorage_transfer_stats* out) {
  return guarded([&] {
    check_struct(out, "out");
    const gts::transfer_counters& t = table().get(handle).buffers->transfers;
    write_out(out, "out", [&](gtstorage_transfer_stats* o) {
      o->h2d_count = t.h2d_count.load();
      o->h2d_bytes = t.h2d_bytes.load();
      o->d2h_count = t.d2h_count.load();
      o->d2h_bytes = t.d2h_bytes.load();
      o->reserved = 0;
    });
  });
}

}  // extern "C"
