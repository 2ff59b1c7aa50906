/*
 * gtstorage-info: prints the allocation plan gtstorage would use for a field, or compares every
 * preset for one shape. Everything it prints comes from gtstorage_plan() and the preset registry,
 * so it shows exactly what gtstorage_create() would do; nothing is allocated.
 * --pool-stats prints the memory pools' counters of this process (gtstorage_pool_get_stats() and
 * the pool fields of gtstorage_get_stats()), after --exercise N create + release rounds if asked.
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <gtstorage/gtstorage.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit codes: 0 success, 2 bad input (ours or rejected by the library), 1 anything else. */
enum { EXIT_BAD_INPUT = 2, EXIT_INTERNAL = 1 };

/* More values than any storage may have, so that an ndim above GTSTORAGE_MAX_NDIM still reaches
   the library, whose message names the limit, instead of being truncated here. */
#define MAX_VALUES 64

typedef struct options {
  int64_t shape[MAX_VALUES];
  int nshape;
  int64_t halo[2 * MAX_VALUES];
  int nhalo; /* number of dims given (each one a lower:upper pair), 0 = not given */
  int halo_scalar;
  int64_t aligned_index[MAX_VALUES];
  int naligned;
  int32_t layout[MAX_VALUES];
  int nlayout;
  int64_t alignment_bytes;
  int32_t pitch_padding; /* a gtstorage_pitch_padding value */
  const char* preset;
  const char* dims;
  const char* dtype;
  int all_presets;
  int list_presets;
  int json;
  int pool_stats;
  int64_t exercise; /* -1: not given */
} options;

static const char* g_prog = "gtstorage-info";

static void print_usage(FILE* out) {
  fprintf(out,
          "Usage: %s --shape N[,N...] [options]\n"
          "       %s --shape N[,N...] --all-presets [options]\n"
          "       %s --list-presets\n"
          "       %s --pool-stats [--exercise N] [--json]\n"
          "\n"
          "Prints how gtstorage lays out a field: layout map, strides, padding, byte offset,\n"
          "sizes and which element is aligned. Nothing is allocated.\n"
          "\n"
          "Options:\n"
          "  --shape N,N,...        extents in elements, halo included (required)\n"
          "  --preset NAME          layout preset (default: numpy); see --list-presets\n"
          "  --dims LABELS          dims labels: \"IJK\", \"KJI\", \"IJK0\" or \"I,J,K,0\"\n"
          "                         (default: IJK[:ndim], then data dims 0, 1, ...)\n"
          "  --dtype TYPESTR        NumPy typestr, e.g. <f8, <f4, <i4, |b1 (default: <f8)\n"
          "  --halo SPEC            halo widths in elements: one number for every side of\n"
          "                         every dim (\"2\"), one per dim (\"2,2,0\"), or lower:upper\n"
          "                         pairs per dim (\"2:2,1:3,0:0\"); forms may be mixed per dim\n"
          "  --aligned-index I,..   element whose address is aligned (default: lower halo)\n"
          "  --alignment BYTES      alignment in bytes, overriding the preset's\n"
          "  --layout R,R,...       explicit layout map overriding the preset: rank of each\n"
          "                         dim in stride order (0 = largest stride)\n"
          "  --pitch-padding MODE   none (default: GT4Py's strides) or avoid_aliasing (strides\n"
          "                         of 4096 bytes or more moved off multiples of 4 KiB)\n"
          "  --all-presets          compare every registered preset for this shape\n"
          "  --list-presets         list the registered presets and exit\n"
          "  --pool-stats           print the memory pools' counters (limit, bytes held, hits,\n"
          "                         misses, high-water mark, ...) of pageable host, pinned host\n"
          "                         and device memory, and their sums in gtstorage_get_stats;\n"
          "                         they are this process's: a fresh process has empty pools\n"
          "  --exercise N           with --pool-stats: first create and release N fields of\n"
          "                         1 MiB in each pooled memory (pinned host and device ones\n"
          "                         where the device backend has a device, e.g.\n"
          "                         GTSTORAGE_DEVICE_BACKEND=emulated), so the counters show\n"
          "                         reuse; GTSTORAGE_POOL and GTSTORAGE_POOL_LIMIT apply\n"
          "  --json                 print JSON instead of text\n"
          "  --version              print the library version and exit\n"
          "  -h, --help             print this help and exit\n"
          "\n"
          "Options take their value as the next argument or after '=' (--shape=10,10,5).\n"
          "Exit status: 0 on success, 2 on bad input (the message says which parameter).\n"
          "\n"
          "Examples:\n"
          "  %s --preset gt:cpu_kfirst --shape 10,10,5 --halo 2,2,0\n"
          "  %s --preset gridtools:cpu_ifirst --shape 10,8,4 --halo 2,2,0 --json\n"
          "  %s --shape 64,64,80 --dims IJK --all-presets\n"
          "  %s --pool-stats --exercise 10 --json\n",
          g_prog, g_prog, g_prog, g_prog, g_prog, g_prog, g_prog, g_prog);
}

/* Reports bad command-line input (found before the library is asked) and returns exit code 2. */
static int usage_error(const char* fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: error: ", g_prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n(see %s --help)\n", g_prog);
  return EXIT_BAD_INPUT;
}

