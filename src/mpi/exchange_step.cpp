// The steps of a persistent halo exchange: which side of each field is exchanged, packing on
// that side (and staging through pinned memory without GPU-aware MPI), starting the persistent
// requests, and finishing, waiting for or testing a step; the exchange's figures and its end.
#include <cstdint>
#include <string>

#include "common/errors.hpp"
#include "mpi/agreement.hpp"
#include "mpi/boundary.hpp"
#include "mpi/exchange.hpp"
#include "mpi/exchange_internal.hpp"

namespace gts::mpi {
namespace {

const char* side_name(int side) {
  return side == GTSTORAGE_SIDE_HOST ? "host" : "device";
}

// Host regions of at least this many bytes are packed and unpacked with streaming stores.
constexpr int64_t streaming_region_bytes = int64_t(1) << 20;

// Flags of the copies that pack a region of @p bytes into its buffer and unpack it back. Device
// copies are only enqueued (the stream is waited for before MPI sees a buffer). Large host
// regions stream their stores: such a pack buffer has left the core's caches by the time MPI
// reads it, and such a halo by the time the next stencil sweep does, so writing whole lines
// without first reading them is pure saving (the faces of a 512x512x128 field, 1.5-6 MiB each:
// 2x faster). Small regions keep ordinary stores: MPI's eager and shared-memory paths copy the
// buffer on this core right after the pack, from the cache. (Copies of short runs, such as the I
// faces of an I-contiguous field, write partial lines and are the same either way.)
uint32_t pack_flags(int side, int64_t bytes) {
  if (side == GTSTORAGE_SIDE_DEVICE) return GTSTORAGE_COPY_FLAG_ASYNC;
  return bytes >= streaming_region_bytes ? GTSTORAGE_COPY_FLAG_STREAMING : 0;
}

}  // namespace

void exchange::pick_sides() {
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    bound_field& f = fields_[i];
    if (f.kind != field_kind::device) {
      f.side = GTSTORAGE_SIDE_HOST;
      continue;
    }
    if (!f.has_host) {
      f.side = GTSTORAGE_SIDE_DEVICE;
      continue;
    }
    int32_t state = GTSTORAGE_SYNC_CLEAN;
    check_gts(gtstorage_get_sync_state(f.handle, &state), field_name(static_cast<int>(i)));
    const char* modified = state == GTSTORAGE_SYNC_HOST_DIRTY ? "host" : "device";
    switch (side_) {
      case side_choice::current:
        f.side = state == GTSTORAGE_SYNC_HOST_DIRTY ? GTSTORAGE_SIDE_HOST : GTSTORAGE_SIDE_DEVICE;
        break;
      case side_choice::host:
      case side_choice::device: {
        f.side = side_ == side_choice::host ? GTSTORAGE_SIDE_HOST : GTSTORAGE_SIDE_DEVICE;
        const int other =
            f.side == GTSTORAGE_SIDE_HOST ? GTSTORAGE_SYNC_DEVICE_DIRTY : GTSTORAGE_SYNC_HOST_DIRTY;
        if (state == other) {
          fail(error_kind::sync_conflict,
               field_name(static_cast<int>(i)) + ": its " + modified +
                   " copy is modified, but the exchange is bound to the " + side_name(f.side) +
                   " side: sync it first (gtstorage_sync_to); nothing was sent");
        }
        break;
      }
    }
  }
}

void exchange::refresh_streams() {
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    bound_field& f = fields_[i];
    if (f.kind != field_kind::device || f.side != GTSTORAGE_SIDE_DEVICE) continue;
    const gtstorage_interface_info info =
        describe(f.handle, GTSTORAGE_SIDE_DEVICE, field_name(static_cast<int>(i)));
    if (info.stream == f.stream) continue;
    // Packing and unpacking run on the field's stream: its views and pack wraps follow it.
    f.stream = info.stream;
    for (const part& p : parts_) {
      if (p.field != static_cast<int>(i)) continue;
      check_gts(gtstorage_set_stream(p.view, f.stream), field_name(p.field));
      check_gts(gtstorage_set_stream(p.wrap, f.stream), field_name(p.field));
    }
  }
}

void exchange::move_packed(bool send, bool to_transport) {
  const int transport_side = gpu_aware_ ? GTSTORAGE_SIDE_DEVICE : GTSTORAGE_SIDE_HOST;
  const pack_buffer& buf = send ? device_send_ : device_recv_;
  if (buf.handle == 0) return;
  // Whole buffer in one copy when every device field is exchanged on the same side (the
  // usual case); per region otherwise.
  int uniform = -1;
  bool mixed = false;
  for (const bound_field& f : fields_) {
    if (f.kind != field_kind::device) continue;
    if (uniform >= 0 && uniform != f.side) mixed = true;
    uniform = f.side;
  }
  auto copy = [&](gtstorage_handle h, int64_t bytes, int field_side, const std::string& what) {
    const int from = to_transport ? field_side : transport_side;
    const int to = to_transport ? transport_side : field_side;
    check_gts(gtstorage_copy_sides(h, to, h, from, 0, 0), what);
    (from == GTSTORAGE_SIDE_DEVICE ? figures_.staged_d2h : figures_.staged_h2d) += bytes;
  };
  if (!mixed) {
    if (uniform != transport_side) copy(buf.handle, buf.bytes, uniform, "pack buffer");
    return;
  }
  for (const part& p : parts_) {
    if (p.how != transport::device_pack || p.send != send) continue;
    const int field_side = fields_[static_cast<std::size_t>(p.field)].side;
    if (field_side != transport_side) copy(p.wrap, p.bytes, field_side, field_name(p.field));
  }
}

