// Every exported function of libgtstorage_mpi (gtstorage_mpi.h): argument and struct checks,
// the public enums translated into the component's own, handles of decompositions and
// exchanges, and the boundary (mpi/boundary.hpp) that turns failures into statuses.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "capi/enum_translation.hpp"
#include "capi/struct_history_mpi.hpp"  // the struct-size contract of this header
#include "common/handle_table.hpp"
#include "mpi/boundary.hpp"
#include "mpi/decomposition.hpp"
#include "mpi/exchange.hpp"

namespace {

using gts::capi::check_struct;
using gts::capi::read_in;
using gts::capi::write_out;
using gts::mpi::guarded;

struct decomp_entry {
  std::shared_ptr<gts::mpi::decomposition> decomposition;
};

// Each kind of handle has its own generations (storages start at 1), so a storage or exchange
// handle passed as a decomposition is "never issued", not another object.
gts::basic_handle_table<decomp_entry>& decomps() {
  static auto* const table = new gts::basic_handle_table<decomp_entry>(0x40000001u);
  return *table;
}
gts::basic_handle_table<gts::mpi::exchange>& exchanges() {
  static auto* const table = new gts::basic_handle_table<gts::mpi::exchange>(0x80000001u);
  return *table;
}

// "handle: 5 was never issued …" from a table, renamed to the caller's parameter.
template <class Table>
auto& lookup(Table& table, uint64_t h, const char* name) {
  try {
    return table.get(h);
  } catch (const gts::error& e) {
    std::string msg = e.what();
    const std::string prefix = "handle:";
    if (msg.compare(0, prefix.size(), prefix) == 0) msg = name + (":" + msg.substr(prefix.size()));
    throw gts::error(e.kind(), msg);
  }
}

template <class T>
void check_out(const T* p, const char* name) {
  if (p == nullptr) gts::fail_arg(name, "must not be NULL");
}

const gtstorage_decomp_options decomp_defaults = GTSTORAGE_DECOMP_OPTIONS_INIT;
const gtstorage_exchange_options exchange_defaults = GTSTORAGE_EXCHANGE_OPTIONS_INIT;

// The public enums of gtstorage_exchange_options in the component's vocabulary.
using gts::capi::enum_translation;
using gts::mpi::method_kind;
using gts::mpi::pattern_kind;
using gts::mpi::side_choice;
// One translation a line, as in capi/enums.hpp.
// clang-format off
constexpr enum_translation<pattern_kind, 2> pattern_of{"pattern", "a gtstorage_exchange_pattern (0 BOX, 1 STAR)", {{{GTSTORAGE_EXCHANGE_BOX, pattern_kind::box}, {GTSTORAGE_EXCHANGE_STAR, pattern_kind::star}}}};
constexpr enum_translation<method_kind, 3> method_of{"method", "a gtstorage_exchange_method (0 AUTO, 1 DATATYPE, 2 PACK)", {{{GTSTORAGE_EXCHANGE_AUTO, method_kind::automatic}, {GTSTORAGE_EXCHANGE_DATATYPE, method_kind::datatype}, {GTSTORAGE_EXCHANGE_PACK, method_kind::pack}}}};
constexpr enum_translation<side_choice, 3> exchange_side_of{"side", "a gtstorage_exchange_side (0 CURRENT, 1 HOST, 2 DEVICE)", {{{GTSTORAGE_EXCHANGE_SIDE_CURRENT, side_choice::current}, {GTSTORAGE_EXCHANGE_SIDE_HOST, side_choice::host}, {GTSTORAGE_EXCHANGE_SIDE_DEVICE, side_choice::device}}}};
// clang-format on

gts::mpi::exchange_request request_of(const gtstorage_exchange_options* o) {
  gts::mpi::exchange_request r;
  if (o->reserved != 0) gts::fail_arg("options.reserved", "must be 0");
  r.width = o->width;
  r.pattern = pattern_of(o->pattern);
  r.method = method_of(o->method);
  r.side = exchange_side_of(o->side);
  if (o->gpu_aware < GTSTORAGE_GPU_AWARE_AUTO || o->gpu_aware > GTSTORAGE_GPU_AWARE_YES) {
    gts::fail_arg("gpu_aware", std::to_string(o->gpu_aware) +
                                   " is not a gtstorage_gpu_aware (-1 AUTO, 0 NO, 1 YES)");
  }
  r.gpu_aware = o->gpu_aware;
  return r;
}

}  // namespace

