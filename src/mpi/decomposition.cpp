#include "mpi/decomposition.hpp"

#include <climits>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "mpi/agreement.hpp"
#include "mpi/boundary.hpp"

namespace gts::mpi {

void parse_labels(const char* dims, int ndim, char* out) {
  if (dims == nullptr) {
    for (int k = 0; k < ndim; ++k) out[k] = "IJK"[k];
    return;
  }
  const std::string text(dims);
  std::string labels;
  if (text.find(',') != std::string::npos) {
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = text.find(',', start);
      const std::string item = text.substr(start, comma - start);
      if (item.size() != 1) {
        fail_arg("dims", std::string("\"")
                             .append(item)
                             .append("\" in \"")
                             .append(text)
                             .append("\" is not one of I, J, K"));
      }
      labels += item;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else {
    labels = text;
  }
  if (static_cast<int>(labels.size()) != ndim) {
    fail_arg("dims", "\"" + text + "\" names " + std::to_string(labels.size()) +
                         " dims, but ndim is " + std::to_string(ndim));
  }
  for (int k = 0; k < ndim; ++k) {
    const char c = labels[static_cast<std::size_t>(k)];
    if (c != 'I' && c != 'J' && c != 'K') {
      fail_arg("dims", std::string("'") + c + "' in \"" + text +
                           "\" is not a dim that can be decomposed (I, J or K)");
    }
    for (int j = 0; j < k; ++j) {
      if (out[j] == c)
        fail_arg("dims", std::string("'") + c + "' appears twice in \"" + text + "\"");
    }
    out[k] = c;
  }
}

namespace {

std::string show_labels(int packed) {
  std::string t = "\"";
  for (int k = 0; k < max_dims; ++k) {
    const char c = static_cast<char>((packed >> (8 * k)) & 0xff);
    if (c != '\0') t += c;
  }
  return t + "\"";
}

// The entries of same_value that gtstorage_decomp_create compares: ndim, dims, proc_dims[3],
// periodic[3], reorder.
constexpr std::size_t signature_size = 2 + 2 * max_dims + 1;

std::string show_flag(int v) {
  return v != 0 ? "1" : "0";
}

// The caller's communicator, or invalid_argument naming comm when this process has none (it
// then cannot take part in anything collective: it returns at once, the others at their
// deadline).
MPI_Comm user_communicator(int64_t comm) {
  if (comm < INT32_MIN || comm > INT32_MAX) {
    fail_arg("comm", std::to_string(comm) +
                         (comm == GTSTORAGE_MPI_COMM_UNSET ? " (GTSTORAGE_MPI_COMM_UNSET)" : "") +
                         " is not a Fortran communicator handle: pass MPI_Comm_c2f(comm), or "
                         "comm.py2f() from mpi4py");
  }
  // MPI-2 §4.12.4: an invalid Fortran handle gives an invalid C handle, no error handler is
  // called. Open MPI returns NULL for it (and for freed slots), MPI_COMM_NULL for its own.
  // MPICH's MPI_Comm_f2c is a cast: a handle it does not know is found only by its error
  // checking in the first call below (docs/scale-out.md, "Invalid handles").
  const MPI_Comm user = MPI_Comm_f2c(static_cast<MPI_Fint>(comm));
  if (user == MPI_COMM_NULL || user == MPI_Comm{}) {
    fail_arg("comm", std::to_string(comm) + " is not a valid communicator handle");
  }
  // A local call (the caller's error handler decides what a failure does). Every process of an
  // intercommunicator finds the same, so all of them return at once.
  int inter = 0;
  check_mpi(MPI_Comm_test_inter(user, &inter), "MPI_Comm_test_inter");
  if (inter) {
    fail_arg("comm", "is an intercommunicator; a Cartesian grid needs an intracommunicator");
  }
  return user;
}

}  // namespace

std::shared_ptr<decomposition> decomposition::create(const decomp_request& req) {
  constexpr const char* function = "gtstorage_decomp_create";
  require_mpi(function);
  const MPI_Comm user = user_communicator(req.comm);
  const deadline limit = deadline::from_environment();
  // The first collective step: every process joins it, or the others stop at the deadline. The
  // caller's error handler decides what a failure of MPI_Comm_idup itself does; from here on
  // the duplicate returns errors.
  MPI_Comm dup = duplicate(user, limit, function, "the communicator passed");
  auto d = std::shared_ptr<decomposition>(new decomposition());
  std::exception_ptr local = req.failed ? req.failed : limit.error;
  std::vector<same_value> same;
  if (!local) {
    try {
      if (req.ndim < 1 || req.ndim > max_dims) {
        fail_arg("ndim", std::to_string(req.ndim) + " is out of range 1 … 3");
      }
      d->ndim_ = req.ndim;
      check_mpi(MPI_Comm_size(dup, &d->size_), "MPI_Comm_size");
      parse_labels(req.dims, req.ndim, d->labels_.data());
      // The product of the fixed process counts, overflow-checked: each count fits an int32, the
      // product of three of them does not fit an int64.
      int64_t product = 1;
      bool open = false, beyond = false;
      for (int k = 0; k < req.ndim; ++k) {
        const int p = req.proc_dims != nullptr ? req.proc_dims[k] : 0;
        if (p < 0)
          fail_arg("proc_dims",
                   std::to_string(p) + " processes in dim " + d->labels_[k] + " is negative");
        d->proc_dims_[k] = p;
        if (p == 0) {
          open = true;
        } else if (__builtin_mul_overflow(product, int64_t{p}, &product)) {
          beyond = true;
        }
        d->periodic_[k] = req.periodic != nullptr && req.periodic[k] != 0 ? 1 : 0;
      }
      if (beyond || (!open && product != d->size_) || (open && d->size_ % product != 0)) {
        std::string grid = "(";
        for (int k = 0; k < req.ndim; ++k) {
          grid += (k ? ", " : "") + std::to_string(d->proc_dims_[k]);
        }
        grid += ")";
        const std::string count =
            beyond ? "more than " + std::to_string(INT64_MAX) : std::to_string(product);
        fail_arg("proc_dims", "a grid of " + grid +
                                  (open ? ", whose fixed dims make " + count + " processes,"
                                        : " = " + count + " processes") +
                                  " does not fit the communicator's " + std::to_string(d->size_) +
                                  " processes");
      }
      // What every process must pass the same (compared before MPI_Dims_create fills the open
      // dims, so a mismatch names what the callers passed).
      int labels = 0;
      for (int k = 0; k < req.ndim; ++k) labels |= (d->labels_[k] & 0xff) << (8 * k);
      same.push_back({"ndim", req.ndim});
      same.push_back({"dims", labels, show_labels});
      for (int k = 0; k < max_dims; ++k) {
        same.push_back({"proc_dims[" + std::to_string(k) + "]", d->proc_dims_[k]});
      }
      for (int k = 0; k < max_dims; ++k) {
        same.push_back({"periodic[" + std::to_string(k) + "]", d->periodic_[k], show_flag});
      }
      same.push_back({"reorder", req.reorder ? 1 : 0, show_flag});
      check_mpi(MPI_Dims_create(d->size_, req.ndim, d->proc_dims_.data()), "MPI_Dims_create");
    } catch (...) {
      local = std::current_exception();
    }
  }
  if (local) same.clear();
  same.resize(signature_size);  // as many entries on every process, failed or not
  try {
    agree(dup, local, function, limit, same);
    check_mpi(MPI_Cart_create(dup, req.ndim, d->proc_dims_.data(), d->periodic_.data(),
                              req.reorder ? 1 : 0, &d->comm_),
              "MPI_Cart_create");
  } catch (const abandoned_error&) {
    throw;  // dup keeps a pending operation: never freed
  } catch (...) {
    MPI_Comm_free(&dup);
    throw;
  }
  MPI_Comm_free(&dup);
  MPI_Comm_set_errhandler(d->comm_, MPI_ERRORS_RETURN);
  check_mpi(MPI_Comm_rank(d->comm_, &d->rank_), "MPI_Comm_rank");
  check_mpi(MPI_Cart_coords(d->comm_, d->rank_, d->ndim_, d->coords_.data()), "MPI_Cart_coords");
  return d;
}

decomposition::~decomposition() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // A communicator with an abandoned operation is kept: freeing it could release what that
  // operation still uses.
  if (comm_ != MPI_COMM_NULL && !finalized && !abandoned()) MPI_Comm_free(&comm_);
}

void decomposition::coords_of(int rank, int* out) const {
  check_mpi(MPI_Cart_coords(comm_, rank, ndim_, out), "MPI_Cart_coords");
}

int decomposition::neighbor(const int* offset) const {
  int c[max_dims] = {0, 0, 0};
  for (int k = 0; k < ndim_; ++k) {
    c[k] = coords_[k] + offset[k];
    if (c[k] < 0 || c[k] >= proc_dims_[k]) {
      if (!periodic_[k]) return MPI_PROC_NULL;
      c[k] = (c[k] + proc_dims_[k]) % proc_dims_[k];
    }
  }
  int r = MPI_PROC_NULL;
  check_mpi(MPI_Cart_rank(comm_, c, &r), "MPI_Cart_rank");
  return r;
}

void decomposition::local_extent(int rank, const int64_t* global, int64_t* offset,
                                 int64_t* extent) const {
  int c[max_dims] = {0, 0, 0};
  if (rank < 0) {
    for (int k = 0; k < ndim_; ++k) c[k] = coords_[k];
  } else {
    if (rank >= size_) {
      fail_arg("rank", std::to_string(rank) + " is out of range -1 … " + std::to_string(size_ - 1));
    }
    coords_of(rank, c);
  }
  for (int k = 0; k < ndim_; ++k) {
    const int64_t n = global[k], p = proc_dims_[k];
    if (n < p) {
      fail_arg("global_shape", "extent " + std::to_string(n) + " of dim " + labels_[k] +
                                   " is smaller than its " + std::to_string(p) +
                                   " processes: every process must own at least one point");
    }
    const int64_t base = n / p, extra = n % p;
    extent[k] = base + (c[k] < extra ? 1 : 0);
    offset[k] = c[k] * base + (c[k] < extra ? c[k] : extra);
  }
}

}  // namespace gts::mpi