void exchange::start() {
  // After MPI_Finalize no MPI call may be made: a status, not undefined behaviour.
  require_mpi("gtstorage_exchange_start");
  if (in_flight_) {
    fail_arg("exchange",
             "is in flight: complete it with gtstorage_exchange_wait (or _test) "
             "before starting it again");
  }
  pick_sides();  // a sync conflict fails here, before anything is packed or posted
  refresh_streams();
  figures_.staged_d2h = figures_.staged_h2d = 0;
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].kind == field_kind::unified) {
      check_gts(gtstorage_wait_stream(fields_[i].handle, 0), field_name(static_cast<int>(i)));
    }
  }
  for (const part& p : parts_) {
    if (!p.send || p.how == transport::datatype) continue;
    const int side = fields_[static_cast<std::size_t>(p.field)].side;
    check_gts(gtstorage_copy_sides(p.wrap, side, p.view, side, 0, pack_flags(side, p.bytes)),
              field_name(p.field) + ": packing");
  }
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].kind == field_kind::device && fields_[i].side == GTSTORAGE_SIDE_DEVICE) {
      check_gts(gtstorage_wait_stream(fields_[i].handle, 0), field_name(static_cast<int>(i)));
    }
  }
  move_packed(true, true);
  if (!requests_.empty()) {
    check_mpi(MPI_Startall(static_cast<int>(requests_.size()), requests_.data()), "MPI_Startall");
  }
  in_flight_ = true;
}

void exchange::finish() {
  in_flight_ = false;
  move_packed(false, false);
  for (const part& p : parts_) {
    if (p.send || p.how == transport::datatype) continue;
    const int side = fields_[static_cast<std::size_t>(p.field)].side;
    check_gts(gtstorage_copy_sides(p.view, side, p.wrap, side, 0, pack_flags(side, p.bytes)),
              field_name(p.field) + ": unpacking");
  }
  std::exception_ptr first;
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    const bound_field& f = fields_[i];
    try {
      if (f.kind == field_kind::device && f.side == GTSTORAGE_SIDE_DEVICE) {
        check_gts(gtstorage_wait_stream(f.handle, 0), field_name(static_cast<int>(i)));
      }
      // The exchanged side was written: a mirror's other copy is stale now.
      check_gts(gtstorage_modify(f.handle, f.side, 0), field_name(static_cast<int>(i)));
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  ++figures_.steps;
  if (first) std::rethrow_exception(first);
}

void exchange::wait() {
  if (!in_flight_) {
    fail_arg("exchange", "is not in flight: start it with gtstorage_exchange_start first");
  }
  require_mpi("gtstorage_exchange_wait");
  const int rc = requests_.empty() ? MPI_SUCCESS
                                   : MPI_Waitall(static_cast<int>(requests_.size()),
                                                 requests_.data(), MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) {
    in_flight_ = false;
    check_mpi(rc, "MPI_Waitall");
  }
  finish();
}

bool exchange::test() {
  if (!in_flight_) {
    fail_arg("exchange", "is not in flight: start it with gtstorage_exchange_start first");
  }
  require_mpi("gtstorage_exchange_test");
  int done = 1;
  if (!requests_.empty()) {
    const int rc = MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done,
                               MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      in_flight_ = false;
      check_mpi(rc, "MPI_Testall");
    }
  }
  if (done) finish();
  return done != 0;
}

exchange_figures exchange::figures() const {
  exchange_figures f = figures_;
  f.in_flight = in_flight_;
  return f;
}

exchange::~exchange() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    if (in_flight_ && !requests_.empty()) {
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    }
    for (MPI_Request& r : requests_) {
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    }
    for (message& m : messages_) {
      if (m.owns_type) MPI_Type_free(&m.type);
    }
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  for (const part& p : parts_) {
    if (p.wrap != 0) gtstorage_release(p.wrap);
    if (p.view != 0) gtstorage_release(p.view);
  }
  for (const pack_buffer* b : {&host_send_, &host_recv_, &device_send_, &device_recv_}) {
    if (b->handle != 0) gtstorage_release(b->handle);
  }
  for (const bound_field& f : fields_) gtstorage_release(f.handle);
}

}  // namespace gts::mpi
