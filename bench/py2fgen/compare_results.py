"""Merge the py2fgen half and the gtstorage half of the benchmark into one comparison JSON.

Usage:
    python compare_results.py OUT.json --py2fgen PY2FGEN.json \
        --wrap RAW_WRAP.txt --persistent RAW_PERSISTENT.txt [--meta KEY=VALUE ...]
    python compare_results.py --table OUT.json     # print a Markdown summary of OUT.json

PY2FGEN.json is what collect_results.py wrote for the py2fgen driver run; RAW_WRAP.txt is
bench_driver built with layer_gtstorage.F90 (arrays wrapped at every call, the call site py2fgen
has) and RAW_PERSISTENT.txt is bench_persistent (arrays wrapped once, the model's usage).

Targets (README.md, "Targets"), evaluated on the medians (and, for information, the minima):
  same_arrays_not_slower  per-call time <= py2fgen's for the same number of arrays
                          (empty_1, empty_10, empty_40)
  per_array_le_1us        cost per additional array <= 1 us on top of the empty call:
                          (empty_40 - empty_1) / 39 for every layer; for the persistent
                          mode also (empty_40 - empty_0) / 40 (empty_0: no array at all)
  empty_40_le_20us        empty_40 <= 20 us
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collect_results import cpu_model, loadavg, parse_raw  # noqa: E402

PER_ARRAY_LIMIT_US = 1.0
EMPTY_40_LIMIT_US = 20.0

# case of py2fgen -> case of the same call in each gtstorage mode (None: not measured there)
CASE_MAP = {
    "empty_1": ("empty_1", "empty_1"),
    "empty_10": ("empty_10", "empty_10"),
    "empty_40": ("empty_40", "empty_40"),
    "empty_1_nocache": ("empty_1_nocache", "empty_1_rotating"),
    "section_j": ("section_j", "section_j"),
    "section_stride2": ("section_stride2", "section_stride2"),
    "empty_1_via_assumed_shape": ("empty_1_via_assumed_shape", None),
    "diffusion": ("diffusion", "diffusion"),
    "diffusion_via_assumed_shape": ("diffusion_via_assumed_shape", None),
}


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cases_brief(cases: dict) -> dict:
    keep = ("median_us", "min_us", "max_us", "repeats", "calls_per_repeat", "copied",
            "failed_calls", "result_ok", "max_abs_diff_vs_fortran")
    return {name: {k: v[k] for k in keep if k in v} for name, v in cases.items()}


def _copied(probe: dict) -> dict:
    return {kind: v["copied"] for kind, v in probe.items()
            if isinstance(v, dict) and "copied" in v}


def _ratio(num, den):
    if num is None or den is None or den == 0:
        return None
    return num / den


def _get(cases: dict, name: str | None, stat: str):
    if name is None or name not in cases:
        return None
    return cases[name].get(stat)


def _per_array(cases: dict, stat: str) -> dict:
    out = {}
    e1, e10, e40 = (_get(cases, n, stat) for n in ("empty_1", "empty_10", "empty_40"))
    if e1 is not None and e40 is not None:
        out["slope_empty_1_to_40_us"] = (e40 - e1) / 39.0
    if e1 is not None and e10 is not None:
        out["slope_empty_1_to_10_us"] = (e10 - e1) / 9.0
    e0 = _get(cases, "empty_0", stat)
    if e0 is not None and e40 is not None:
        out["empty_0_us"] = e0
        out["over_empty_0_per_array_40_us"] = (e40 - e0) / 40.0
        if e1 is not None:
            out["over_empty_0_per_array_1_us"] = e1 - e0
    return out


def _targets(layer_cases: dict, ref_cases: dict | None, stat: str) -> dict:
    t: dict = {}
    if ref_cases is not None:
        detail = {}
        ok = True
        for name in ("empty_1", "empty_10", "empty_40"):
            ours, ref = _get(layer_cases, name, stat), _get(ref_cases, name, stat)
            met = ours is not None and ref is not None and ours <= ref
            detail[name] = {"gtstorage_us": ours, "py2fgen_us": ref, "met": met}
            ok = ok and met
        t["same_arrays_not_slower"] = {"met": ok, "detail": detail}
    pa = _per_array(layer_cases, stat)
    values = {k: v for k, v in pa.items() if k.startswith(("slope_empty_1_to_40", "over_empty_0_per_array_40"))}
    t["per_array_le_1us"] = {
        "met": bool(values) and all(v <= PER_ARRAY_LIMIT_US for v in values.values()),
        "values_us": values,
    }
    e40 = _get(layer_cases, "empty_40", stat)
    t["empty_40_le_20us"] = {"met": e40 is not None and e40 <= EMPTY_40_LIMIT_US, "value_us": e40}
    return t


def _fmt(x, digits=2):
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "NO"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def table(doc: dict) -> str:
    """Markdown summary: per-case medians (min), ratios, per-array costs, targets."""
    layers = [k for k in ("py2fgen", "gtstorage_wrap_per_call", "gtstorage_persistent") if k in doc]
    titles = {"py2fgen": "py2fgen", "gtstorage_wrap_per_call": "gtstorage wrap per call",
              "gtstorage_persistent": "gtstorage persistent"}

    def cell(layer, name):
        c = doc[layer]["cases"].get(name) if name else None
        return "-" if c is None else f"{_fmt(c['median_us'])} ({_fmt(c['min_us'])})"

    rows = []
    for case, (wname, pname) in CASE_MAP.items():
        row = [case]
        for layer in layers:
            name = {"py2fgen": case, "gtstorage_wrap_per_call": wname,
                    "gtstorage_persistent": pname}[layer]
            text = cell(layer, name)
            if name and name != case and text != "-":
                text += f" [{name}]"
            row.append(text)
        r = doc.get("ratios", {}).get(case, {})
        row += [_fmt(r.get("wrap_per_call")), _fmt(r.get("persistent"))]
        rows.append(row)
    mapped = {p for _, p in CASE_MAP.values() if p}
    for name in doc.get("gtstorage_persistent", {}).get("cases", {}):
        if name not in mapped:
            rows.append([name] + ["-" if l != "gtstorage_persistent" else cell(l, name)
                                  for l in layers] + ["-", "-"])
    lines = ["| case | " + " | ".join(f"{titles[l]}: median (min) us" for l in layers)
             + " | py2fgen/wrap | py2fgen/persistent |",
             "|---|" + "---|" * (len(layers) + 2)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines += ["", "| layer | extra array: (empty_40-empty_1)/39, median (min) us | "
              "not slower than py2fgen (1/10/40) | <= 1 us per array | empty_40 <= 20 us |",
              "|---|---|---|---|---|"]
    for layer in layers:
        t = doc.get("targets", {}).get(layer, {}).get("median")
        if t is None:
            continue
        pa = doc[layer].get("per_array", {})
        same = t.get("same_arrays_not_slower", {}).get("met") if "same_arrays_not_slower" in t else None
        lines.append(f"| {titles[layer]} | {_fmt(pa.get('median', {}).get('slope_empty_1_to_40_us'), 3)} "
                     f"({_fmt(pa.get('min', {}).get('slope_empty_1_to_40_us'), 3)}) | "
                     f"{'n/a' if same is None else _fmt(same)} | "
                     f"{_fmt(t['per_array_le_1us']['met'])} | {_fmt(t['empty_40_le_20us']['met'])} |")
    cp = doc.get("copied", {})
    lines += ["", f"gtstorage: any copy = {cp.get('gtstorage_any_copy')}; py2fgen copied: "
              + (", ".join(k for k, v in cp.get("py2fgen", {}).items() if v) or "none")]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--table":
        with open(argv[2], encoding="utf-8") as fh:
            print(table(json.load(fh)))
        return 0
    out = argv[1]
    args = iter(argv[2:])
    paths: dict[str, str] = {}
    meta: dict[str, str] = {}
    for arg in args:
        if arg == "--meta":
            k, _, v = next(args).partition("=")
            meta[k] = v
        elif arg in ("--py2fgen", "--wrap", "--persistent"):
            paths[arg[2:]] = next(args)
        else:
            print(f"unknown argument {arg!r}", file=sys.stderr)
            return 2

    p2f = None
    if "py2fgen" in paths and os.path.exists(paths["py2fgen"]):
        with open(paths["py2fgen"], encoding="utf-8") as fh:
            p2f = json.load(fh)
    wrap = parse_raw(paths["wrap"]) if "wrap" in paths else None
    pers = parse_raw(paths["persistent"]) if "persistent" in paths else None

    doc: dict = {
        "benchmark": "fortran-to-python call overhead: py2fgen vs gtstorage bridge",
        "timestamp_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpu_model": cpu_model(),
            "nproc": os.cpu_count(),
            "kernel": platform.release(),
            "loadavg_at_end": loadavg(),
        },
        "software": {
            "python_version": platform.python_version(),
            "numpy": _version("numpy"),
            "icon4py-tools": _version("icon4py-tools"),
            "fortran_compiler": (wrap or pers or {}).get("fortran_compiler"),
            "gtstorage_library_version": (pers or {}).get("library_version"),
        },
        "units": "microseconds per call (median and min over interleaved repeats); ms where named",
    }
    for k, v in meta.items():
        if k.startswith("loadavg_before"):
            doc["machine"].setdefault("loadavg_before", {})[k.removeprefix("loadavg_before_")] = v
        else:
            doc.setdefault("settings", {})[k] = v

    p2f_cases = None
    if p2f is not None:
        p2f_cases = p2f.get("cases", {})
        doc["py2fgen"] = {
            "version": p2f.get("py2fgen_version"),
            "call_layer": "layer_py2fgen.F90 (generated bindings, renamed)",
            "first_call_ms": p2f.get("first_call_ms"),
            "cases": _cases_brief(p2f_cases),
            "cases_pythonoptimize2": _cases_brief(
                p2f.get("runs", {}).get("pythonoptimize2", {}).get("cases", {})),
            "error": p2f.get("error", {}),
            "per_array": {"median": _per_array(p2f_cases, "median_us"),
                          "min": _per_array(p2f_cases, "min_us")},
            "source": paths["py2fgen"],
        }
    if wrap is not None:
        doc["gtstorage_wrap_per_call"] = {
            "call_layer": "layer_gtstorage.F90: gtstorage_wrap + gtstorage_python_call + "
                          "gtstorage_release at every call (the call site py2fgen has)",
            "first_call_ms": wrap.get("first_call_ms"),
            "first_call_note": "gtstorage_python_init + 6 x resolve + the first call",
            "cases": _cases_brief(wrap.get("cases", {})),
            "error": wrap.get("error", {}),
            "logical": {k: v for k, v in wrap.get("probe", {}).items() if k.startswith("logical")},
            "per_array": {"median": _per_array(wrap.get("cases", {}), "median_us"),
                          "min": _per_array(wrap.get("cases", {}), "min_us")},
        }
    if pers is not None:
        doc["gtstorage_persistent"] = {
            "call_layer": "bench_persistent.F90: arrays wrapped once, gtstorage_python_call "
                          "with the same handles every call (the model's usage)",
            "init_and_resolve_ms": pers.get("init_and_resolve_ms"),
            "first_call_ms": pers.get("first_call_ms"),
            "cases": _cases_brief(pers.get("cases", {})),
            "error": pers.get("error", {}),
            "library_during_timing": pers.get("library", {}),
            "probe_second_call_sees_fortran_writes":
                pers.get("probe", {}).get("contiguous_second_call_sees_fortran_writes"),
            "finalize_rc": pers.get("finalize_rc"),
            "per_array": {"median": _per_array(pers.get("cases", {}), "median_us"),
                          "min": _per_array(pers.get("cases", {}), "min_us")},
        }

    # ---- where the wrap-per-call time goes (per array, medians) ------------------------------
    if wrap is not None and pers is not None:
        wc, pc = wrap.get("cases", {}), pers.get("cases", {})
        bd = {}
        for n, k in (("empty_1", 1), ("empty_40", 40)):
            w, p = _get(wc, n, "median_us"), _get(pc, n, "median_us")
            wr = _get(pc, f"wrap_release_{k}", "median_us")
            if None not in (w, p, wr):
                bd[n] = {
                    "wrap_per_call_us": w,
                    "persistent_call_us": p,
                    "fortran_wrap_release_us": wr,
                    "python_first_arrival_us": w - p - wr,
                    "python_first_arrival_per_array_us": (w - p - wr) / k,
                }
        doc["gtstorage_wrap_per_call"]["breakdown_median"] = bd
        doc["gtstorage_wrap_per_call"]["breakdown_note"] = (
            "wrap_per_call = persistent call + gtstorage_wrap/gtstorage_release in Fortran/C "
            "(bench_persistent wrap_release_N) + the rest, which is gtstorage.bridge converting "
            "a handle it has never seen (new handles are never reused, so every call of this "
            "mode is a view-cache miss: Storage._borrow, geometry, declaration check, NumPy view)")

    # ---- ratios: py2fgen median / gtstorage median (> 1: ours faster) ---------------------
    if p2f_cases is not None:
        ratios: dict = {}
        for case, (wname, pname) in CASE_MAP.items():
            r = {}
            ref = _get(p2f_cases, case, "median_us")
            if wrap is not None:
                r["wrap_per_call"] = _ratio(ref, _get(wrap.get("cases", {}), wname, "median_us"))
            if pers is not None and pname is not None:
                r["persistent"] = _ratio(ref, _get(pers.get("cases", {}), pname, "median_us"))
                if pname != case:
                    r["persistent_case"] = pname
            ratios[case] = r
        doc["ratios"] = ratios
        doc["ratios_note"] = "py2fgen median_us / gtstorage median_us; > 1 means gtstorage is faster"

    # ---- copies: the probe's address vs c_loc of the first element ------------------------
    copied: dict = {}
    if p2f is not None:
        copied["py2fgen"] = _copied(p2f.get("probe", {}))
    if wrap is not None:
        copied["gtstorage_wrap_per_call"] = _copied(wrap.get("probe", {}))
    if pers is not None:
        copied["gtstorage_persistent"] = _copied(pers.get("probe", {}))
    ours = [v for k, d in copied.items() if k.startswith("gtstorage") for v in d.values()]
    ours += [c.get("copied", False) for k in ("gtstorage_wrap_per_call", "gtstorage_persistent")
             for c in doc.get(k, {}).get("cases", {}).values()]
    copied["gtstorage_any_copy"] = any(ours) if ours else None
    doc["copied"] = copied

    # ---- targets ------------------------------------------------------------------------------
    targets: dict = {
        "definition": {
            "same_arrays_not_slower": "per-call time <= py2fgen's with the same number of "
                                      "arrays (empty_1, empty_10, empty_40)",
            "per_array_le_1us": "cost per additional array <= 1 us on top of the empty call: "
                                "(empty_40 - empty_1)/39; persistent also (empty_40 - empty_0)/40",
            "empty_40_le_20us": "empty_40 <= 20 us per call",
            "evaluated_on": "median (min for information)",
        }
    }
    for key, layer in (("py2fgen", None), ("gtstorage_wrap_per_call", wrap),
                       ("gtstorage_persistent", pers)):
        if key == "py2fgen":
            if p2f_cases is None:
                continue
            cases = p2f_cases
            ref = None
        else:
            if layer is None:
                continue
            cases = layer.get("cases", {})
            ref = p2f_cases
        targets[key] = {"median": _targets(cases, ref, "median_us"),
                        "min": _targets(cases, ref, "min_us")}
    doc["targets"] = targets

    with open(out, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
