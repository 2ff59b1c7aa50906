/*
 * main() of a cmocka test file from the tests the file defines. tests/cmocka_tests.cmake scans
 * the file when CMake configures and writes its lists, GTS_TESTS(fixture) and one
 * GTS_TESTS_<group>(fixture) per gts-test-group marker, into the header GTS_TEST_LIST names; a
 * test written in the file is therefore a test run. Include after <cmocka.h> (C and C++).
 */
#ifndef GTSTORAGE_TESTS_C_CMOCKA_MAIN_H
#define GTSTORAGE_TESTS_C_CMOCKA_MAIN_H

#ifdef GTS_TEST_LIST
#include GTS_TEST_LIST
#endif

/* Runs the tests of @p list (GTS_TESTS or a GTS_TESTS_<group>), each as @p fixture(test), as the
 * cmocka group @p name between @p group_setup and @p group_teardown (either may be NULL), and
 * adds the group's failures to @p failed. */
#define GTS_RUN_TESTS(failed, name, list, fixture, group_setup, group_teardown)             \
  do {                                                                                      \
    const struct CMUnitTest gts_tests_[] = {list(fixture)};                                 \
    (failed) += cmocka_run_group_tests_name(name, gts_tests_, group_setup, group_teardown); \
  } while (0)

/* The main() of a file of one group: its tests, each as @p fixture(test), between @p group_setup
 * and @p group_teardown. */
#define GTS_TEST_MAIN_WITH(name, fixture, group_setup, group_teardown)            \
  int main(void) {                                                                \
    int failed = 0;                                                               \
    GTS_RUN_TESTS(failed, name, GTS_TESTS, fixture, group_setup, group_teardown); \
    return failed;                                                                \
  }

#endif /* GTSTORAGE_TESTS_C_CMOCKA_MAIN_H */
