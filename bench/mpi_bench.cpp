// gtstorage-bench-mpi: halo exchange time of libgtstorage_mpi against a hand-written
// pack / Isend / Irecv / unpack exchange of the same fields, in the same run, as one JSON object.
//
//   mpiexec -n 4 gtstorage-bench-mpi [--size 128,128,64] [--halo 2] [--reps 9] [--iters 20]
//
// Per process: fields of ni x nj x nk <f8 with a halo of h in I and J (the size is the interior),
// over a periodic 2-D grid of the processes; faces, edges and corners (8 neighbours). For each of
// K-fastest (gt:cpu_kfirst) and I-fastest (gt:cpu_ifirst) storage, and 1 and 8 fields:
//   - gtstorage: gtstorage_exchange_run of one exchange bound to the fields (AUTO, and the
//     DATATYPE and PACK methods forced, for reference);
//   - baseline: what one writes by hand (and what GHEX and pace do on the CPU): per neighbour one
//     buffer carrying every field's region, packed with memcpy of the contiguous runs, MPI_Irecv
//     and MPI_Isend of the buffers, MPI_Waitall, unpack the same way; buffers allocated once.
// A sample is the time of `iters` exchanges after a barrier, the maximum over processes, divided
// by iters; each figure is the median of `reps` samples, the methods alternating sample by sample
// so that a noisy moment hurts all of them alike. Ratios are gtstorage / baseline (target <= 1).
// The baseline's halos are checked against gtstorage's after the run (they must be identical).
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "gtstorage/gtstorage_mpi.h"

namespace {

struct options {
  int64_t ni = 128, nj = 128, nk = 64, halo = 2;
  int reps = 9, iters = 20;
};

// One field region of one direction as memcpy runs: base pointer, run bytes, run count and the
// byte offsets of the runs (precomputed once, as a hand-written exchange would).
struct runs {
  std::byte* base = nullptr;
  int64_t run_bytes = 0;
  std::vector<int64_t> offsets;
  [[nodiscard]] int64_t bytes() const { return run_bytes * static_cast<int64_t>(offsets.size()); }
};

struct field_geometry {
  std::byte* data = nullptr;  // element (0, 0, 0), halo included
  int64_t shape[3]{}, strides[3]{};
};

// The runs of the box [lo, lo + n) per dim of field f: along the dim of smallest stride.
runs make_runs(const field_geometry& f, const int64_t* lo, const int64_t* n) {
  int inner = 0;
  for (int d = 1; d < 3; ++d) {
    if (f.strides[d] < f.strides[inner]) inner = d;
  }
  runs r;
  r.base = f.data;
  r.run_bytes = n[inner] * 8;
  int64_t idx[3];
  for (idx[0] = lo[0]; idx[0] < lo[0] + (inner == 0 ? 1 : n[0]); ++idx[0]) {
    for (idx[1] = lo[1]; idx[1] < lo[1] + (inner == 1 ? 1 : n[1]); ++idx[1]) {
      for (idx[2] = lo[2]; idx[2] < lo[2] + (inner == 2 ? 1 : n[2]); ++idx[2]) {
        int64_t off = 0;
        for (int d = 0; d < 3; ++d) off += (d == inner ? lo[d] : idx[d]) * f.strides[d];
        r.offsets.push_back(off);
      }
    }
  }
  return r;
}

// The hand-written exchange: per direction a send and a receive buffer with every field.
class baseline {
 public:
  baseline(const std::vector<field_geometry>& fields, MPI_Comm cart, int64_t h) : comm_(cart) {
    int coords[2], dims[2], periods[2];
    MPI_Cart_get(cart, 2, dims, periods, coords);
    for (int di = -1; di <= 1; ++di) {
      for (int dj = -1; dj <= 1; ++dj) {
        if (di == 0 && dj == 0) continue;
        direction d;
        int c[2] = {(coords[0] + di + dims[0]) % dims[0], (coords[1] + dj + dims[1]) % dims[1]};
        MPI_Cart_rank(cart, c, &d.peer);
        d.send_tag = (di + 1) * 3 + (dj + 1);
        d.recv_tag = (1 - di) * 3 + (1 - dj);
        for (const field_geometry& f : fields) {
          const int64_t n[2] = {f.shape[0] - 2 * h, f.shape[1] - 2 * h};
          int64_t slo[3] = {0, 0, 0}, rlo[3] = {0, 0, 0}, cnt[3] = {0, 0, f.shape[2]};
          const int off[2] = {di, dj};
          for (int k = 0; k < 2; ++k) {
            cnt[k] = off[k] == 0 ? n[k] : h;
            slo[k] = off[k] == 0 ? h : off[k] > 0 ? n[k] : h;
            rlo[k] = off[k] == 0 ? h : off[k] > 0 ? h + n[k] : 0;
          }
          d.send.push_back(make_runs(f, slo, cnt));
          d.recv.push_back(make_runs(f, rlo, cnt));
        }
        int64_t bytes = 0;
        for (const runs& r : d.send) bytes += r.bytes();
        d.sbuf.resize(static_cast<std::size_t>(bytes));
        d.rbuf.resize(static_cast<std::size_t>(bytes));
        dirs_.push_back(std::move(d));
      }
    }
    requests_.resize(2 * dirs_.size());
  }

