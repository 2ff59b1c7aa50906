#include "mpi/agreement.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "mpi/boundary.hpp"

namespace gts::mpi {
namespace {

// Longest sleep between two polls of a pending step: a step that completes costs at most this
// much more than a blocking call, and a waiting process leaves its core to the others (ranks
// are often oversubscribed in tests).
constexpr std::chrono::microseconds max_pause{1000};
// Largest deadline accepted (about 31 years): keeps the arithmetic of the clock in range.
constexpr double max_timeout_seconds = 1e9;

// Operations abandoned at their deadline: MPI may still complete one later (if the missing
// process ever joins) and write its buffers or output handle, so these stay allocated until the
// process exits. Reachable from here, so LeakSanitizer does not report them either.
void keep_forever(std::shared_ptr<void> state) {
  struct kept_states {
    std::mutex mutex;
    std::vector<std::shared_ptr<void>> states;
  };
  static auto* const kept = new kept_states();
  const std::lock_guard<std::mutex> lock(kept->mutex);
  kept->states.push_back(std::move(state));
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

std::string message_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown error";
  }
}

// Polls @p request (a nonblocking collective) until it completes (true) or the deadline passes
// (false: it is still pending).
bool completes(MPI_Request& request, const deadline& limit) {
  if (limit.seconds <= 0) {
    check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
    return true;
  }
  using clock = std::chrono::steady_clock;
  const auto end = clock::now() + std::chrono::duration_cast<clock::duration>(
                                      std::chrono::duration<double>(limit.seconds));
  std::chrono::microseconds pause{1};
  while (true) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done != 0) return true;
    if (clock::now() >= end) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, max_pause);
  }
}

// Waits for the request of @p state; after the deadline keeps @p state for good and throws
// abandoned_error naming @p operation and @p left (what keeps the pending operation).
template <class State>
void finish(const std::shared_ptr<State>& state, MPI_Request& request, const deadline& limit,
            const char* function, const char* operation, const char* left) {
  bool done = false;
  try {
    done = completes(request, limit);
  } catch (...) {
    keep_forever(state);  // a failed poll may leave the operation in flight too
    throw;
  }
  if (done) return;
  keep_forever(state);
  throw abandoned_error(
      std::string(function) + ": not every process joined " + operation +
      " within the deadline of " + seconds_text(limit.seconds) + " s (" + timeout_variable +
      "): some process passed an invalid communicator or decomposition, or did not make this "
      "call; MPI cannot cancel a collective operation, so " +
      left + " keeps it pending and must not be used for collective calls again");
}

constexpr const char* own_copy = "the library's own copy of the communicator (never freed)";

}  // namespace

deadline deadline::from_environment() {
  deadline d;
  const char* env = std::getenv(timeout_variable);
  if (env == nullptr || *env == '\0') return d;
  char* end = nullptr;
  const double seconds = std::strtod(env, &end);
  if (end == env || *end != '\0' || !std::isfinite(seconds) || seconds < 0 ||
      seconds > max_timeout_seconds) {
    d.error = std::make_exception_ptr(
        gts::error(error_kind::invalid_argument,
                   std::string(timeout_variable) + ": \"" + env +
                       "\" is not a number of seconds in 0 … 1e9 (0: no deadline; default " +
                       seconds_text(default_timeout_seconds) + ")"));
    return d;
  }
  d.seconds = seconds;
  return d;
}

// The nonblocking requests below are completed by MPI_Test (completes()), or left pending on
// purpose at the deadline; clang's MPI checker only knows MPI_Wait*.
// NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
MPI_Comm duplicate(MPI_Comm comm, const deadline& limit, const char* function, const char* left) {
  struct state {
    MPI_Comm copy = MPI_COMM_NULL;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  auto s = std::make_shared<state>();
  check_mpi(MPI_Comm_idup(comm, &s->copy, &s->request), "MPI_Comm_idup");
  finish(s, s->request, limit, function, "MPI_Comm_idup", left);
  MPI_Comm_set_errhandler(s->copy, MPI_ERRORS_RETURN);
  return s->copy;
}

void agree(MPI_Comm comm, const std::exception_ptr& local, const char* function,
           const deadline& limit, const std::vector<same_value>& same) {
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  // One MPI_MINLOC over (value, rank) pairs (MPI_2INT): [0] the lowest failed rank (size when
  // none failed), then per same_value its minimum and its negated maximum.
  struct located {
    int value;
    int rank;
  };
  struct reduction {
    std::vector<located> in, out;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  const std::size_t n = 1 + 2 * same.size();
  auto r = std::make_shared<reduction>();
  r->in.assign(n, located{0, rank});
  r->out.assign(n, located{0, 0});
  r->in[0].value = local ? rank : size;
  for (std::size_t i = 0; i < same.size(); ++i) {
    const int v = local ? 0 : std::max(same[i].value, INT_MIN + 1);
    r->in[1 + 2 * i].value = v;
    r->in[2 + 2 * i].value = -v;
  }
  auto step = [&](const auto& state, MPI_Request& request, const char* operation) {
    try {
      finish(state, request, limit, function, operation, own_copy);
    } catch (const abandoned_error& e) {
      if (!local) throw;
      throw abandoned_error(std::string(e.what()) +
                            "; this process failed too: " + message_of(local));
    }
  };
  check_mpi(MPI_Iallreduce(r->in.data(), r->out.data(), static_cast<int>(n), MPI_2INT, MPI_MINLOC,
                           comm, &r->request),
            "MPI_Iallreduce");
  step(r, r->request, "MPI_Iallreduce");
  const int first = r->out[0].value;
  if (first == size) {
    for (std::size_t i = 0; i < same.size(); ++i) {
      const located low = r->out[1 + 2 * i], high = r->out[2 + 2 * i];
      if (low.value == -high.value) continue;
      auto show = [&](int v) { return same[i].show ? same[i].show(v) : std::to_string(v); };
      fail_arg(same[i].name, show(low.value) + " on rank " + std::to_string(low.rank) + " but " +
                                 show(-high.value) + " on rank " + std::to_string(high.rank) +
                                 ": every process must pass the same to " + function);
    }
    return;
  }
  struct broadcast {
    std::array<char, 1024> message{};
    MPI_Request request = MPI_REQUEST_NULL;
  };
  auto b = std::make_shared<broadcast>();
  if (rank == first) {
    const std::string text = message_of(local);
    std::strncpy(b->message.data(), text.c_str(), b->message.size() - 1);
  }
  check_mpi(MPI_Ibcast(b->message.data(), static_cast<int>(b->message.size()), MPI_CHAR, first,
                       comm, &b->request),
            "MPI_Ibcast");
  step(b, b->request, "MPI_Ibcast");
  if (local) std::rethrow_exception(local);
  b->message.back() = '\0';
  fail(error_kind::communication, std::string(function) + ": failed on rank " +
                                      std::to_string(first) + ": " + b->message.data());
}

int minimum(MPI_Comm comm, int value, const char* function, const deadline& limit) {
  struct reduction {
    int in = 0, out = 0;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  auto r = std::make_shared<reduction>();
  r->in = value;
  check_mpi(MPI_Iallreduce(&r->in, &r->out, 1, MPI_INT, MPI_MIN, comm, &r->request),
            "MPI_Iallreduce");
  finish(r, r->request, limit, function, "MPI_Iallreduce", own_copy);
  return r->out;
}

// NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)

}  // namespace gts::mpi
