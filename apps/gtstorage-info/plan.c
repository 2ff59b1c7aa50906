/*
 * gtstorage-info's plans: the plan of one field (text or JSON), the preset list and the
 * comparison of every preset (--all-presets), all from gtstorage_plan() and the preset registry.
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "info.h"

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

void json_string(const char* s) {
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

int print_plan(const options* opt) {
  gtstorage_create_options co;
  gtstorage_plan_info plan;
  int rc;
  fill_create_options(opt, &co);
  memset(&plan, 0, sizeof plan);
  plan.struct_size = sizeof plan;
  rc = gtstorage_plan(&co, &plan);
  if (rc != GTSTORAGE_OK) return library_error("gtstorage_plan", rc);
  if (opt->json) {
    print_plan_json(&plan, opt->pitch_padding, 0);
    printf("\n");
  } else {
    print_plan_text(&plan, opt->pitch_padding, opt->naligned != 0);
  }
  return 0;
}

int list_presets(int json) {
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

int all_presets(const options* opt) {
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
