"""bench/python/bench_python.py still runs end to end and writes its JSON (a smoke test at tiny
sizes, never a measurement: timing targets live in the benchmark's own entries, not here)."""
import json
import os
import subprocess
import sys

import gtstorage

_BENCH = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "bench", "python",
                                      "bench_python.py"))


def test_bench_python_writes_every_entry(tmp_path):
    out = tmp_path / "bench.json"
    env = dict(os.environ)
    # The same gtstorage as this test run (installed wheel or source tree).
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(gtstorage.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, _BENCH, "--no-gt4py", "--copy-shape", "32,24,16", "--repeats", "7",
         "--micro-repeats", "7", "--json", str(out)],
        env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["gtstorage"] == gtstorage.__version__
    names = [r["name"] for r in report["results"]]
    for expected in ("storage.__array_interface__", "storage.__gt_dims__", "storage.__gt_origin__",
                     "storage[i, j, k] (element read)", "storage[i, j, k] = v (element write)",
                     "gtstorage.zeros((8,8,8), backend='numpy') / np.zeros((8,8,8))",
                     "np.copyto / gtstorage.from_array, F-order 32x24x16 f8 -> gt:cpu_kfirst"):
        assert expected in names, names
    for backend in ("numpy", "gt:cpu_kfirst"):
        for kind in ("drop-in arrays / gt4py.storage", "GDP-3 storages / gt4py.storage",
                     "GDP-3 storages / constant duck fields"):
            entry = report["results"][names.index(f"GT4Py stencil call {backend} 16^3, {kind}")]
            assert entry["skipped"] == "--no-gt4py" and entry["passed"] is None
    assert "gtstorage.allocation(drop-in array)" in names
    next_entries = [r for r in report["results"] if r["name"].startswith("gt4py.next ")]
    assert len(next_entries) == 10 and all(r["skipped"] == "--no-gt4py" for r in next_entries)
    measured = [r for r in report["results"] if not r.get("skipped")]
    assert all(r["value"] > 0 for r in measured)
    assert all(isinstance(r["passed"], bool) for r in measured if r["target"] is not None)
    references = [r for r in measured if r["target"] is None]
    # ndarray.__array_interface__, ndarray element read and write, gtstorage.gdp3.zeros
    assert len(references) == 4
    assert report["passed"] + report["failed"] + report["skipped"] + len(references) == len(names)
