// Internal tests of the generation-checked handle table (src/capi/handle_table.hpp), driven with
// plain counted objects instead of storages: reference counting, the reasons given for bad
// handles, and the 32-bit generation wrap, which takes 2^31 reuses of a slot through the C API
// but is reached here by starting the generations near the end of their range.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "capi/handle_table.hpp"
#include "common/errors.hpp"

// cmocka last: it defines a fail() macro that would clash with gts::fail in errors.hpp.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>

#include "cmocka_main.h"
}

namespace {

struct counted {
  static int alive;
  int value;
  explicit counted(int v) : value(v) { ++alive; }
  ~counted() { --alive; }
  counted(const counted&) = delete;
  counted& operator=(const counted&) = delete;
};
int counted::alive = 0;

using table = gts::basic_handle_table<counted>;

// Runs f, which must throw gts::error of @p kind with @p needle in its message.
template <class F>
void expect_error(F&& f, gts::error_kind kind, const char* needle) {
  try {
    f();
  } catch (const gts::error& e) {
    if (e.kind() != kind) fail_msg("wrong error kind %d: %s", static_cast<int>(e.kind()), e.what());
    if (std::strstr(e.what(), needle) == nullptr) {
      fail_msg("message '%s' does not contain '%s'", e.what(), needle);
    }
    return;
  }
  fail_msg("no error (expected one containing '%s')", needle);
}

void test_counting_and_destruction(void**) {
  {
    table t;
    const uint64_t h = t.insert(std::make_unique<counted>(7));
    assert_int_equal(counted::alive, 1);
    assert_int_equal(t.get(h).value, 7);
    assert_int_equal(t.refcount(h), 1);
    t.retain(h);
    t.retain(h);
    assert_int_equal(t.refcount(h), 3);
    t.release(h);
    t.release(h);
    assert_int_equal(counted::alive, 1);  // one reference left
    assert_int_equal(t.live(), 1);
    t.release(h);
    assert_int_equal(counted::alive, 0);
    assert_int_equal(t.live(), 0);
    expect_error([&] { t.release(h); }, gts::error_kind::invalid_handle, "stale");
    expect_error([&] { t.retain(h); }, gts::error_kind::invalid_handle, "stale");
    // Objects still referenced when the table goes away are destroyed with it.
    t.insert(std::make_unique<counted>(1));
  }
  assert_int_equal(counted::alive, 0);
}

void test_bad_handle_reasons(void**) {
  table t;
  const uint64_t h = t.insert(std::make_unique<counted>(1));
  const uint64_t gen = h >> 32;
  expect_error([&] { t.get(0); }, gts::error_kind::invalid_handle, "is not a handle (null)");
  // Slot index 0 with a generation is not null: it was never issued.
  expect_error([&] { t.get(gen << 32); }, gts::error_kind::invalid_handle, "never issued");
  expect_error([&] { t.get((gen << 32) | 99); }, gts::error_kind::invalid_handle, "never issued");
  expect_error([&] { t.get(h + (uint64_t(1) << 32)); }, gts::error_kind::invalid_handle,
               "never issued");  // even generation: never a live one
  expect_error([&] { t.get(h + (uint64_t(2) << 32)); }, gts::error_kind::invalid_handle,
               "stale");  // odd, but not this slot's
  t.release(h);
  expect_error([&] { t.refcount(h); }, gts::error_kind::invalid_handle, "stale");
  expect_error([] { table bad(2); }, gts::error_kind::invalid_argument, "first_generation");
}

void test_slot_reuse_gets_a_new_generation(void**) {
  table t;
  const uint64_t a = t.insert(std::make_unique<counted>(1));
  t.release(a);
  const uint64_t b = t.insert(std::make_unique<counted>(2));
  assert_int_equal(a & 0xffffffffu, b & 0xffffffffu);  // same slot
  assert_int_equal((b >> 32), (a >> 32) + 2);          // next odd generation
  expect_error([&] { t.retain(a); }, gts::error_kind::invalid_handle, "stale");
  assert_int_equal(t.refcount(b), 1);
  t.release(b);
}

void test_generation_wrap_retires_the_slot(void**) {
  table t(0xfffffffdu);
  const uint64_t h1 = t.insert(std::make_unique<counted>(1));
  assert_int_equal(h1 >> 32, 0xfffffffdu);
  t.release(h1);
  const uint64_t h2 = t.insert(std::make_unique<counted>(2));
  assert_int_equal(h2 & 0xffffffffu, h1 & 0xffffffffu);  // reused once more: last generation
  assert_int_equal(h2 >> 32, 0xffffffffu);
  t.release(h2);
  // Reusing the slot now would wrap its generation to 1, 3, …: it is retired instead.
  const uint64_t h3 = t.insert(std::make_unique<counted>(3));
  assert_true((h3 & 0xffffffffu) != (h1 & 0xffffffffu));
  for (int i = 0; i < 8; ++i) {
    const uint64_t h = t.insert(std::make_unique<counted>(10 + i));
    assert_true((h & 0xffffffffu) != (h1 & 0xffffffffu));
    t.release(h);
  }
  expect_error([&] { t.get(h1); }, gts::error_kind::invalid_handle, "stale");
  expect_error([&] { t.get(h2); }, gts::error_kind::invalid_handle, "stale");
  expect_error([&] { t.release(h2); }, gts::error_kind::invalid_handle, "stale");
  assert_int_equal(t.get(h3).value, 3);
  assert_int_equal(t.live(), 1);
  t.release(h3);
  assert_int_equal(counted::alive, 0);
}

}  // namespace

GTS_TEST_MAIN_WITH("tests", cmocka_unit_test, nullptr, nullptr)
