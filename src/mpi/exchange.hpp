// A persistent halo exchange bound to N storages over a decomposition (gtstorage_exchange_*).
//
// Built once: for every direction with a neighbour, one message each way that carries every
// field's region. A host region travels either as an MPI derived datatype made from the storage's
// byte strides (no copy) or packed by the library's copy kernels into a host buffer; a region of
// a field with device memory is always packed, on the side that is current, into a pair of pack
// buffers (pinned host + device) and travels from the device buffer (GPU-aware MPI) or from the
// pinned one (staged: only the packed halo bytes cross the bus). Messages, requests, buffers and
// the views and wraps the copies use are made here, so a step allocates nothing.
//
// The wire format of a region is its points in the field's memory order (the layout map), the
// same whether it is sent as a datatype or packed, so each process chooses its method alone;
// neighbours check at creation that they agree on dtype, layout, region shapes and device-ness.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "gtstorage/gtstorage_mpi.h"
#include "mpi/decomposition.hpp"
#include "mpi/halo_regions.hpp"

namespace gts::mpi {

enum class pattern_kind { box, star };
enum class method_kind { automatic, datatype, pack };
enum class side_choice { current, host, device };

/// What gtstorage_exchange_create() was asked for (the C boundary read and checked the enums).
struct exchange_request {
  const int64_t* width = nullptr;  ///< 2 * ndim or NULL.
  pattern_kind pattern = pattern_kind::box;
  method_kind method = method_kind::automatic;
  side_choice side = side_choice::current;
  int gpu_aware = -1;  ///< -1 auto, 0, 1.
};

/// Per-step figures of an exchange (gtstorage_exchange_info).
struct exchange_figures {
  int nfields = 0, directions = 0, messages = 0, datatype_regions = 0, packed_regions = 0;
  bool gpu_aware = false, in_flight = false, faces_only = false;
  int64_t bytes_sent = 0, bytes_received = 0, staged_d2h = 0, staged_h2d = 0, steps = 0;
};

class exchange {
 public:
  /// Collective over @p decomp's communicator (see gtstorage_exchange_create()). @p failed: a
  /// failure the C boundary found in this process's arguments, reported collectively (this
  /// process still takes part).
  static std::unique_ptr<exchange> create(std::shared_ptr<decomposition> decomp,
                                          const gtstorage_handle* fields, uint32_t nfields,
                                          const exchange_request& req,
                                          const std::exception_ptr& failed);
  ~exchange();
  exchange(const exchange&) = delete;
  exchange& operator=(const exchange&) = delete;

  void start();
  void wait();
  /// True (and the exchange completed) if every message has arrived.
  bool test();
  [[nodiscard]] exchange_figures figures() const;

 private:
  enum class transport { datatype, host_pack, device_pack };
  enum class field_kind { host, unified, device };  // device: a mirror or device-only

  struct bound_field {
    gtstorage_handle handle = 0;  // retained
    field_kind kind = field_kind::host;
    bool has_host = false, has_device = false;
    std::array<char, 8> typestr{};
    int64_t itemsize = 0;
    std::array<int, max_field_ndim> layout{};  // the wire order: rank of each dim
    field_geometry geo;
    int device_id = 0;
    uint64_t stream = 0;             // the stream its views and wraps were last set to
    int side = GTSTORAGE_SIDE_HOST;  // side exchanged in the current step
  };

  struct part {  // one field's region in one direction, one way
    int field = 0;
    bool send = true;
    region box;
    transport how = transport::datatype;
    gtstorage_handle view = 0;  // the field over box
    gtstorage_handle wrap = 0;  // the pack buffer over box (packed parts)
    int64_t offset = 0;         // in the pack buffer
    int64_t bytes = 0;
  };

  struct message {
    int peer = MPI_PROC_NULL;
    int tag = 0;
    bool receive = false;
    bool device = false;
    void* buffer = nullptr;  // MPI_BOTTOM with a struct type
    int count = 0;
    MPI_Datatype type = MPI_BYTE;
    bool owns_type = false;
    int64_t bytes = 0;
  };

  struct pack_buffer {  // a library storage of bytes: host, or pinned host + device
    gtstorage_handle handle = 0;
    std::byte* host = nullptr;
    std::byte* device = nullptr;
    int64_t bytes = 0;
  };

  exchange() = default;
  void bind_fields(const gtstorage_handle* fields, uint32_t nfields, const exchange_request& req);
  void check_neighbors();
  void build(const exchange_request& req);
  void add_parts(const direction& d, bool send, const exchange_request& req);
  void make_buffers();
  void make_messages(const direction& d, bool send, std::size_t begin, std::size_t end);
  MPI_Datatype region_type(const part& p) const;
  void pick_sides();
  void refresh_streams();
  void move_packed(bool send, bool to_transport);
  void finish();

  std::shared_ptr<decomposition> decomp_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool faces_only_ = false;
  side_choice side_ = side_choice::current;
  bool gpu_aware_ = false;
  std::vector<direction> dirs_;
  std::vector<bound_field> fields_;
  std::vector<part> parts_;
  std::vector<message> messages_;
  std::vector<MPI_Request> requests_;  // receives first, then sends
  pack_buffer host_send_, host_recv_, device_send_, device_recv_;
  bool in_flight_ = false;
  exchange_figures figures_;
};

/// Whether this MPI passes device memory (gtstorage_mpi_gpu_aware()).
bool mpi_gpu_aware();

}  // namespace gts::mpi
