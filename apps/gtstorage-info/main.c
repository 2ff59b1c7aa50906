/*
 * gtstorage-info: prints the allocation plan gtstorage would use for a field, or compares every
 * preset for one shape. Everything it prints comes from gtstorage_plan() and the preset registry,
 * so it shows exactly what gtstorage_create() would do; nothing is allocated.
 * --pool-stats prints the memory pools' counters of this process (gtstorage_pool_get_stats() and
 * the pool fields of gtstorage_get_stats()), after --exercise N create + release rounds if asked.
 *
 * This file: the command line; plan.c and pools.c print.
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "info.h"

const char g_prog[] = "gtstorage-info";

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

int usage_error(const char* fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: error: ", g_prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n(see %s --help)\n", g_prog);
  return EXIT_BAD_INPUT;
}

int library_error(const char* what, int status) {
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

/* Sets *set and returns 1 if arg is the flag `name` (an option without a value). */
static int flag(const char* arg, const char* name, int* set) {
  if (strcmp(arg, name) != 0) return 0;
  *set = 1;
  return 1;
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
    if (flag(arg, "--all-presets", &opt->all_presets) ||
        flag(arg, "--list-presets", &opt->list_presets) || flag(arg, "--json", &opt->json) ||
        flag(arg, "--pool-stats", &opt->pool_stats))
      continue;
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

int main(int argc, char** argv) {
  options opt;
  int exit_now = 0, rc;

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
  return print_plan(&opt);
}