  void run() {
    for (std::size_t i = 0; i < dirs_.size(); ++i) {
      direction& d = dirs_[i];
      MPI_Irecv(d.rbuf.data(), static_cast<int>(d.rbuf.size()), MPI_BYTE, d.peer, d.recv_tag, comm_,
                &requests_[i]);
    }
    for (std::size_t i = 0; i < dirs_.size(); ++i) {
      direction& d = dirs_[i];
      std::byte* out = d.sbuf.data();
      for (const runs& r : d.send) {
        for (const int64_t o : r.offsets) {
          std::memcpy(out, r.base + o, static_cast<std::size_t>(r.run_bytes));
          out += r.run_bytes;
        }
      }
      MPI_Isend(d.sbuf.data(), static_cast<int>(d.sbuf.size()), MPI_BYTE, d.peer, d.send_tag, comm_,
                &requests_[dirs_.size() + i]);
    }
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    for (direction& d : dirs_) {
      const std::byte* in = d.rbuf.data();
      for (const runs& r : d.recv) {
        for (const int64_t o : r.offsets) {
          std::memcpy(r.base + o, in, static_cast<std::size_t>(r.run_bytes));
          in += r.run_bytes;
        }
      }
    }
  }

 private:
  struct direction {
    int peer = MPI_PROC_NULL, send_tag = 0, recv_tag = 0;
    std::vector<runs> send, recv;
    std::vector<std::byte> sbuf, rbuf;
  };
  MPI_Comm comm_;
  std::vector<direction> dirs_;
  std::vector<MPI_Request> requests_;
};

double sample(MPI_Comm comm, int iters, const std::function<void()>& step) {
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) step();
  double t = (MPI_Wtime() - t0) / iters, worst = 0;
  MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
  return worst;
}