/* Reports a status returned by the library with its thread-local message. */
static int library_error(const char* what, int status) {
  fprintf(stderr, "%s: error: %s: %s: %s\n", g_prog, what, gtstorage_status_name(status),
          gtstorage_last_error());
  return status == GTSTORAGE_ERROR_INTERNAL ? EXIT_INTERNAL : EXIT_BAD_INPUT;
}

/* Parses one signed 64-bit decimal integer spanning [begin, end). */
static int parse_int64(const char* begin, const char* end, int64_t* out) {
  char buf[32];
  size_t len = (size_t)(end - begin);
  char* stop = NULL;
  long long value;
  if (len == 0 || len >= sizeof buf) return 0;
  memcpy(buf, begin, len);
  buf[len] = '\0';
  errno = 0;
  value = strtoll(buf, &stop, 10);
  if (errno != 0 || *stop != '\0' || stop == buf) return 0;
  *out = (int64_t)value;
  return 1;
}

/* Parses "a,b,c" into out; returns the count, or -1 with a message printed. */
static int parse_list(const char* option, const char* text, int64_t* out) {
  int n = 0;
  const char* p = text;
  for (;;) {
    const char* comma = strchr(p, ',');
    const char* end = comma ? comma : p + strlen(p);
    if (n == MAX_VALUES) {
      usage_error("%s: more than %d values", option, MAX_VALUES);
      return -1;
    }
    if (!parse_int64(p, end, &out[n])) {
      usage_error("%s: '%.*s' is not an integer (expected a comma separated list such as 10,10,5)",
                  option, (int)(end - p), p);
      return -1;
    }
    ++n;
    if (!comma) break;
    p = comma + 1;
  }
  return n;
}

/* Parses --halo: "2", "2,2,0" or "2:2,1:3,0:0"; halo[2*d] lower, halo[2*d+1] upper. */
static int parse_halo(const char* text, options* opt) {
  int n = 0;
  const char* p = text;
  for (;;) {
    const char* comma = strchr(p, ',');
    const char* end = comma ? comma : p + strlen(p);
    const char* colon = memchr(p, ':', (size_t)(end - p));
    if (n == MAX_VALUES) return usage_error("--halo: more than %d dimensions", MAX_VALUES);
    if (colon) {
      if (!parse_int64(p, colon, &opt->halo[2 * n]) ||
          !parse_int64(colon + 1, end, &opt->halo[2 * n + 1]))
        return usage_error("--halo: '%.*s' is not a lower:upper pair of integers", (int)(end - p),
                           p);
    } else {
      if (!parse_int64(p, end, &opt->halo[2 * n]))
        return usage_error("--halo: '%.*s' is not an integer (expected e.g. 2, 2,2,0 or 2:2,1:3)",
                           (int)(end - p), p);
      opt->halo[2 * n + 1] = opt->halo[2 * n];
    }
    ++n;
    if (!comma) break;
    p = comma + 1;
  }
  opt->nhalo = n;
  opt->halo_scalar = (n == 1 && strchr(text, ':') == NULL);
  return 0;
}

/* Returns the value of option `name` at argv[*i] ("--name value" or "--name=value"), or NULL if
   argv[*i] is not that option; *missing is set when the option is present without a value. */
static const char* option_value(int argc, char** argv, int* i, const char* name, int* missing) {
  const char* arg = argv[*i];
  size_t len = strlen(name);
  if (strncmp(arg, name, len) != 0) return NULL;
  if (arg[len] == '=') return arg + len + 1;
  if (arg[len] != '\0') return NULL;
  if (*i + 1 >= argc) {
    *missing = 1;
    return NULL;
  }
  ++*i;
  return argv[*i];
}

