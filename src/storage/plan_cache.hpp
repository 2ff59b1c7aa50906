// A small per-thread memo of allocation plans. Models allocate the same few shapes over and over,
// and computing a plan (parsing the dtype and dims, finding the preset, the layout math) was the
// largest part of a small create. The layout functions stay pure: the memo lives here, in the
// storage layer, keyed by the *content* of the whole plan_request (never its pointers) and
// invalidated by any preset (re)registration (preset_generation()).
#pragma once

#include <cstdint>

#include "layout/allocation_plan.hpp"
#include "storage/view_geometry.hpp"

namespace gts {

/// The plan make_plan(@p request) returns, from the calling thread's memo when an equal request
/// was planned recently under the same preset generation. Throws what make_plan throws (failed
/// requests are never memoized). The reference stays valid until the calling thread's next
/// call.
const allocation_plan& cached_plan(const plan_request& request);

/// Room kept with a memoized plan for the geometry storage::create derives from it for a storage
/// with only a host side, so that creating the same shape again copies it instead of deriving it
/// again. Emptied when the memo reuses the entry.
struct host_geometry_slot {
  bool valid = false;
  // A union so that the memo keeps constant initialization (view_geometry leaves its arrays
  // uninitialized); constructed by placement new when filled. Trivially destructible.
  union geometry_storage {
    constexpr geometry_storage() : none(0) {}
    char none;
    view_geometry geometry;
  } slot;
};

/// cached_plan(@p request), and in @p host_geometry the slot kept with it (nullptr when the plan
/// is not memoized). The slot stays valid as long as the plan reference.
const allocation_plan& cached_plan(const plan_request& request, host_geometry_slot*& host_geometry);

}  // namespace gts