void fill(std::vector<gtstorage_handle>& fields, int rank) {
  for (std::size_t f = 0; f < fields.size(); ++f) {
    bench::check(gtstorage_fill_double(fields[f], 1000.0 * rank + static_cast<double>(f)), "fill");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--size") {
      std::sscanf(next().c_str(), "%ld,%ld,%ld", &opt.ni, &opt.nj, &opt.nk);
    } else if (a == "--halo") {
      opt.halo = std::atol(next().c_str());
    } else if (a == "--reps") {
      opt.reps = std::max(1, std::atoi(next().c_str()));
    } else if (a == "--iters") {
      opt.iters = std::max(1, std::atoi(next().c_str()));
    } else {
      std::fprintf(stderr,
                   "usage: gtstorage-bench-mpi [--size NI,NJ,NK] [--halo H] [--reps R] "
                   "[--iters N]\n");
      MPI_Finalize();
      return 2;
    }
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  gtstorage_decomp_options dopt = GTSTORAGE_DECOMP_OPTIONS_INIT;
  const int32_t periodic[2] = {1, 1};
  dopt.comm = MPI_Comm_c2f(MPI_COMM_WORLD);
  dopt.periodic = periodic;
  gtstorage_decomp decomp = 0;
  bench::check(gtstorage_decomp_create(&dopt, &decomp), "gtstorage_decomp_create");
  gtstorage_decomp_info dinfo = GTSTORAGE_DECOMP_INFO_INIT;
  bench::check(gtstorage_decomp_get_info(decomp, &dinfo), "gtstorage_decomp_get_info");
  const MPI_Comm cart = MPI_Comm_f2c(static_cast<MPI_Fint>(dinfo.comm));

  bench::json_object out;
  out.integer("processes", size);
  out.string("grid", std::to_string(dinfo.proc_dims[0]) + "x" + std::to_string(dinfo.proc_dims[1]));
  out.string("size_per_process",
             std::to_string(opt.ni) + "x" + std::to_string(opt.nj) + "x" + std::to_string(opt.nk));
  out.integer("halo", opt.halo);
  out.integer("reps", opt.reps);
  out.integer("iters", opt.iters);
  bench::json_object targets;
  bool all_pass = true;
  int checked = 0, mismatches = 0;

  for (const char* preset : {"gt:cpu_kfirst", "gt:cpu_ifirst"}) {
    for (const int nfields : {1, 8}) {
      const int64_t shape[3] = {opt.ni + 2 * opt.halo, opt.nj + 2 * opt.halo, opt.nk};
      const int64_t halo[6] = {opt.halo, opt.halo, opt.halo, opt.halo, 0, 0};
      std::vector<gtstorage_handle> fields(static_cast<std::size_t>(nfields)),
          twins(static_cast<std::size_t>(nfields));
      std::vector<field_geometry> geometry;
      for (int f = 0; f < nfields; ++f) {
        gtstorage_create_options c = bench::create_options(3, shape, preset, GTSTORAGE_INIT_ZEROS);
        c.halo = halo;
        bench::check(gtstorage_create(&c, &fields[static_cast<std::size_t>(f)]), "create");
        bench::check(gtstorage_create(&c, &twins[static_cast<std::size_t>(f)]), "create");
        gtstorage_interface_info info = GTSTORAGE_INTERFACE_INFO_INIT;
        bench::check(
            gtstorage_interface(twins[static_cast<std::size_t>(f)], GTSTORAGE_SIDE_HOST, &info),
            "interface");
        field_geometry g;
        g.data = static_cast<std::byte*>(info.data);
        for (int d = 0; d < 3; ++d) g.shape[d] = info.shape[d], g.strides[d] = info.strides[d];
        geometry.push_back(g);
      }
      fill(fields, rank);
      fill(twins, rank);
      const int32_t methods[3] = {GTSTORAGE_EXCHANGE_AUTO, GTSTORAGE_EXCHANGE_DATATYPE,
                                  GTSTORAGE_EXCHANGE_PACK};
      const char* method_names[3] = {"auto", "datatype", "pack"};
      gtstorage_exchange ex[3] = {0, 0, 0};
      for (int m = 0; m < 3; ++m) {
        gtstorage_exchange_options eo = GTSTORAGE_EXCHANGE_OPTIONS_INIT;
        eo.method = methods[m];
        bench::check(gtstorage_exchange_create(decomp, fields.data(),
                                               static_cast<uint32_t>(nfields), &eo, &ex[m]),
                     "gtstorage_exchange_create");
      }
      baseline base(geometry, cart, opt.halo);
      // Warm-up (and the correctness check below: both exchanged the same data once).
      bench::check(gtstorage_exchange_run(ex[0]), "gtstorage_exchange_run");
      base.run();
      for (int f = 0; f < nfields; ++f) {
        std::vector<double> a(static_cast<std::size_t>(shape[0] * shape[1] * shape[2])), b(a);
        gtstorage_array arr = GTSTORAGE_ARRAY_INIT;
        arr.ndim = 3;
        arr.shape = shape;
        arr.data = a.data();
        bench::check(gtstorage_copy_to_array(&arr, fields[static_cast<std::size_t>(f)]), "copy");
        arr.data = b.data();
        bench::check(gtstorage_copy_to_array(&arr, twins[static_cast<std::size_t>(f)]), "copy");
        ++checked;
        if (a != b) ++mismatches;
      }
      std::vector<double> t[4];
      for (int r = 0; r < opt.reps; ++r) {
        for (int m = 0; m < 3; ++m) {
          t[m].push_back(sample(cart, opt.iters, [&] {
            bench::check(gtstorage_exchange_run(ex[m]), "gtstorage_exchange_run");
          }));
        }
        t[3].push_back(sample(cart, opt.iters, [&] { base.run(); }));
      }
      const std::string key =
          std::string(std::strcmp(preset, "gt:cpu_kfirst") == 0 ? "kfirst" : "ifirst") + "_" +
          std::to_string(nfields) + (nfields == 1 ? "_field" : "_fields");
      bench::json_object o;
      const double base_us = bench::median(t[3]) * 1e6;
      for (int m = 0; m < 3; ++m) {
        o.number(std::string("gtstorage_") + method_names[m] + "_us", bench::median(t[m]) * 1e6, 1);
      }
      o.number("baseline_pack_isend_us", base_us, 1);
      gtstorage_exchange_info xi = GTSTORAGE_EXCHANGE_INFO_INIT;
      bench::check(gtstorage_exchange_get_info(ex[0], &xi), "info");
      o.integer("auto_datatype_regions", xi.datatype_regions);
      o.integer("auto_packed_regions", xi.packed_regions);
      o.integer("halo_bytes_sent", xi.bytes_sent);
      const double ratio = bench::median(t[0]) * 1e6 / base_us;
      o.number("ratio_auto_vs_baseline", ratio, 3);
      out.object(key, o);
      bench::json_object target;
      target.number("ratio", ratio, 3);
      target.number("max", 1.0, 2);
      target.boolean("pass", ratio <= 1.0);
      all_pass = all_pass && ratio <= 1.0;
      targets.object(key + "_vs_baseline", target);
      for (gtstorage_exchange e : ex) bench::check(gtstorage_exchange_release(e), "release");
      for (gtstorage_handle h : fields) bench::check(gtstorage_release(h), "release");
      for (gtstorage_handle h : twins) bench::check(gtstorage_release(h), "release");
    }
  }
  int all_mismatches = 0;
  MPI_Allreduce(&mismatches, &all_mismatches, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  out.integer("fields_checked_per_process", checked);
  out.integer("baseline_mismatches", all_mismatches);
  out.object("targets", targets);
  out.boolean("all_targets_pass", all_pass);
  if (rank == 0) std::printf("%s\n", out.str().c_str());
  bench::check(gtstorage_decomp_release(decomp), "release");
  MPI_Finalize();
  return all_mismatches == 0 ? 0 : 1;
}
