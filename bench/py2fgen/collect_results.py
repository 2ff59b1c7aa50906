"""Assemble the py2fgen benchmark JSON from the driver's "key value" files.

Usage:
    python collect_results.py OUT.json RUN_NAME=RAW.txt [RUN_NAME=RAW.txt ...] [--meta KEY=VALUE ...]

The first RUN is the primary one: its cases/probes/error fields are copied to the
top level.  Every run is also kept under ``runs.<RUN_NAME>``.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import sys


def _convert(token: str):
    if token in ("T", "true"):
        return True
    if token in ("F", "false"):
        return False
    try:
        return int(token)
    except ValueError:
        pass
    try:
        return float(token)
    except ValueError:
        return token


def parse_raw(path: str) -> dict:
    result: dict = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            key, _, value = line.partition(" ")
            value = value.strip()
            parts = value.split()
            if len(parts) > 1 and all(_convert(p).__class__ is int for p in parts):
                val = [int(p) for p in parts]
            elif key in ("layer", "fortran_compiler"):
                val = value
            else:
                val = _convert(value)
            node = result
            *prefix, leaf = key.split(".")
            for p in prefix:
                node = node.setdefault(p, {})
            node[leaf] = val
    return result


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def loadavg() -> list[float] | None:
    try:
        with open("/proc/loadavg", encoding="utf-8") as fh:
            return [float(x) for x in fh.read().split()[:3]]
    except OSError:
        return None


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def main(argv: list[str]) -> int:
    out = argv[1]
    runs: dict[str, dict] = {}
    meta: dict[str, str] = {}
    args = iter(argv[2:])
    for arg in args:
        if arg == "--meta":
            k, _, v = next(args).partition("=")
            meta[k] = v
            continue
        name, _, path = arg.partition("=")
        runs[name] = parse_raw(path)
    if not runs:
        print("no runs given", file=sys.stderr)
        return 2

    primary_name = next(iter(runs))
    primary = runs[primary_name]
    doc = {
        "benchmark": "fortran-to-python call overhead",
        "bridge": primary.get("layer", "unknown"),
        "timestamp_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "cpu_model": cpu_model(),
        "nproc": os.cpu_count(),
        "loadavg_at_end": loadavg(),
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "py2fgen_version": _version("icon4py-tools"),
        "versions": {
            "icon4py-tools": _version("icon4py-tools"),
            "gt4py": _version("gt4py"),
            "cffi": _version("cffi"),
            "numpy": _version("numpy"),
        },
        "fortran_compiler": primary.get("fortran_compiler"),
        "primary_run": primary_name,
        "first_call_ms": primary.get("first_call_ms"),
        "cases": primary.get("cases", {}),
        "probe": primary.get("probe", {}),
        "error": primary.get("error", {}),
        "runs": runs,
        **meta,
    }
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2, sort_keys=False)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
