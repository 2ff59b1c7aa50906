#include "mpi/exchange.hpp"

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>  // MPIX_Query_cuda_support (Open MPI's CUDA extension)
#endif

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "common/errors.hpp"
#include "mpi/agreement.hpp"
#include "mpi/boundary.hpp"
#include "mpi/exchange_internal.hpp"

namespace gts::mpi {
namespace {

constexpr uint32_t max_fields = 4096;
constexpr int descriptor_tag = 1000;  // + direction index: the neighbour check at creation
constexpr int device_tag = 32;        // + direction index: messages of device memory
// A host region made of runs shorter than this is packed by the library (AUTO): MPI's
// datatype engine pays per run, the copy kernels move short rows with fixed-size moves.
constexpr int64_t auto_pack_run_bytes = 64;

std::string show(const int64_t* values, int n) {
  std::string t = "(";
  for (int d = 0; d < n; ++d) t += (d ? ", " : "") + std::to_string(values[d]);
  return t + (n == 1 ? ",)" : ")");
}

int to_int(int64_t v, const char* what) {
  if (v > INT_MAX) {
    fail(error_kind::unsupported,
         std::string(what) + " of " + std::to_string(v) + " bytes does not fit an MPI count (int)");
  }
  return static_cast<int>(v);
}

std::string show_pattern(int faces_only) {
  return faces_only != 0 ? "1 (GTSTORAGE_EXCHANGE_STAR)" : "0 (GTSTORAGE_EXCHANGE_BOX)";
}

// Per field, what a neighbour must agree on for one direction: typestr, itemsize, device-ness,
// ndim, the region's extents and the layout, as int64 words.
constexpr int descriptor_words = 4 + 2 * max_field_ndim;

}  // namespace

bool mpi_gpu_aware() {
  if (const char* env = std::getenv("GTSTORAGE_MPI_GPU_AWARE")) {
    if (std::strcmp(env, "0") == 0) return false;
    if (std::strcmp(env, "1") == 0) return true;
    fail_arg("GTSTORAGE_MPI_GPU_AWARE", std::string("\"") + env + "\" is not 0 or 1");
  }
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

std::unique_ptr<exchange> exchange::create(std::shared_ptr<decomposition> decomp,
                                           const gtstorage_handle* fields, uint32_t nfields,
                                           const exchange_request& req,
                                           const std::exception_ptr& failed) {
  constexpr const char* function = "gtstorage_exchange_create";
  require_mpi(function);
  if (decomp->abandoned()) {
    // Its communicator keeps an operation that another process may still match: nothing
    // collective goes there again (this process returns at once, as for a bad handle).
    fail(error_kind::communication,
         std::string("decomp: its communicator keeps a collective operation that some process "
                     "never joined (an earlier gtstorage_exchange_create passed its deadline, ") +
             timeout_variable + "); create a new decomposition");
  }
  const deadline limit = deadline::from_environment();
  std::unique_ptr<exchange> ex(new exchange());
  ex->decomp_ = std::move(decomp);
  ex->faces_only_ = req.pattern == pattern_kind::star;
  ex->side_ = req.side;
  ex->dirs_ = directions(ex->decomp_->ndim(), ex->faces_only_);
  std::exception_ptr local = failed ? failed : limit.error;
  int aware = 1;  // neutral in the minimum below for processes without device fields
  if (!local) {
    try {
      ex->bind_fields(fields, nfields, req);
      const bool any_device =
          std::any_of(ex->fields_.begin(), ex->fields_.end(),
                      [](const auto& f) { return f.kind == field_kind::device; });
      if (any_device) aware = req.gpu_aware < 0 ? (mpi_gpu_aware() ? 1 : 0) : req.gpu_aware;
    } catch (...) {
      local = std::current_exception();
    }
  }
  // An exchange has its own communicator, so two exchanges in flight never match each other's
  // messages whatever their tags. Its creation is the first collective step: every process
  // joins it, or the others stop at the deadline.
  try {
    ex->comm_ = duplicate(ex->decomp_->comm(), limit, function,
                          "the decomposition's communicator (the decomposition refuses further "
                          "exchanges)");
  } catch (const abandoned_error&) {
    ex->decomp_->mark_abandoned();
    throw;
  }
  // Every process must bind as many fields with the same pattern: the directions (and so the
  // messages of the neighbour check) follow from the pattern.
  std::vector<same_value> same;
  if (!local) {
    same.push_back({"pattern", ex->faces_only_ ? 1 : 0, show_pattern});
    same.push_back({"nfields", static_cast<int>(nfields)});
  }
  same.resize(2);
  try {
    agree(ex->comm_, local, function, limit, same);
    try {
      ex->check_neighbors();
    } catch (...) {
      local = std::current_exception();
    }
    agree(ex->comm_, local, function, limit);
    ex->gpu_aware_ = minimum(ex->comm_, aware, function, limit) != 0;
    try {
      ex->build(req);
    } catch (...) {
      local = std::current_exception();
    }
    agree(ex->comm_, local, function, limit);
  } catch (const abandoned_error&) {
    ex->comm_ = MPI_COMM_NULL;  // keeps the pending operation: never freed
    throw;
  }
  return ex;
}

void exchange::bind_fields(const gtstorage_handle* fields, uint32_t nfields,
                           const exchange_request& req) {
  if (nfields == 0 || nfields > max_fields) {
    fail_arg("nfields",
             std::to_string(nfields) + " is out of range 1 … " + std::to_string(max_fields));
  }
  if (fields == nullptr) fail_arg("fields", "must not be NULL");
  const int nd = decomp_->ndim();
  char labels[max_dims + 1] = {};
  for (int k = 0; k < nd; ++k) labels[k] = decomp_->label(k);
  if (req.width != nullptr) {
    for (int i = 0; i < 2 * nd; ++i) {
      if (req.width[i] < 0) {
        fail_arg("width", std::to_string(req.width[i]) + " (" + (i % 2 ? "upper" : "lower") +
                              " width of dim " + labels[i / 2] + ") is negative");
      }
    }
  }
  fields_.reserve(nfields);
  for (uint32_t i = 0; i < nfields; ++i) {
    const std::string name = field_name(static_cast<int>(i));
    bound_field f;
    int32_t has_host = 0, has_device = 0;
    check_gts(gtstorage_has_side(fields[i], GTSTORAGE_SIDE_HOST, &has_host), name);
    check_gts(gtstorage_has_side(fields[i], GTSTORAGE_SIDE_DEVICE, &has_device), name);
    f.has_host = has_host != 0;
    f.has_device = has_device != 0;
    const gtstorage_interface_info info =
        describe(fields[i], f.has_host ? GTSTORAGE_SIDE_HOST : GTSTORAGE_SIDE_DEVICE, name);
    if (f.has_device) {
      const gtstorage_interface_info dev = describe(fields[i], GTSTORAGE_SIDE_DEVICE, name);
      // Unified memory is one buffer that both sides alias: the host reads and writes it.
      f.kind = f.has_host && dev.data == info.data ? field_kind::unified : field_kind::device;
      f.device_id = dev.device_id;
      f.stream = dev.stream;
    }
    if (info.readonly) {
      fail(error_kind::readonly,
           name + ": the storage is read-only, and an exchange writes its halo");
    }
    std::memcpy(f.typestr.data(), info.typestr, sizeof f.typestr);
    f.itemsize = info.itemsize;
    field_geometry& g = f.geo;
    g.ndim = static_cast<int>(info.ndim);
    for (int d = 0; d < g.ndim; ++d) {
      g.shape[d] = info.shape[d];
      g.halo[d] = {info.halo[d][0], info.halo[d][1]};
      f.layout[d] = info.layout[d];
    }
    for (int k = 0; k < nd; ++k) {
      int axis = -1;
      for (int d = 0; d < g.ndim && axis < 0; ++d) {
        if (info.dims[d][0] == labels[k] && info.dims[d][1] == '\0') axis = d;
      }
      if (axis < 0) {
        std::string dims;
        for (int d = 0; d < g.ndim; ++d) dims += std::string(d ? ", " : "") + info.dims[d];
        fail_arg(name, std::string("has no dim ") + labels[k] +
                           ", which the decomposition splits (its dims are " + dims + ")");
      }
      g.axis[k] = axis;
      const int64_t lo = req.width ? req.width[2 * k] : g.halo[axis][0];
      const int64_t hi = req.width ? req.width[2 * k + 1] : g.halo[axis][1];
      g.width[k] = {lo, hi};
      if (g.halo[axis][0] < lo || g.halo[axis][1] < hi) {
        fail_arg(name, "halo " + show(g.halo[axis].data(), 2) + " of dim " + labels[k] +
                           " is narrower than the exchanged width " + show(g.width[k].data(), 2));
      }
      if (g.interior(k) < std::max(lo, hi)) {
        fail_arg(name, "interior extent " + std::to_string(g.interior(k)) + " of dim " + labels[k] +
                           " is smaller than the exchanged width " + show(g.width[k].data(), 2) +
                           " (the halo would need points of a neighbour's neighbour)");
      }
    }
    check_gts(gtstorage_retain(fields[i]), name);
    f.handle = fields[i];
    fields_.push_back(f);
  }
}

void exchange::check_neighbors() {
  const int nd = decomp_->ndim();
  char labels[max_dims + 1] = {};
  for (int k = 0; k < nd; ++k) labels[k] = decomp_->label(k);
  auto describe_regions = [&](const direction& d, bool send) {
    std::vector<int64_t> words = {1, static_cast<int64_t>(fields_.size())};
    for (const bound_field& f : fields_) {
      const region r = send ? send_region(f.geo, d, nd) : recv_region(f.geo, d, nd);
      int64_t type = 0;
      std::memcpy(&type, f.typestr.data(), sizeof type);
      words.insert(words.end(), {type, f.itemsize, f.kind == field_kind::device ? 1 : 0,
                                 static_cast<int64_t>(f.geo.ndim)});
      for (int i = 0; i < max_field_ndim; ++i) words.push_back(i < f.geo.ndim ? r.extent[i] : 0);
      for (int i = 0; i < max_field_ndim; ++i) words.push_back(i < f.geo.ndim ? f.layout[i] : 0);
    }
    return words;
  };
  std::vector<std::vector<int64_t>> outgoing(dirs_.size());
  std::vector<MPI_Request> sends;
  for (std::size_t i = 0; i < dirs_.size(); ++i) {
    const int peer = decomp_->neighbor(dirs_[i].offset.data());
    if (peer == MPI_PROC_NULL) continue;
    outgoing[i] = describe_regions(dirs_[i], true);
    sends.emplace_back();
    check_mpi(MPI_Isend(outgoing[i].data(), static_cast<int>(outgoing[i].size()), MPI_INT64_T, peer,
                        descriptor_tag + dirs_[i].index, comm_, &sends.back()),
              "MPI_Isend");
  }
  std::string problem;
  error_kind problem_kind = error_kind::invalid_argument;
  for (const direction& d : dirs_) {
    const int peer = decomp_->neighbor(d.offset.data());
    if (peer == MPI_PROC_NULL) continue;
    MPI_Status status;
    const int tag = descriptor_tag + opposite_index(d, nd);
    check_mpi(MPI_Probe(peer, tag, comm_, &status), "MPI_Probe");
    int count = 0;
    check_mpi(MPI_Get_count(&status, MPI_INT64_T, &count), "MPI_Get_count");
    std::vector<int64_t> theirs(static_cast<std::size_t>(std::max(count, 2)), 0);
    check_mpi(MPI_Recv(theirs.data(), count, MPI_INT64_T, peer, tag, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv");
    if (theirs[0] == 0 || !problem.empty()) continue;
    const std::string from =
        "rank " + std::to_string(peer) + " (direction " + direction_name(d, nd, labels) + ")";
    if (theirs[1] != static_cast<int64_t>(fields_.size()) ||
        count != 2 + theirs[1] * descriptor_words) {
      problem = from + " binds " + std::to_string(theirs[1]) + " fields, this rank " +
                std::to_string(fields_.size());
      continue;
    }
    const std::vector<int64_t> mine = describe_regions(d, false);
    for (std::size_t fi = 0; fi < fields_.size() && problem.empty(); ++fi) {
      const int64_t* a = &theirs[2 + fi * descriptor_words];
      const int64_t* b = &mine[2 + fi * descriptor_words];
      const std::string name = field_name(static_cast<int>(fi));
      auto typestr = [](const int64_t* w) {
        char t[9] = {};
        std::memcpy(t, w, 8);
        return std::string(t);
      };
      const int n = static_cast<int>(b[3]);
      std::string what;  // built with append: this runs in a loop (no temporaries per +)
      if (a[0] != b[0] || a[1] != b[1]) {
        what.append(from)
            .append(" sends ")
            .append(typestr(a))
            .append(", this rank's field is ")
            .append(typestr(b));
      } else if (a[2] != b[2]) {
        what = b[2]
                   ? std::string("this rank's field has device memory and ")
                         .append(from)
                         .append("'s has not")
                   : std::string(from).append("'s field has device memory and this rank's has not");
      } else if (a[3] != b[3]) {
        what.append(from)
            .append("'s field has ")
            .append(std::to_string(a[3]))
            .append(" dims, this rank's ")
            .append(std::to_string(b[3]));
      } else if (!std::equal(a + 4, a + 4 + n, b + 4)) {
        problem_kind = error_kind::shape_mismatch;
        what.append(from)
            .append(" sends a region of shape ")
            .append(show(a + 4, n))
            .append(", but this rank's halo there has shape ")
            .append(show(b + 4, n))
            .append(" (the local extents or halos of neighbouring processes disagree)");
      } else if (!std::equal(a + 4 + max_field_ndim, a + 4 + max_field_ndim + n,
                             b + 4 + max_field_ndim)) {
        what.append(from)
            .append("'s field has layout ")
            .append(show(a + 4 + max_field_ndim, n))
            .append(", this rank's ")
            .append(show(b + 4 + max_field_ndim, n))
            .append(" (neighbours must store a field in the same stride order)");
      }
      if (!what.empty()) problem = std::string(name).append(": ").append(what);
    }
  }
  check_mpi(MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
  if (!problem.empty()) fail(problem_kind, problem);
}

void exchange::build(const exchange_request& req) {
  struct group {
    std::size_t dir, begin, end;
    bool send;
  };
  std::vector<group> groups;
  for (std::size_t i = 0; i < dirs_.size(); ++i) {
    if (decomp_->neighbor(dirs_[i].offset.data()) == MPI_PROC_NULL) continue;
    for (const bool send : {true, false}) {
      const std::size_t begin = parts_.size();
      add_parts(dirs_[i], send, req);
      groups.push_back({i, begin, parts_.size(), send});
    }
  }
  make_buffers();
  for (const group& g : groups) {
    const std::size_t first = messages_.size();
    make_messages(dirs_[g.dir], g.send, g.begin, g.end);
    for (std::size_t m = first; m < messages_.size(); ++m) {
      if (g.send) ++figures_.messages;
    }
  }
  // Receives first: a persistent send to a neighbour can then match at once.
  for (int pass = 0; pass < 2; ++pass) {
    for (message& m : messages_) {
      if ((pass == 0) != m.receive) continue;
      requests_.emplace_back(MPI_REQUEST_NULL);
      if (m.receive) {
        check_mpi(MPI_Recv_init(m.buffer, m.count, m.type, m.peer, m.tag, comm_, &requests_.back()),
                  "MPI_Recv_init");
      } else {
        check_mpi(MPI_Send_init(m.buffer, m.count, m.type, m.peer, m.tag, comm_, &requests_.back()),
                  "MPI_Send_init");
      }
    }
  }
  figures_.nfields = static_cast<int>(fields_.size());
  figures_.faces_only = faces_only_;
  figures_.gpu_aware = gpu_aware_;
  for (const direction& d : dirs_) {
    if (decomp_->neighbor(d.offset.data()) != MPI_PROC_NULL) ++figures_.directions;
  }
  for (const part& p : parts_) {
    if (p.send) {
      figures_.bytes_sent += p.bytes;
      ++(p.how == transport::datatype ? figures_.datatype_regions : figures_.packed_regions);
    } else {
      figures_.bytes_received += p.bytes;
    }
  }
}

void exchange::add_parts(const direction& d, bool send, const exchange_request& req) {
  const int nd = decomp_->ndim();
  for (std::size_t fi = 0; fi < fields_.size(); ++fi) {
    const bound_field& f = fields_[fi];
    part p;
    p.field = static_cast<int>(fi);
    p.send = send;
    p.box = send ? send_region(f.geo, d, nd) : recv_region(f.geo, d, nd);
    if (p.box.count() == 0) continue;
    p.bytes = p.box.count() * f.itemsize;
    gtstorage_slice_spec spec[max_field_ndim];
    for (int i = 0; i < f.geo.ndim; ++i) {
      spec[i] = GTSTORAGE_SLICE_ALL;
      spec[i].start = p.box.start[i];
      spec[i].stop = p.box.start[i] + p.box.extent[i];
    }
    const std::string name = field_name(p.field);
    check_gts(gtstorage_slice(f.handle, spec, static_cast<uint32_t>(f.geo.ndim), &p.view), name);
    parts_.push_back(p);  // owns the view from here on (released by the destructor)
    part& q = parts_.back();
    if (f.kind == field_kind::device) {
      q.how = transport::device_pack;
    } else if (req.method == method_kind::datatype) {
      q.how = transport::datatype;
    } else if (req.method == method_kind::pack) {
      q.how = transport::host_pack;
    } else {
      // AUTO: the length of the region's innermost contiguous run decides.
      const gtstorage_interface_info info = describe(q.view, GTSTORAGE_SIDE_HOST, name);
      int64_t run = f.itemsize;
      for (int rank = f.geo.ndim - 1; rank >= 0; --rank) {
        const int dim = static_cast<int>(
            std::find(f.layout.begin(), f.layout.begin() + f.geo.ndim, rank) - f.layout.begin());
        if (dim >= f.geo.ndim || info.shape[dim] == 1) continue;
        if (info.strides[dim] != run) break;
        run *= info.shape[dim];
      }
      q.how =
          run < auto_pack_run_bytes && run < q.bytes ? transport::host_pack : transport::datatype;
    }
  }
}

void exchange::make_buffers() {
  int64_t sizes[4] = {0, 0, 0, 0};  // host send, host recv, device send, device recv
  for (part& p : parts_) {
    if (p.how == transport::datatype) continue;
    int64_t& size = sizes[(p.how == transport::device_pack ? 2 : 0) + (p.send ? 0 : 1)];
    p.offset = size;
    size += p.bytes;
  }
  int device_id = 0;
  for (const bound_field& f : fields_) {
    if (f.kind == field_kind::device) {
      device_id = f.device_id;
      break;
    }
  }
  pack_buffer* buffers[4] = {&host_send_, &host_recv_, &device_send_, &device_recv_};
  for (int b = 0; b < 4; ++b) {
    if (sizes[b] == 0) continue;
    const bool device = b >= 2;
    gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
    o.ndim = 1;
    o.shape = &sizes[b];
    o.dtype = "|u1";
    o.device = device ? GTSTORAGE_DEVICE_GPU : GTSTORAGE_DEVICE_CPU;
    if (device) {
      o.managed = GTSTORAGE_MANAGED_MIRROR;
      o.host_memory = GTSTORAGE_HOST_PINNED;
      o.device_id = device_id;
    }
    pack_buffer& buf = *buffers[b];
    check_gts(gtstorage_create(&o, &buf.handle), "pack buffer");
    buf.bytes = sizes[b];
    void* host = nullptr;
    check_gts(gtstorage_data(buf.handle, GTSTORAGE_SIDE_HOST, &host), "pack buffer");
    buf.host = static_cast<std::byte*>(host);
    if (device) {
      void* dev = nullptr;
      check_gts(gtstorage_data(buf.handle, GTSTORAGE_SIDE_DEVICE, &dev), "pack buffer");
      buf.device = static_cast<std::byte*>(dev);
    }
  }
  for (part& p : parts_) {
    if (p.how == transport::datatype) continue;
    const bound_field& f = fields_[static_cast<std::size_t>(p.field)];
    const pack_buffer& buf = *buffers[(p.how == transport::device_pack ? 2 : 0) + (p.send ? 0 : 1)];
    // The region packed densely in the field's memory order (the wire format).
    int64_t strides[max_field_ndim];
    int64_t stride = f.itemsize;
    for (int rank = f.geo.ndim - 1; rank >= 0; --rank) {
      for (int d = 0; d < f.geo.ndim; ++d) {
        if (f.layout[d] != rank) continue;
        strides[d] = stride;
        stride *= p.box.extent[d];
      }
    }
    gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
    w.ndim = static_cast<uint32_t>(f.geo.ndim);
    w.shape = p.box.extent.data();
    w.strides = strides;
    w.dtype = f.typestr.data();
    w.data = buf.host + p.offset;
    if (buf.device != nullptr) w.device_data = buf.device + p.offset;
    check_gts(gtstorage_wrap(&w, &p.wrap), field_name(p.field) + ": pack buffer");
    if (f.stream != 0) {
      check_gts(gtstorage_set_stream(p.wrap, f.stream), field_name(p.field));
    }
  }
}

MPI_Datatype exchange::region_type(const part& p) const {
  const bound_field& f = fields_[static_cast<std::size_t>(p.field)];
  const gtstorage_interface_info info = describe(p.view, GTSTORAGE_SIDE_HOST, field_name(p.field));
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int64_t run = f.itemsize;
  // Innermost dim first: contiguous dims merge into one run of bytes, the others nest as
  // hvectors of the byte strides.
  for (int rank = f.geo.ndim - 1; rank >= 0; --rank) {
    for (int d = 0; d < f.geo.ndim; ++d) {
      if (f.layout[d] != rank || info.shape[d] == 1) continue;
      if (type == MPI_DATATYPE_NULL && info.strides[d] == run) {
        run *= info.shape[d];
        continue;
      }
      if (type == MPI_DATATYPE_NULL) {
        check_mpi(MPI_Type_contiguous(to_int(run, "a run"), MPI_BYTE, &type),
                  "MPI_Type_contiguous");
      }
      MPI_Datatype outer = MPI_DATATYPE_NULL;
      const int rc = MPI_Type_create_hvector(to_int(info.shape[d], "an extent"), 1,
                                             static_cast<MPI_Aint>(info.strides[d]), type, &outer);
      MPI_Type_free(&type);
      check_mpi(rc, "MPI_Type_create_hvector");
      type = outer;
    }
  }
  if (type == MPI_DATATYPE_NULL) {
    check_mpi(MPI_Type_contiguous(to_int(run, "a region"), MPI_BYTE, &type), "MPI_Type_contiguous");
  }
  return type;
}

void exchange::make_messages(const direction& d, bool send, std::size_t begin, std::size_t end) {
  const int nd = decomp_->ndim();
  const int peer = decomp_->neighbor(d.offset.data());
  const int tag = send ? d.index : opposite_index(d, nd);
  struct block {
    std::byte* address;
    int64_t bytes;  // for MPI_BYTE blocks
    MPI_Datatype type;
  };
  std::vector<block> host;
  int64_t host_bytes = 0, device_first = -1, device_bytes = 0;
  const pack_buffer& hbuf = send ? host_send_ : host_recv_;
  const pack_buffer& dbuf = send ? device_send_ : device_recv_;
  for (std::size_t i = begin; i < end; ++i) {
    const part& p = parts_[i];
    if (p.how == transport::device_pack && gpu_aware_) {
      if (device_first < 0) device_first = p.offset;
      device_bytes += p.bytes;
      continue;
    }
    host_bytes += p.bytes;
    if (p.how == transport::datatype) {
      const gtstorage_interface_info info =
          describe(p.view, GTSTORAGE_SIDE_HOST, field_name(p.field));
      host.push_back({static_cast<std::byte*>(info.data), 0, region_type(p)});
      continue;
    }
    std::byte* address = (p.how == transport::host_pack ? hbuf : dbuf).host + p.offset;
    if (!host.empty() && host.back().type == MPI_BYTE &&
        host.back().address + host.back().bytes == address) {
      host.back().bytes += p.bytes;  // continues the previous packed block
    } else {
      host.push_back({address, p.bytes, MPI_BYTE});
    }
  }
  if (!host.empty()) {
    message m;
    m.peer = peer;
    m.tag = tag;
    m.receive = !send;
    m.bytes = host_bytes;
    if (host.size() == 1 && host[0].type == MPI_BYTE) {
      m.buffer = host[0].address;
      m.count = to_int(host[0].bytes, "a message");
    } else if (host.size() == 1) {
      m.buffer = host[0].address;
      m.count = 1;
      m.type = host[0].type;
      m.owns_type = true;
    } else {
      std::vector<int> lengths;
      std::vector<MPI_Aint> displacements;
      std::vector<MPI_Datatype> types;
      for (const block& b : host) {
        MPI_Aint a = 0;
        check_mpi(MPI_Get_address(b.address, &a), "MPI_Get_address");
        displacements.push_back(a);
        lengths.push_back(b.type == MPI_BYTE ? to_int(b.bytes, "a packed block") : 1);
        types.push_back(b.type);
      }
      const int rc = MPI_Type_create_struct(static_cast<int>(host.size()), lengths.data(),
                                            displacements.data(), types.data(), &m.type);
      for (block& b : host) {
        if (b.type != MPI_BYTE) MPI_Type_free(&b.type);
      }
      check_mpi(rc, "MPI_Type_create_struct");
      m.buffer = MPI_BOTTOM;
      m.count = 1;
      m.owns_type = true;
    }
    if (m.owns_type) check_mpi(MPI_Type_commit(&m.type), "MPI_Type_commit");
    messages_.push_back(m);
  }
  if (device_bytes > 0) {
    message m;
    m.peer = peer;
    m.tag = device_tag + tag;
    m.receive = !send;
    m.device = true;
    m.buffer = dbuf.device + device_first;
    m.count = to_int(device_bytes, "a message");
    m.bytes = device_bytes;
    messages_.push_back(m);
  }
}

}  // namespace gts::mpi
