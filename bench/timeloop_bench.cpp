// gtstorage-bench-timeloop: a model's time loop through the public C API. Each step makes the
// temporaries a GT4Py stencil program makes: 3-D float64 fields with a halo in I and J (the
// options gtstorage.gdp3.zeros / empty pass down), takes each one's domain view and its
// descriptor, computes into the view from two persistent input fields (a user loop, as a
// compiled stencil would), fills a second temporary through gtstorage_fill_double, and releases
// the views and the temporaries. The figure is the median time of one step over repeated
// rounds, per grid size (wall time, and the process's CPU time, which on a shared machine is the
// steadier figure: run with OMP_NUM_THREADS=1 for it), printed as one JSON object on stdout.
//
// The create path's caches pay off only where a temporary is small, so the grids go from
// blocked-model tiles to a full subdomain. A/B of two builds of the library: run this program
// against each (LD_LIBRARY_PATH / LD_PRELOAD), alternating, and compare the medians.
//
//   gtstorage-bench-timeloop [--json-only] [--reps N] [--steps N] [--temporaries N]
//                            [--grid NIxNJxNK]... (halo 3 in I and J; default: 8x8x8 to 64x64x64)
#include <algorithm>
#include <array>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

using bench::check;
using bench::json_object;

struct options {
  int reps = 11;
  int steps = 0;  // 0: chosen per grid so that a round takes a few milliseconds at least
  int temporaries = 6;
  bool json_only = false;
  std::vector<std::array<int64_t, 3>> grids;  // --grid; none given: the default set
};

[[noreturn]] void usage_error(const char* why) {
  std::fprintf(stderr,
               "gtstorage-bench-timeloop: %s\n"
               "usage: gtstorage-bench-timeloop [--json-only] [--reps N] [--steps N] "
               "[--temporaries N] [--grid NIxNJxNK]...\n",
               why);
  std::exit(2);
}

int positive(const char* s, int max, const char* what) {
  int v = 0;
  if (!bench::parse_count(s, max, v)) usage_error(what);
  return v;
}

options parse_args(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json-only") {
      o.json_only = true;
    } else if (a == "--reps" && i + 1 < argc) {
      o.reps = positive(argv[++i], 1000, "--reps must be an integer in 1..1000");
    } else if (a == "--steps" && i + 1 < argc) {
      o.steps = positive(argv[++i], 1000000, "--steps must be an integer in 1..1000000");
    } else if (a == "--grid" && i + 1 < argc) {
      int64_t g[3];
      if (!bench::parse_extents(argv[++i], 4096, g)) {
        usage_error("--grid must be NIxNJxNK with extents in 1..4096");
      }
      o.grids.push_back({g[0], g[1], g[2]});
    } else if (a == "--temporaries" && i + 1 < argc) {
      o.temporaries = positive(argv[++i], 64, "--temporaries must be an integer in 1..64");
    } else {
      usage_error(("unknown argument '" + a + "'").c_str());
    }
  }
  return o;
}

struct grid {
  int64_t ni, nj, nk;  // compute domain; the halo comes on top in I and J
  int64_t halo;
};

// The options of a GDP-3 temporary: gtstorage.gdp3.zeros((ni+2h, nj+2h, nk), dtype=float64,
// aligned_index=(h, h, 0), dimensions="IJK", halo=((h, h), (h, h), (0, 0)),
// backend="gt:cpu_kfirst").
struct temporary_options {
  int64_t shape[3], halo[6], aligned[3];
  gtstorage_create_options o;

  temporary_options(const grid& g, int32_t init)
      : shape{g.ni + 2 * g.halo, g.nj + 2 * g.halo, g.nk},
        halo{g.halo, g.halo, g.halo, g.halo, 0, 0},
        aligned{g.halo, g.halo, 0},
        o(bench::field_options(shape, "gt:cpu_kfirst", init)) {
    o.halo = halo;
    o.aligned_index = aligned;
  }
  temporary_options(const temporary_options&) = delete;
  temporary_options& operator=(const temporary_options&) = delete;
};

// CPU time of the process (all its threads): on a shared machine the wall time also counts the
// time the process waited for a core; with one thread (OMP_NUM_THREADS=1) this is the work.
double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

gtstorage_interface_info describe(gtstorage_handle h) {
  gtstorage_interface_info info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  check(gtstorage_interface(h, GTSTORAGE_SIDE_HOST, &info), "gtstorage_interface");
  return info;
}

// out = a + 0.5 * b over the domain (the descriptors of three domain views of one shape), in
// the memory order of out (its dimensions by decreasing stride), as a compiled stencil runs.
void stencil(const gtstorage_interface_info& out, const gtstorage_interface_info& a,
             const gtstorage_interface_info& b) {
  int order[3] = {0, 1, 2};
  std::sort(order, order + 3, [&](int x, int y) { return out.strides[x] > out.strides[y]; });
  const int d0 = order[0], d1 = order[1], d2 = order[2];
  auto row = [](const gtstorage_interface_info& f, int d0, int64_t i0, int d1, int64_t i1) {
    return reinterpret_cast<double*>(static_cast<char*>(f.data) + i0 * f.strides[d0] +
                                     i1 * f.strides[d1]);
  };
  const int64_t so = out.strides[d2] / 8, sx = a.strides[d2] / 8, sy = b.strides[d2] / 8;
  for (int64_t i0 = 0; i0 < out.shape[d0]; ++i0) {
    for (int64_t i1 = 0; i1 < out.shape[d1]; ++i1) {
      double* o = row(out, d0, i0, d1, i1);
      const double* x = row(a, d0, i0, d1, i1);
      const double* y = row(b, d0, i0, d1, i1);
      for (int64_t k = 0; k < out.shape[d2]; ++k) o[k * so] = x[k * sx] + 0.5 * y[k * sy];
    }
  }
}

