/* Prints the library's runtime version string and number and the header's compile-time number
   (used by check_versions.py: all must agree with project(VERSION)). */
#include <gtstorage/gtstorage.h>
#include <stdio.h>

int main(void) {
  printf("%s %u %d %d.%d.%d\n", gtstorage_version_string(), (unsigned)gtstorage_version(),
         GTSTORAGE_VERSION_NUMBER, GTSTORAGE_VERSION_MAJOR, GTSTORAGE_VERSION_MINOR,
         GTSTORAGE_VERSION_PATCH);
  return 0;
}
