"""Where the gtstorage wrap-per-call time goes: gtstorage.bridge meeting a handle it has never
seen (optional helper, not run by run.sh).

layer_gtstorage.F90 wraps every array at every call, so every call hands the bridge new
handles (handles are never reused) and every call misses the bridge's view cache.  This
script times the bridge's adapter in plain Python for (a) the same handle again (the
persistent case) and (b) a fresh handle each call, and prints a cProfile of (b).

    GTSTORAGE_LIBRARY=build/release/src/libgtstorage.so \\
        build/py2fgen/venv/bin/python bench/py2fgen/profile_first_arrival.py [N]
"""

import cProfile
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "bindings", "python"), HERE]

import numpy as np  # noqa: E402

import gtstorage  # noqa: E402
from gtstorage import bridge  # noqa: E402

import bench_functions_gtstorage as bf  # noqa: E402


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    adapter = bridge.adapter_for(bf.empty_1, "bench_functions_gtstorage:empty_1")
    a = np.ones((20, 20, 10), order="F")

    same = gtstorage.as_storage(a)
    h = same.handle
    for _ in range(100):
        adapter((h,))
    t = time.perf_counter()
    for _ in range(20 * n):
        adapter((h,))
    same_us = (time.perf_counter() - t) / (20 * n) * 1e6

    fresh = [gtstorage.as_storage(a) for _ in range(n)]
    t = time.perf_counter()
    for s in fresh:
        adapter((s.handle,))
    fresh_us = (time.perf_counter() - t) / n * 1e6

    print(f"adapter, same handle again:   {same_us:8.2f} us per call")
    print(f"adapter, a new handle each call: {fresh_us:8.2f} us per call")
    fresh = [gtstorage.as_storage(a) for _ in range(n)]
    prof = cProfile.Profile()
    prof.enable()
    for s in fresh:
        adapter((s.handle,))
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(20)


if __name__ == "__main__":
    main()
