// A small per-thread memo of allocation plans. Models allocate the same few shapes over and over,
// and computing a plan (parsing the dtype and dims, finding the preset, the layout math) was the
// largest part of a small create. The layout functions stay pure: the memo lives here, in the
// storage layer, keyed by the *content* of the whole plan_request (never its pointers) and
// invalidated by any preset (re)registration (preset_generation()).
#pragma once

#include "layout/allocation_plan.hpp"

namespace gts {

/// The plan make_plan(@p request) returns, from the calling thread's memo when an equal request
/// was planned recently under the same preset generation. Throws what make_plan throws (failed
/// requests are never memoized). The reference stays valid until the calling thread's next
/// call.
const allocation_plan& cached_plan(const plan_request& request);

}  // namespace gts
