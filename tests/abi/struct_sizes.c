/*
 * Every struct of the public headers, compiled: its sizeof is the size the struct-size table
 * says (tools/gen_bindings.py computes the x86-64 layout from the header and writes the same
 * numbers into the headers' tables and into struct_sizes_gen.h), and for the structs that begin
 * with struct_size, the size of each released version as the boundary computes it (the offset
 * of the first field a later version appended, or sizeof) is the table's. The layouts are the
 * x86-64 System V ones, so on another ABI the test is skipped (77).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gtstorage/gtstorage.h"
#include "gtstorage/gtstorage_mpi.h"
#include "gtstorage/gtstorage_python.h"
#include "struct_sizes_gen.h"

int main(void) {
#if !defined(__x86_64__) || defined(_WIN32)
  puts("SKIP: the table gives x86-64 System V (LP64) sizes");
  return 77;
#else
  const size_t n = sizeof gts_struct_rows / sizeof gts_struct_rows[0];
  int failures = 0;
  for (size_t i = 0; i < n; ++i) {
    const gts_struct_row* r = &gts_struct_rows[i];
    int ok = r->size == r->x86_64_size;
    for (int v = 0; v < GTS_ABI_VERSIONS && r->versioned; ++v) {
      ok = ok && r->history[v] == r->x86_64_history[v];
    }
    /* The newest column is this library's struct; an older one is never larger. */
    if (r->versioned) {
      ok = ok && r->history[GTS_ABI_VERSIONS - 1] == r->size;
      for (int v = 0; v + 1 < GTS_ABI_VERSIONS; ++v) {
        ok = ok && r->history[v] <= r->history[v + 1];
      }
    }
    printf("%-4s %-28s sizeof %4zu, table %4zu", ok ? "ok" : "FAIL", r->name, r->size,
           r->x86_64_size);
    for (int v = 0; v < GTS_ABI_VERSIONS && r->versioned; ++v) {
      printf("; %s: %zu (table %zu)", gts_abi_versions[v], r->history[v], r->x86_64_history[v]);
    }
    putchar('\n');
    failures += !ok;
  }
  printf("%zu structs, %d wrong\n", n, failures);
  return failures == 0 ? 0 : 1;
#endif
}