// One time step: per pair of temporaries, a zeros() one computed into by the stencil and an
// empty() one filled through the library, each seen through its domain view.
void step(int temporaries, const temporary_options& zeros, const temporary_options& empty,
          const gtstorage_interface_info& a, const gtstorage_interface_info& b, double value) {
  for (int t = 0; t < temporaries; ++t) {
    const temporary_options& o = t % 2 == 0 ? zeros : empty;
    gtstorage_handle tmp = GTSTORAGE_NULL_HANDLE, domain = GTSTORAGE_NULL_HANDLE;
    check(gtstorage_create(&o.o, &tmp), "gtstorage_create");
    check(gtstorage_domain_view(tmp, &domain), "gtstorage_domain_view");
    if (t % 2 == 0) {
      stencil(describe(domain), a, b);
    } else {
      check(gtstorage_fill_double(domain, value), "gtstorage_fill_double");
    }
    check(gtstorage_release(domain), "gtstorage_release (view)");
    check(gtstorage_release(tmp), "gtstorage_release");
  }
}

json_object run_grid(const options& opt, const grid& g) {
  const temporary_options zeros(g, GTSTORAGE_INIT_ZEROS), empty(g, GTSTORAGE_INIT_UNINITIALIZED);
  // The model's persistent fields, read by every step.
  gtstorage_handle in[2] = {GTSTORAGE_NULL_HANDLE, GTSTORAGE_NULL_HANDLE};
  gtstorage_handle in_domain[2] = {GTSTORAGE_NULL_HANDLE, GTSTORAGE_NULL_HANDLE};
  gtstorage_interface_info in_info[2];
  for (int f = 0; f < 2; ++f) {
    check(gtstorage_create(&zeros.o, &in[f]), "gtstorage_create (input)");
    check(gtstorage_fill_double(in[f], 1.0 + f), "gtstorage_fill_double (input)");
    check(gtstorage_domain_view(in[f], &in_domain[f]), "gtstorage_domain_view (input)");
    in_info[f] = describe(in_domain[f]);
  }
  const int64_t cells = g.ni * g.nj * g.nk;
  // About 5e6 cell updates per round, between 5 and 20000 steps.
  const int steps =
      opt.steps > 0
          ? opt.steps
          : static_cast<int>(std::min<int64_t>(20000, std::max<int64_t>(5, 5000000 / (cells * 6))));
  volatile double seed = 2.5;
  const double value = seed;
  auto round = [&] {
    for (int s = 0; s < steps; ++s)
      step(opt.temporaries, zeros, empty, in_info[0], in_info[1], value);
  };
  round();  // warm-up: pools, memo and caches filled as in a running model
  std::vector<double> t, cpu;
  for (int r = 0; r < opt.reps; ++r) {
    const double a = bench::now_s(), c = cpu_s();
    round();
    t.push_back((bench::now_s() - a) / steps);
    cpu.push_back((cpu_s() - c) / steps);
  }
  for (int f = 0; f < 2; ++f) {
    check(gtstorage_release(in_domain[f]), "gtstorage_release (input view)");
    check(gtstorage_release(in[f]), "gtstorage_release (input)");
  }
  std::vector<double> sorted = t;
  std::sort(sorted.begin(), sorted.end());
  json_object o;
  o.string("grid", std::to_string(g.ni) + "x" + std::to_string(g.nj) + "x" + std::to_string(g.nk));
  o.integer("halo", g.halo);
  o.integer("temporary_bytes", (g.ni + 2 * g.halo) * (g.nj + 2 * g.halo) * g.nk * 8);
  o.integer("steps_per_round", steps);
  o.number("step_us", bench::median(t) * 1e6, 3);
  o.number("step_us_min", sorted.front() * 1e6, 3);
  o.number("step_us_max", sorted.back() * 1e6, 3);
  o.number("per_temporary_ns", bench::median(t) * 1e9 / opt.temporaries, 1);
  o.number("step_cpu_us", bench::median(cpu) * 1e6, 3);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse_args(argc, argv);
  // From a blocked model's tile (a few KiB per temporary, where a create's overhead is most of
  // the step) to a subdomain (MiBs, where the stencil's memory traffic is).
  std::vector<grid> grids = {{8, 8, 8, 3}, {16, 16, 16, 3}, {32, 32, 32, 3}, {64, 64, 64, 3}};
  if (!opt.grids.empty()) {
    grids.clear();
    for (const auto& g : opt.grids) grids.push_back({g[0], g[1], g[2], 3});
  }
  std::string cases = "[";
  json_object out;
  out.string("benchmark", "gtstorage-bench-timeloop");
  out.integer("temporaries_per_step", opt.temporaries);
  out.integer("reps", opt.reps);
  for (std::size_t i = 0; i < grids.size(); ++i) {
    const json_object c = run_grid(opt, grids[i]);
    cases += (i ? ", " : "") + c.str();
    if (!opt.json_only) std::fprintf(stderr, "%s\n", c.str().c_str());
  }
  out.raw("cases", cases + "]");
  std::printf("%s\n", out.str().c_str());
  return 0;
}