static int parse_args(int argc, char** argv, options* opt, int* exit_now) {
  int i;
  *exit_now = 0;
  for (i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* v;
    int missing = 0;
    int64_t tmp[MAX_VALUES];
    int n, k;
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      print_usage(stdout);
      *exit_now = 1;
      return 0;
    }
    if (strcmp(arg, "--version") == 0) {
      /* Compiled-against version next to the loaded one: they differ after a library upgrade. */
      printf("gtstorage-info built against gtstorage %d.%d.%d, running with %s\n",
             GTSTORAGE_VERSION_MAJOR, GTSTORAGE_VERSION_MINOR, GTSTORAGE_VERSION_PATCH,
             gtstorage_version_string());
      *exit_now = 1;
      return 0;
    }
    if (strcmp(arg, "--all-presets") == 0) {
      opt->all_presets = 1;
      continue;
    }
    if (strcmp(arg, "--list-presets") == 0) {
      opt->list_presets = 1;
      continue;
    }
    if (strcmp(arg, "--json") == 0) {
      opt->json = 1;
      continue;
    }
    if (strcmp(arg, "--pool-stats") == 0) {
      opt->pool_stats = 1;
      continue;
    }
    if ((v = option_value(argc, argv, &i, "--shape", &missing)) != NULL) {
      if ((opt->nshape = parse_list("--shape", v, opt->shape)) < 0) return EXIT_BAD_INPUT;
    } else if ((v = option_value(argc, argv, &i, "--preset", &missing)) != NULL) {
      opt->preset = v;
    } else if ((v = option_value(argc, argv, &i, "--dims", &missing)) != NULL) {
      opt->dims = v;
    } else if ((v = option_value(argc, argv, &i, "--dtype", &missing)) != NULL) {
      opt->dtype = v;
    } else if ((v = option_value(argc, argv, &i, "--halo", &missing)) != NULL) {
      if (parse_halo(v, opt) != 0) return EXIT_BAD_INPUT;
    } else if ((v = option_value(argc, argv, &i, "--aligned-index", &missing)) != NULL) {
      if ((opt->naligned = parse_list("--aligned-index", v, opt->aligned_index)) < 0)
        return EXIT_BAD_INPUT;
    } else if ((v = option_value(argc, argv, &i, "--alignment", &missing)) != NULL) {
      if (!parse_int64(v, v + strlen(v), &opt->alignment_bytes))
        return usage_error("--alignment: '%s' is not an integer number of bytes", v);
      /* 0 means "the preset's" in the C API; on the command line it is a mistake. */
      if (opt->alignment_bytes == 0)
        return usage_error(
            "--alignment: 0 is not an alignment (leave the option out to use the "
            "preset's)");
    } else if ((v = option_value(argc, argv, &i, "--pitch-padding", &missing)) != NULL) {
      if (strcmp(v, "none") == 0)
        opt->pitch_padding = GTSTORAGE_PITCH_PADDING_NONE;
      else if (strcmp(v, "avoid_aliasing") == 0)
        opt->pitch_padding = GTSTORAGE_PITCH_PADDING_AVOID_ALIASING;
      else
        return usage_error("--pitch-padding: '%s' is not 'none' or 'avoid_aliasing'", v);
    } else if ((v = option_value(argc, argv, &i, "--exercise", &missing)) != NULL) {
      if (!parse_int64(v, v + strlen(v), &opt->exercise) || opt->exercise < 0 ||
          opt->exercise > 1000000)
        return usage_error("--exercise: '%s' is not a number of fields in 0..1000000", v);
    } else if ((v = option_value(argc, argv, &i, "--layout", &missing)) != NULL) {
      if ((n = parse_list("--layout", v, tmp)) < 0) return EXIT_BAD_INPUT;
      for (k = 0; k < n; ++k) {
        if (tmp[k] < INT32_MIN || tmp[k] > INT32_MAX)
          return usage_error("--layout: %" PRId64 " is out of range", tmp[k]);
        opt->layout[k] = (int32_t)tmp[k];
      }
      opt->nlayout = n;
    } else if (missing) {
      return usage_error("%s needs a value", arg);
    } else {
      return usage_error("unknown option '%s'", arg);
    }
  }
  return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* Output helpers                                                                                 */

static const char* device_name(int32_t device) {
  switch (device) {
    case GTSTORAGE_DEVICE_CPU:
      return "cpu";
    case GTSTORAGE_DEVICE_GPU:
      return "gpu";
    default:
      return "default";
  }
}

static const char* rule_name(int32_t rule) {
  switch (rule) {
    case GTSTORAGE_RULE_BY_DIMS:
      return "by dims";
    case GTSTORAGE_RULE_C_ORDER:
      return "C order";
    case GTSTORAGE_RULE_FORTRAN_ORDER:
      return "Fortran order";
    default:
      return "unknown";
  }
}

/* Writes values joined by `sep` into buf (always NUL-terminated). */
static void join_i64(char* buf, size_t size, const int64_t* v, uint32_t n, const char* sep) {
  size_t used = 0;
  uint32_t d;
  buf[0] = '\0';
  for (d = 0; d < n && used < size; ++d) {
    int w = snprintf(buf + used, size - used, "%s%" PRId64, d ? sep : "", v[d]);
    if (w < 0) break;
    used += (size_t)w;
  }
}

static void join_i32(char* buf, size_t size, const int32_t* v, uint32_t n, const char* sep) {
  int64_t wide[GTSTORAGE_MAX_NDIM];
  uint32_t d;
  for (d = 0; d < n && d < GTSTORAGE_MAX_NDIM; ++d) wide[d] = v[d];
  join_i64(buf, size, wide, n, sep);
}

