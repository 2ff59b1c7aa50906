#!/usr/bin/env python3
"""A model-like time loop of temporaries, with and without the Python options cache (issue 26,
point 3: a cache on the create path stays only where it pays >= 10 % of such a workload).

One step of the loop does what a stencil model does with its temporaries: it creates a field
with a halo, takes a view of its interior, fills the view and releases both. Both faces are
measured: GDP-3's (``gtstorage.gdp3.zeros(shape, halo=h)``, ``storage[h:-h, h:-h, :]``,
``view.fill``) and GT4Py's drop-in (``gtstorage.zeros(shape, aligned_index=(h, h, 0))``, the NumPy
view of the interior, ``view.fill``). A figure is the median time per step over the repeats.

Variants compare packages and the cache, measured alternately in fresh processes (A, B, A, B,
...) so that a change of machine load hits all of them:

  bench_temporaries.py --variant NAME=PYTHONPATH[,nocache] [--variant ...] [--rounds N] ...

``nocache`` switches the options cache of the package off: every call validates its arguments
again (gtstorage._request's one cache; in a package from before it, both caches of the create
path: gtstorage._creation's and gtstorage._gt4py's). Without --variant, the package on the
current path is measured once, with its cache. Output: one JSON object (stdout or --json FILE).
"""

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List


def _switch_cache_off() -> None:
    """Makes every create validate its options again (no entry is ever cached)."""
    import gtstorage

    if hasattr(gtstorage, "_request"):  # one pipeline, one cache (issue 26)
        def uncached(key: Any, shape: Any, make: Callable[[], Any]) -> Any:
            return make()

        gtstorage._creation.cached_request = uncached
        gtstorage._gt4py.cached_request = uncached
        return
    # Before: GDP-3's _options_cache (the second cache) and the drop-in's _prepared.
    creation, gt4py = gtstorage._creation, gtstorage._gt4py

    def options(init: int, shape: Any, dtype: Any, **kw: Any) -> Any:
        o = creation._options(shape, dtype, **kw)
        o.struct.init = init
        return o

    class NoStore(dict):
        def __setitem__(self, key: Any, value: Any) -> None:
            pass

    creation._cached_options = options
    gt4py._prepared = NoStore()


def _loops(shape: tuple, halo: int) -> Dict[str, Callable[[int], None]]:
    import numpy as np

    import gtstorage
    import gtstorage.gdp3 as gdp3

    h = halo
    backend = "gt:cpu_kfirst"

    def loop(make: Callable[[], Any]) -> Callable[[int], None]:
        """Each step: a temporary from make(), its interior view, filled, both released."""

        def run(steps: int) -> None:
            for _ in range(steps):
                t = make()
                v = t[h:-h, h:-h, :]
                v.fill(1.0)
                del v, t

        return run

    return {
        "gdp3": loop(lambda: gdp3.zeros(shape, np.float64, backend=backend, halo=(h, h, 0))),
        "dropin": loop(
            lambda: gtstorage.zeros(shape, np.float64, backend=backend, aligned_index=(h, h, 0))
        ),
    }


def measure(shape: tuple, halo: int, repeats: int, nocache: bool) -> Dict[str, Any]:
    """Median, min and max microseconds per step of each face, in this process."""
    if nocache:
        _switch_cache_off()
    out: Dict[str, Any] = {}
    for face, loop in _loops(shape, halo).items():
        loop(50)  # warm: first-use costs (plans, pools) are not the loop's
        steps = 50
        while True:  # about 20 ms per repeat
            t0 = time.perf_counter()
            loop(steps)
            if time.perf_counter() - t0 >= 0.02:
                break
            steps *= 2
        samples = []
        for _ in range(repeats):
            gc.collect()
            t0 = time.perf_counter()
            loop(steps)
            samples.append((time.perf_counter() - t0) / steps * 1e6)
        out[face] = samples
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", default="22,22,16", help="NI,NJ,NK, halo included")
    ap.add_argument("--halo", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=7, help="samples per process and face")
    ap.add_argument("--rounds", type=int, default=5, help="processes per variant (alternated)")
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=PYTHONPATH[,nocache]; several are measured alternately")
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--nocache", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", help="write the result here instead of stdout")
    args = ap.parse_args()
    shape = tuple(int(x) for x in args.shape.split(","))

    if args.measure or not args.variant:
        result: Dict[str, Any] = measure(shape, args.halo, args.repeats, args.nocache)
        if not args.measure:
            result = {f: statistics.median(s) for f, s in result.items()}
    else:
        samples: Dict[str, Dict[str, List[float]]] = {}
        for _ in range(args.rounds):
            for spec in args.variant:
                name, _, rest = spec.partition("=")
                path, _, flag = rest.partition(",")
                env = dict(os.environ, PYTHONPATH=path)
                cmd = [sys.executable, os.path.abspath(__file__), "--measure", "--shape",
                       args.shape, "--halo", str(args.halo), "--repeats", str(args.repeats)]
                if flag == "nocache":
                    cmd.append("--nocache")
                run = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
                for face, values in json.loads(run.stdout).items():
                    samples.setdefault(name, {}).setdefault(face, []).extend(values)
        result = {
            "shape": list(shape), "halo": args.halo, "unit": "us per step (median)",
            "rounds": args.rounds, "repeats": args.repeats,
            "cpu": _cpu(),
            "figures": {name: {face: round(statistics.median(v), 2) for face, v in faces.items()}
                        for name, faces in samples.items()},
        }
    text = json.dumps(result, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() + f", {os.cpu_count()} cores"
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    main()