extern "C" {

uint32_t gtstorage_mpi_version(void) {
  return GTSTORAGE_VERSION_NUMBER;
}

int gtstorage_decomp_options_init_sized(gtstorage_decomp_options* options, size_t struct_size) {
  return guarded([&] { gts::capi::init_sized(options, struct_size, decomp_defaults, "options"); });
}

int gtstorage_exchange_options_init_sized(gtstorage_exchange_options* options, size_t struct_size) {
  return guarded(
      [&] { gts::capi::init_sized(options, struct_size, exchange_defaults, "options"); });
}

int gtstorage_decomp_create(const gtstorage_decomp_options* options, gtstorage_decomp* out) {
  return guarded([&] {
    // Without readable options this process has no communicator: it returns at once (the
    // others stop at their deadline). Every other failure is reported collectively.
    gtstorage_decomp_options local;
    const auto* const o = read_in(options, "options", local, decomp_defaults);
    gts::mpi::decomp_request r;
    r.comm = o->comm;
    r.ndim = static_cast<int>(std::min<uint32_t>(o->ndim, INT32_MAX));
    r.dims = o->dims;
    r.proc_dims = o->proc_dims;
    r.periodic = o->periodic;
    r.reorder = o->reorder != 0;
    try {
      check_out(out, "out");
      if (o->reserved != 0) gts::fail_arg("options.reserved", "must be 0");
      if (o->ndim < 1 || o->ndim > GTSTORAGE_MPI_MAX_DIMS) {
        gts::fail_arg("ndim", std::to_string(o->ndim) + " is out of range 1 … 3");
      }
    } catch (...) {
      r.failed = std::current_exception();
    }
    auto entry = std::make_unique<decomp_entry>();
    entry->decomposition = gts::mpi::decomposition::create(r);
    *out = decomps().insert(std::move(entry));
  });
}

int gtstorage_decomp_retain(gtstorage_decomp decomp) {
  return guarded([&] {
    lookup(decomps(), decomp, "decomp");
    decomps().retain(decomp);
  });
}

int gtstorage_decomp_release(gtstorage_decomp decomp) {
  return guarded([&] {
    lookup(decomps(), decomp, "decomp");
    decomps().release(decomp);
  });
}

int gtstorage_decomp_get_info(gtstorage_decomp decomp, gtstorage_decomp_info* out) {
  return guarded([&] {
    check_struct(out, "out");
    const gts::mpi::decomposition& d = *lookup(decomps(), decomp, "decomp").decomposition;
    write_out(out, "out", [&](gtstorage_decomp_info* o) {
      o->ndim = static_cast<uint32_t>(d.ndim());
      o->rank = d.rank();
      o->size = d.size();
      for (int k = 0; k < d.ndim(); ++k) {
        o->proc_dims[k] = d.proc_dims(k);
        o->periodic[k] = d.periodic(k) ? 1 : 0;
        o->coords[k] = d.coord(k);
        o->dims[k][0] = d.label(k);
        o->dims[k][1] = '\0';
        for (int s = 0; s < 2; ++s) {
          int offset[gts::mpi::max_dims] = {0, 0, 0};
          offset[k] = s == 0 ? -1 : 1;
          const int r = d.neighbor(offset);
          o->neighbors[k][s] = r == MPI_PROC_NULL ? -1 : r;
        }
      }
      o->comm = MPI_Comm_c2f(d.comm());
    });
  });
}

int gtstorage_decomp_local_extent(gtstorage_decomp decomp, int32_t rank,
                                  const int64_t* global_shape, uint32_t n, int64_t* out_offset,
                                  int64_t* out_extent) {
  return guarded([&] {
    const gts::mpi::decomposition& d = *lookup(decomps(), decomp, "decomp").decomposition;
    if (n != static_cast<uint32_t>(d.ndim())) {
      gts::fail_arg("n", std::to_string(n) + " extents given for a decomposition of " +
                             std::to_string(d.ndim()) + " dims");
    }
    if (global_shape == nullptr) gts::fail_arg("global_shape", "must not be NULL");
    check_out(out_offset, "out_offset");
    check_out(out_extent, "out_extent");
    if (rank < -1) gts::fail_arg("rank", std::to_string(rank) + " is negative (-1: this process)");
    int64_t offset[gts::mpi::max_dims], extent[gts::mpi::max_dims];
    d.local_extent(rank, global_shape, offset, extent);
    std::memcpy(out_offset, offset, n * sizeof(int64_t));
    std::memcpy(out_extent, extent, n * sizeof(int64_t));
  });
}

int gtstorage_exchange_create(gtstorage_decomp decomp, const gtstorage_handle* fields,
                              uint32_t nfields, const gtstorage_exchange_options* options,
                              gtstorage_exchange* out) {
  return guarded([&] {
    // Without a decomposition this process cannot take part: it returns at once (the others
    // stop at their deadline). Every other failure is reported collectively.
    auto decomposition = lookup(decomps(), decomp, "decomp").decomposition;
    gts::mpi::exchange_request r;
    std::exception_ptr failed;
    try {
      check_out(out, "out");
      gtstorage_exchange_options local;
      const auto* const o = options == nullptr
                                ? &exchange_defaults
                                : read_in(options, "options", local, exchange_defaults);
      r = request_of(o);
    } catch (...) {
      failed = std::current_exception();
    }
    *out = exchanges().insert(
        gts::mpi::exchange::create(std::move(decomposition), fields, nfields, r, failed));
  });
}

int gtstorage_exchange_start(gtstorage_exchange exchange) {
  return guarded([&] { lookup(exchanges(), exchange, "exchange").start(); });
}

int gtstorage_exchange_wait(gtstorage_exchange exchange) {
  return guarded([&] { lookup(exchanges(), exchange, "exchange").wait(); });
}

int gtstorage_exchange_test(gtstorage_exchange exchange, int32_t* out_done) {
  return guarded([&] {
    check_out(out_done, "out_done");
    *out_done = lookup(exchanges(), exchange, "exchange").test() ? 1 : 0;
  });
}

int gtstorage_exchange_run(gtstorage_exchange exchange) {
  return guarded([&] {
    gts::mpi::exchange& ex = lookup(exchanges(), exchange, "exchange");
    ex.start();
    ex.wait();
  });
}

int gtstorage_exchange_release(gtstorage_exchange exchange) {
  return guarded([&] {
    gts::mpi::exchange& ex = lookup(exchanges(), exchange, "exchange");
    // Complete a step in flight (its halos land), then free, whatever that step reported.
    std::exception_ptr failed;
    if (ex.figures().in_flight) {
      try {
        ex.wait();
      } catch (...) {
        failed = std::current_exception();
      }
    }
    exchanges().release(exchange);
    if (failed) std::rethrow_exception(failed);
  });
}

int gtstorage_exchange_get_info(gtstorage_exchange exchange, gtstorage_exchange_info* out) {
  return guarded([&] {
    check_struct(out, "out");
    const gts::mpi::exchange_figures f = lookup(exchanges(), exchange, "exchange").figures();
    write_out(out, "out", [&](gtstorage_exchange_info* o) {
      o->nfields = static_cast<uint32_t>(f.nfields);
      o->pattern = f.faces_only ? GTSTORAGE_EXCHANGE_STAR : GTSTORAGE_EXCHANGE_BOX;
      o->gpu_aware = f.gpu_aware ? 1 : 0;
      o->in_flight = f.in_flight ? 1 : 0;
      o->directions = f.directions;
      o->messages = f.messages;
      o->datatype_regions = f.datatype_regions;
      o->packed_regions = f.packed_regions;
      o->reserved = 0;
      o->bytes_sent = f.bytes_sent;
      o->bytes_received = f.bytes_received;
      o->staged_d2h_bytes = f.staged_d2h;
      o->staged_h2d_bytes = f.staged_h2d;
      o->steps = f.steps;
    });
  });
}

int gtstorage_mpi_gpu_aware(int32_t* out_aware) {
  return guarded([&] {
    check_out(out_aware, "out_aware");
    *out_aware = gts::mpi::mpi_gpu_aware() ? 1 : 0;
  });
}

}  // extern "C"