static void json_string(const char* s) {
  putchar('"');
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static void json_i64_array(const int64_t* v, uint32_t n) {
  uint32_t d;
  putchar('[');
  for (d = 0; d < n; ++d) printf("%s%" PRId64, d ? ", " : "", v[d]);
  putchar(']');
}

static void json_i32_array(const int32_t* v, uint32_t n) {
  uint32_t d;
  putchar('[');
  for (d = 0; d < n; ++d) printf("%s%" PRId32, d ? ", " : "", v[d]);
  putchar(']');
}

/* Byte distance of the aligned element from the aligned start of the allocation: the plan
   promises it is a multiple of alignment_bytes (that is what "aligned" means). */
static int64_t aligned_point_offset(const gtstorage_plan_info* p) {
  int64_t off = p->byte_offset;
  uint32_t d;
  for (d = 0; d < p->ndim; ++d) off += p->aligned_index[d] * p->strides[d];
  return off;
}

/* Elements of padding added to the contiguous dimension. */
static int64_t padding_elements(const gtstorage_plan_info* p) {
  if (p->contiguous_dim < 0) return 0;
  return p->padded_shape[p->contiguous_dim] - p->shape[p->contiguous_dim];
}

/* Dims in memory order, slowest first (layout rank 0 first). */
static void memory_order(const gtstorage_plan_info* p, char* buf, size_t size) {
  uint32_t rank, d;
  size_t used = 0;
  buf[0] = '\0';
  for (rank = 0; rank < p->ndim; ++rank)
    for (d = 0; d < p->ndim; ++d)
      if (p->layout[d] == (int32_t)rank && used < size) {
        int w = snprintf(buf + used, size - used, "%s%s", rank ? " " : "", p->dims[d]);
        if (w > 0) used += (size_t)w;
      }
}

static const char* pitch_padding_name(int32_t pitch_padding) {
  return pitch_padding == GTSTORAGE_PITCH_PADDING_AVOID_ALIASING ? "avoid_aliasing" : "none";
}

static void print_plan_json(const gtstorage_plan_info* p, int32_t pitch_padding, int indent) {
  uint32_t d;
  const char* pad = indent ? "    " : "  ";
  const char* close = indent ? "  }" : "}";
  printf("{\n%s\"preset\": ", pad);
  json_string(p->preset);
  printf(",\n%s\"device\": \"%s\",\n%s\"dtype\": ", pad, device_name(p->device), pad);
  json_string(p->typestr);
  printf(",\n%s\"itemsize\": %" PRId64 ",\n%s\"ndim\": %" PRIu32 ",\n%s\"dims\": [", pad,
         p->itemsize, pad, p->ndim, pad);
  for (d = 0; d < p->ndim; ++d) {
    if (d) printf(", ");
    json_string(p->dims[d]);
  }
  printf("],\n%s\"shape\": ", pad);
  json_i64_array(p->shape, p->ndim);
  printf(",\n%s\"halo\": [", pad);
  for (d = 0; d < p->ndim; ++d)
    printf("%s[%" PRId64 ", %" PRId64 "]", d ? ", " : "", p->halo[d][0], p->halo[d][1]);
  printf("],\n%s\"layout\": ", pad);
  json_i32_array(p->layout, p->ndim);
  printf(",\n%s\"contiguous_dim\": %" PRId32 ",\n%s\"padded_shape\": ", pad, p->contiguous_dim,
         pad);
  json_i64_array(p->padded_shape, p->ndim);
  printf(",\n%s\"padding_elements\": %" PRId64 ",\n%s\"strides\": ", pad, padding_elements(p), pad);
  json_i64_array(p->strides, p->ndim);
  printf(",\n%s\"pitch_padding\": \"%s\",\n%s\"alignment_bytes\": %" PRId64
         ",\n%s\"aligned_index\": ",
         pad, pitch_padding_name(pitch_padding), pad, p->alignment_bytes, pad);
  json_i64_array(p->aligned_index, p->ndim);
  printf(",\n%s\"aligned_point_offset\": %" PRId64 ",\n", pad, aligned_point_offset(p));
  printf("%s\"byte_offset\": %" PRId64 ",\n%s\"padded_bytes\": %" PRId64
         ",\n%s\"allocation_bytes\": %" PRId64 "\n%s",
         pad, p->byte_offset, pad, p->padded_bytes, pad, p->allocation_bytes, close);
}

static void print_plan_text(const gtstorage_plan_info* p, int32_t pitch_padding,
                            int aligned_given) {
  uint32_t d;
  char order[GTSTORAGE_MAX_NDIM * GTSTORAGE_DIM_LABEL_SIZE + GTSTORAGE_MAX_NDIM];
  char list[512];
  int64_t apo = aligned_point_offset(p);
  int64_t interior_elems = 1, padded_elems = 1;

  printf("preset        %s (device %s)\n", p->preset, device_name(p->device));
  printf("dtype         %s (%" PRId64 " bytes per element)\n", p->typestr, p->itemsize);
  printf("alignment     %" PRId64 " bytes\n", p->alignment_bytes);
  printf("pitch padding %s\n\n",
         pitch_padding == GTSTORAGE_PITCH_PADDING_AVOID_ALIASING
             ? "avoid_aliasing (strides of 4096 bytes or more moved off multiples of 4 KiB)"
             : "none (GT4Py's strides)");

  /* One row per dimension, in the semantic (shape) order. */
  printf("dim  extent  halo(lo:hi)  interior  padded  layout  stride(B)  stride(el)  aligned\n");
  for (d = 0; d < p->ndim; ++d) {
    char halo[48];
    int64_t interior = p->shape[d] - p->halo[d][0] - p->halo[d][1];
    snprintf(halo, sizeof halo, "%" PRId64 ":%" PRId64, p->halo[d][0], p->halo[d][1]);
    printf("%-4s %6" PRId64 "  %11s  %8" PRId64 "  %6" PRId64 "  %6" PRId32 "  %9" PRId64
           "  %10" PRId64 "  %7" PRId64 "%s\n",
           p->dims[d], p->shape[d], halo, interior, p->padded_shape[d], p->layout[d], p->strides[d],
           p->itemsize ? p->strides[d] / p->itemsize : 0, p->aligned_index[d],
           (int32_t)d == p->contiguous_dim ? "  <- contiguous" : "");
    interior_elems *= interior;
    padded_elems *= p->padded_shape[d];
  }
  printf("\n");

  memory_order(p, order, sizeof order);
  printf("memory order  %s (slowest to fastest)\n", order);
  join_i32(list, sizeof list, p->layout, p->ndim, ", ");
  printf("layout map    (%s)  rank of each dim in stride order, 0 = largest stride\n", list);
  join_i64(list, sizeof list, p->strides, p->ndim, ", ");
  printf("strides       (%s) bytes\n", list);
  join_i64(list, sizeof list, p->padded_shape, p->ndim, ", ");
  printf("padded shape  (%s)\n", list);
  if (p->contiguous_dim >= 0)
    printf("padding       %" PRId64 " element(s) on dim %s (%s)\n", padding_elements(p),
           p->dims[p->contiguous_dim],
           pitch_padding == GTSTORAGE_PITCH_PADDING_AVOID_ALIASING
               ? "its extent; pitch padding lengthens the other strides"
               : "only the contiguous dim is padded");
  join_i64(list, sizeof list, p->aligned_index, p->ndim, ", ");
  printf("aligned point (%s)%s\n", list, aligned_given ? "" : "  (default: the lower halo)");
  printf("              at byte %" PRId64 " of the aligned block = %" PRId64 " x %" PRId64
         " bytes%s\n",
         apo, p->alignment_bytes ? apo / p->alignment_bytes : 0, p->alignment_bytes,
         (p->alignment_bytes && apo % p->alignment_bytes == 0) ? "" : "  (NOT ALIGNED)");
  printf("byte offset   %" PRId64 " (element (0, ..., 0) from the aligned block start)\n",
         p->byte_offset);
  /* Pitch padding leaves gaps between rows: the allocation spans padded_bytes, not the product
     of the padded extents. */
  if (pitch_padding == GTSTORAGE_PITCH_PADDING_AVOID_ALIASING && p->itemsize > 0)
    padded_elems = p->padded_bytes / p->itemsize;
  printf("elements      %" PRId64 " interior, %" PRId64 " allocated (halo and padding included)\n",
         interior_elems, padded_elems);
  printf("padded bytes  %" PRId64 "\n", p->padded_bytes);
  printf("allocation    %" PRId64 " bytes (byte offset + padded bytes)\n", p->allocation_bytes);
}

/* ---------------------------------------------------------------------------------------------- */

static void fill_create_options(const options* opt, gtstorage_create_options* co) {
  gtstorage_create_options init = GTSTORAGE_CREATE_OPTIONS_INIT;
  *co = init;
  co->ndim = (uint32_t)opt->nshape;
  co->shape = opt->shape;
  co->dtype = opt->dtype;
  co->dims = opt->dims;
  co->preset = opt->preset;
  co->layout = opt->nlayout ? opt->layout : NULL;
  co->halo = opt->nhalo ? opt->halo : NULL;
  co->aligned_index = opt->naligned ? opt->aligned_index : NULL;
  co->alignment_bytes = opt->alignment_bytes;
  co->pitch_padding = opt->pitch_padding;
}

/* Checks that the per-dimension lists match --shape, so the library never reads past them. */
static int check_counts(options* opt) {
  int d;
  if (opt->nshape == 0) return usage_error("--shape is required (e.g. --shape 10,10,5)");
  if (opt->halo_scalar) {
    for (d = 1; d < opt->nshape && d < MAX_VALUES; ++d) {
      opt->halo[2 * d] = opt->halo[0];
      opt->halo[2 * d + 1] = opt->halo[1];
    }
    opt->nhalo = opt->nshape;
  }
  if (opt->nhalo && opt->nhalo != opt->nshape)
    return usage_error(
        "--halo: %d dimension(s) given but --shape has %d (give one value for all "
        "dims, or one value or lower:upper pair per dim)",
        opt->nhalo, opt->nshape);
  if (opt->naligned && opt->naligned != opt->nshape)
    return usage_error("--aligned-index: %d value(s) given but --shape has %d dimension(s)",
                       opt->naligned, opt->nshape);
  if (opt->nlayout && opt->nlayout != opt->nshape)
    return usage_error("--layout: %d value(s) given but --shape has %d dimension(s)", opt->nlayout,
                       opt->nshape);
  return 0;
}

static int list_presets(int json) {
  int32_t count = 0, i;
  int status = gtstorage_preset_count(&count);
  if (status != GTSTORAGE_OK) return library_error("gtstorage_preset_count", status);
  if (json)
    printf("{\n  \"presets\": [");
  else
    printf("%-24s %-6s %-14s %-14s %s\n", "preset", "device", "alignment", "rule",
           "base layout (I,J,K)");
  for (i = 0; i < count; ++i) {
    gtstorage_preset_info info = GTSTORAGE_PRESET_INFO_INIT;
    char align[48];
    status = gtstorage_preset_at(i, &info);
    if (status != GTSTORAGE_OK) return library_error("gtstorage_preset_at", status);
    snprintf(align, sizeof align, "%" PRId64 " %s", info.alignment,
             info.alignment_unit == GTSTORAGE_ALIGN_BYTES
                 ? (info.alignment == 1 ? "byte" : "bytes")
                 : (info.alignment == 1 ? "element" : "elements"));
    if (json) {
      printf("%s\n    {\"name\": ", i ? "," : "");
      json_string(info.name);
      printf(", \"device\": \"%s\", \"alignment\": %" PRId64
             ", \"alignment_unit\": \"%s\", "
             "\"rule\": \"%s\", \"base_layout\": ",
             device_name(info.device), info.alignment,
             info.alignment_unit == GTSTORAGE_ALIGN_BYTES ? "bytes" : "elements",
             rule_name(info.rule));
      json_i32_array(info.base_layout, 3);
      printf("}");
    } else {
      char base[64];
      if (info.rule == GTSTORAGE_RULE_BY_DIMS)
        snprintf(base, sizeof base, "(%" PRId32 ",%" PRId32 ",%" PRId32 ")", info.base_layout[0],
                 info.base_layout[1], info.base_layout[2]);
      else
        snprintf(base, sizeof base, "positional");
      printf("%-24s %-6s %-14s %-14s %s\n", info.name, device_name(info.device), align,
             rule_name(info.rule), base);
    }
  }
  if (json) printf("\n  ]\n}\n");
  return 0;
}

/* One row of the --all-presets table; text cells are kept so column widths can be computed. */
enum {
  COL_NAME,
  COL_DEVICE,
  COL_ALIGN,
  COL_LAYOUT,
  COL_PADDED,
  COL_STRIDES,
  COL_APO,
  COL_OFFSET,
  COL_BYTES,
  NCOLS
};
#define CELL 400 /* fits 16 extents or strides of up to 20 digits */

static int all_presets(const options* opt) {
  static const char* header[NCOLS] = {"preset",          "device",       "align(B)",
                                      "layout",          "padded shape", "strides(B)",
                                      "aligned at byte", "offset(B)",    "alloc(B)"};
  int32_t count = 0, i;
  int failures = 0, c;
  int width[NCOLS];
  char(*cells)[NCOLS][CELL];
  char(*errors)[512];
  int status = gtstorage_preset_count(&count);
  if (status != GTSTORAGE_OK) return library_error("gtstorage_preset_count", status);
  if (count <= 0) {
    fprintf(stderr, "%s: error: no presets are registered\n", g_prog);
    return EXIT_INTERNAL;
  }
  cells = calloc((size_t)count, sizeof *cells);
  errors = calloc((size_t)count, sizeof *errors);
  if (!cells || !errors) {
    free(cells);
    free(errors);
    fprintf(stderr, "%s: error: out of memory\n", g_prog);
    return EXIT_INTERNAL;
  }
  for (c = 0; c < NCOLS; ++c) width[c] = (int)strlen(header[c]);

  if (opt->json) printf("{\n  \"presets\": [");
  for (i = 0; i < count; ++i) {
    gtstorage_preset_info info = GTSTORAGE_PRESET_INFO_INIT;
    gtstorage_create_options co;
    gtstorage_plan_info plan;
    status = gtstorage_preset_at(i, &info);
    if (status != GTSTORAGE_OK) {
      free(cells);
      free(errors);
      return library_error("gtstorage_preset_at", status);
    }
    fill_create_options(opt, &co);
    co.preset = info.name;
    memset(&plan, 0, sizeof plan);
    plan.struct_size = sizeof plan;
    status = gtstorage_plan(&co, &plan);
    snprintf(cells[i][COL_NAME], CELL, "%s", info.name);
    if (status != GTSTORAGE_OK) {
      ++failures;
      snprintf(errors[i], sizeof errors[i], "%s: %s", gtstorage_status_name(status),
               gtstorage_last_error());
      if (opt->json) {
        printf("%s\n    {\"preset\": ", i ? "," : "");
        json_string(info.name);
        printf(", \"status\": \"%s\", \"error\": ", gtstorage_status_name(status));
        json_string(gtstorage_last_error());
        printf("}");
      }
    } else if (opt->json) {
      printf("%s\n  ", i ? "," : "");
      print_plan_json(&plan, opt->pitch_padding, 1);
    } else {
      snprintf(cells[i][COL_DEVICE], CELL, "%s", device_name(plan.device));
      snprintf(cells[i][COL_ALIGN], CELL, "%" PRId64, plan.alignment_bytes);
      join_i32(cells[i][COL_LAYOUT], CELL, plan.layout, plan.ndim, ",");
      join_i64(cells[i][COL_PADDED], CELL, plan.padded_shape, plan.ndim, ",");
      join_i64(cells[i][COL_STRIDES], CELL, plan.strides, plan.ndim, ",");
      snprintf(cells[i][COL_APO], CELL, "%" PRId64, aligned_point_offset(&plan));
      snprintf(cells[i][COL_OFFSET], CELL, "%" PRId64, plan.byte_offset);
      snprintf(cells[i][COL_BYTES], CELL, "%" PRId64, plan.allocation_bytes);
    }
    for (c = 0; c < NCOLS; ++c) {
      int len = (int)strlen(cells[i][c]);
      if (len > width[c]) width[c] = len;
    }
  }

  if (opt->json) {
    printf("\n  ]\n}\n");
  } else {
    for (c = 0; c < NCOLS; ++c) printf("%-*s%s", width[c], header[c], c + 1 < NCOLS ? "  " : "\n");
    for (i = 0; i < count; ++i) {
      if (errors[i][0]) {
        printf("%-*s  error: %s\n", width[COL_NAME], cells[i][COL_NAME], errors[i]);
        continue;
      }
      for (c = 0; c < NCOLS; ++c) {
        /* Numbers right-aligned, text left-aligned. */
        int right = c == COL_ALIGN || c == COL_APO || c == COL_OFFSET || c == COL_BYTES;
        printf(right ? "%*s%s" : "%-*s%s", width[c], cells[i][c], c + 1 < NCOLS ? "  " : "\n");
      }
    }
  }
  free(cells);
  free(errors);
  if (failures) {
    fprintf(stderr, "%s: error: %d preset(s) rejected these parameters (see the table)\n", g_prog,
            failures);
    return EXIT_BAD_INPUT;
  }
  return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* --pool-stats                                                                                   */

enum { POOL_HOST, POOL_PINNED, POOL_DEVICE, NPOOLS };
static const char* const pool_names[NPOOLS] = {"host", "pinned_host", "device"};
static const int32_t pool_memory[NPOOLS] = {GTSTORAGE_MEMORY_HOST, GTSTORAGE_MEMORY_PINNED_HOST,
                                            GTSTORAGE_MEMORY_DEVICE};

/* Creates one zero-filled storage (see exercise_pools). */
static int create_field(const char* preset, int32_t managed, int32_t host_memory,
                        const int64_t* shape, uint32_t ndim, gtstorage_handle* out) {
  gtstorage_create_options co = GTSTORAGE_CREATE_OPTIONS_INIT;
  int status;
  co.ndim = ndim;
  co.shape = shape;
  co.preset = preset;
  co.managed = managed;
  co.host_memory = host_memory;
  co.init = GTSTORAGE_INIT_ZEROS;
  status = gtstorage_create(&co, out);
  return status == GTSTORAGE_OK ? 0 : library_error("gtstorage_create", status);
}

/* Creates and releases n fields of 1 MiB (64 x 64 x 32 <f8) in each pooled memory: pageable
   host (numpy preset), and where there is a device a mirrored gt:gpu pair with pinned host memory
   (a pinned host block and a device block). The first of each is a pool miss, the others are
   served from the pool. A device block is released in stream order: the device's legacy stream,
   where created storages live, is waited for (through a small device storage kept for that)
   before the next create, so the release has happened, as a time loop on a GPU would see it. */
static int exercise_pools(int64_t n, int have_device) {
  static const int64_t shape[3] = {64, 64, 32};
  static const int64_t one[1] = {1};
  gtstorage_handle waiter = GTSTORAGE_NULL_HANDLE;
  int64_t i;
  int rc = 0, status;
  if (n > 0 && have_device &&
      (rc = create_field("gt:gpu", GTSTORAGE_MANAGED_NONE, GTSTORAGE_HOST_PAGEABLE, one, 1,
                         &waiter)) != 0)
    return rc;
  for (i = 0; i < n && rc == 0; ++i) {
    gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
    if ((rc = create_field("numpy", GTSTORAGE_MANAGED_NONE, GTSTORAGE_HOST_PAGEABLE, shape, 3,
                           &h)) != 0)
      break;
    if ((status = gtstorage_release(h)) != GTSTORAGE_OK) {
      rc = library_error("gtstorage_release", status);
      break;
    }
    if (!have_device) continue;
    if ((rc = create_field("gt:gpu", GTSTORAGE_MANAGED_MIRROR, GTSTORAGE_HOST_PINNED, shape, 3,
                           &h)) != 0)
      break;
    if ((status = gtstorage_release(h)) != GTSTORAGE_OK) {
      rc = library_error("gtstorage_release", status);
    } else if ((status = gtstorage_wait_stream(waiter, 0)) != GTSTORAGE_OK) {
      rc = library_error("gtstorage_wait_stream", status);
    }
  }
  if (waiter != GTSTORAGE_NULL_HANDLE) {
    status = gtstorage_release(waiter);
    if (rc == 0 && status != GTSTORAGE_OK) rc = library_error("gtstorage_release", status);
  }
  return rc;
}

static void json_pool(const gtstorage_pool_stats* s, int present) {
  printf("{\"present\": %s, \"limit_bytes\": %" PRId64 ", \"held_bytes\": %" PRId64
         ", \"held_blocks\": %" PRId64 ", \"in_use_bytes\": %" PRId64
         ", \"high_water_bytes\": %" PRId64 ", \"hits\": %" PRId64 ", \"misses\": %" PRId64
         ", \"evictions\": %" PRId64 "}",
         present ? "true" : "false", s->limit_bytes, s->held_bytes, s->held_blocks, s->in_use_bytes,
         s->high_water_bytes, s->hits, s->misses, s->evictions);
}

static int pool_stats(const options* opt) {
  gtstorage_pool_stats ps[NPOOLS];
  gtstorage_stats st = GTSTORAGE_STATS_INIT;
  char backend[64] = "none";
  int32_t devices = 0;
  int have_device, k, rc, status;
  /* No device (no driver, the "none" backend) is not an error here: the device pools are
     reported absent. */
  if (gtstorage_device_count(&devices) != GTSTORAGE_OK) devices = 0;
  have_device = devices > 0;
  if ((status = gtstorage_device_get_backend(backend, sizeof backend)) != GTSTORAGE_OK)
    return library_error("gtstorage_device_get_backend", status);
  if (opt->exercise > 0 && (rc = exercise_pools(opt->exercise, have_device)) != 0) return rc;
  for (k = 0; k < NPOOLS; ++k) {
    gtstorage_pool_stats init = GTSTORAGE_POOL_STATS_INIT;
    ps[k] = init;
    if ((status = gtstorage_pool_get_stats(pool_memory[k], &ps[k])) != GTSTORAGE_OK)
      return library_error("gtstorage_pool_get_stats", status);
  }
  if ((status = gtstorage_get_stats(&st)) != GTSTORAGE_OK)
    return library_error("gtstorage_get_stats", status);

  if (opt->json) {
    printf("{\n  \"device_backend\": ");
    json_string(backend);
    printf(",\n  \"devices\": %" PRId32 ",\n  \"exercise\": %" PRId64 ",\n  \"pools\": {", devices,
           opt->exercise > 0 ? opt->exercise : 0);
    for (k = 0; k < NPOOLS; ++k) {
      printf("%s\n    \"%s\": ", k ? "," : "", pool_names[k]);
      json_pool(&ps[k], k == POOL_HOST || have_device);
    }
    printf("\n  },\n  \"stats\": {\"pool_held_bytes\": %" PRId64 ", \"pool_hits\": %" PRId64
           ", \"pool_misses\": %" PRId64 ", \"pool_high_water_bytes\": %" PRId64
           ", \"live_handles\": %" PRId64 ", \"live_buffers\": %" PRId64
           ", \"host_bytes\": %" PRId64 ", \"device_bytes\": %" PRId64 "}\n}\n",
           st.pool_held_bytes, st.pool_hits, st.pool_misses, st.pool_high_water_bytes,
           st.live_handles, st.live_buffers, st.host_bytes, st.device_bytes);
    return 0;
  }
  printf("device backend  %s (%" PRId32 " device%s)\n", backend, devices, devices == 1 ? "" : "s");
  if (opt->exercise > 0)
    printf("exercise        %" PRId64 " create + release of a 1 MiB field per pooled memory\n",
           opt->exercise);
  else
    printf("exercise        none: the counters of this process so far (see --exercise)\n");
  printf("\n%-12s %14s %14s %7s %12s %14s %8s %8s %9s\n", "pool", "limit(B)", "held(B)", "blocks",
         "in use(B)", "high water(B)", "hits", "misses", "evictions");
  for (k = 0; k < NPOOLS; ++k) {
    const gtstorage_pool_stats* s = &ps[k];
    if (k != POOL_HOST && !have_device) {
      printf("%-12s %14s\n", pool_names[k], "(no device)");
      continue;
    }
    printf("%-12s %14" PRId64 " %14" PRId64 " %7" PRId64 " %12" PRId64 " %14" PRId64 " %8" PRId64
           " %8" PRId64 " %9" PRId64 "%s\n",
           pool_names[k], s->limit_bytes, s->held_bytes, s->held_blocks, s->in_use_bytes,
           s->high_water_bytes, s->hits, s->misses, s->evictions,
           s->limit_bytes == 0 ? "  (not pooled)" : "");
  }
  printf("\nall pools     held %" PRId64 " B, %" PRId64 " hits, %" PRId64
         " misses, high water %" PRId64 " B (gtstorage_get_stats)\n",
         st.pool_held_bytes, st.pool_hits, st.pool_misses, st.pool_high_water_bytes);
  printf("live          %" PRId64 " handles, %" PRId64 " buffers, %" PRId64 " host bytes, %" PRId64
         " device bytes\n",
         st.live_handles, st.live_buffers, st.host_bytes, st.device_bytes);
  if (opt->exercise <= 0)
    printf("\nA fresh process has empty pools; --exercise N creates and releases fields first.\n");
  return 0;
}

int main(int argc, char** argv) {
  options opt;
  int exit_now = 0, rc;
  gtstorage_create_options co;
  gtstorage_plan_info plan;

  memset(&opt, 0, sizeof opt);
  opt.exercise = -1;
  if ((rc = parse_args(argc, argv, &opt, &exit_now)) != 0 || exit_now) return rc;
  if (opt.exercise >= 0 && !opt.pool_stats) return usage_error("--exercise goes with --pool-stats");
  if (opt.pool_stats) {
    if (opt.nshape || opt.all_presets || opt.list_presets || opt.preset)
      return usage_error("--pool-stats takes no layout options (only --exercise and --json)");
    return pool_stats(&opt);
  }
  if (opt.list_presets) return list_presets(opt.json);
  if (argc == 1) {
    print_usage(stderr);
    return EXIT_BAD_INPUT;
  }
  if ((rc = check_counts(&opt)) != 0) return rc;
  if (opt.all_presets) {
    if (opt.preset)
      return usage_error("--all-presets compares every preset; leave out --preset %s", opt.preset);
    return all_presets(&opt);
  }

  fill_create_options(&opt, &co);
  memset(&plan, 0, sizeof plan);
  plan.struct_size = sizeof plan;
  rc = gtstorage_plan(&co, &plan);
  if (rc != GTSTORAGE_OK) return library_error("gtstorage_plan", rc);
  if (opt.json) {
    print_plan_json(&plan, opt.pitch_padding, 0);
    printf("\n");
  } else {
    print_plan_text(&plan, opt.pitch_padding, opt.naligned != 0);
  }
  return 0;
}
