#!/usr/bin/env python3
"""Tests of tools/gen_bindings.py on scratch copies of the public header.

1. Every construct the generator does not understand stops it with exit status 2 and a message
   "<header>:<line>: error: …" naming the line of that construct (nothing is silently dropped).
2. A field appended to a struct of a scratch header appears in the generated ctypes struct (whose
   size grows accordingly) and in the generated bind(C) derived type, and nothing else changes.
3. A function and an enum added to the scratch header appear in PROTOTYPES, the Fortran
   interfaces and the constants.

Standard library only; exit status 0 on success.
"""

import ctypes
import difflib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GEN = os.path.join(ROOT, "tools", "gen_bindings.py")
HEADER = os.path.join(ROOT, "include", "gtstorage", "gtstorage.h")
PY_OUT = os.path.join("bindings", "python", "gtstorage", "_capi_generated.py")
F_OUT = os.path.join("bindings", "fortran", "gtstorage_c_api.inc")

# (what, snippet inserted before the closing extern "C" block, line of the snippet that is bad)
UNKNOWN = [
    ("union", "typedef union gtstorage_u {\n  int32_t a;\n  float b;\n} gtstorage_u;", 1),
    ("pragma", "#pragma once", 1),
    ("long field", "typedef struct gtstorage_l {\n  uint32_t struct_size;\n  long n;\n} gtstorage_l;",
     3),
    ("bit field", "typedef struct gtstorage_b {\n  uint32_t struct_size;\n  uint32_t a : 3;\n"
     "} gtstorage_b;", 3),
    ("bool", "GTSTORAGE_API int gtstorage_flag(bool on);", 1),
    ("implicit enum value", "typedef enum gtstorage_e {\n  GTSTORAGE_E_A = 0,\n  GTSTORAGE_E_B\n"
     "} gtstorage_e;", 3),
    ("function-like macro", "#define GTSTORAGE_TWICE(x) (2 * (x))", 1),
    ("string macro", '#define GTSTORAGE_NAME "gtstorage"', 1),
    ("variadic function", "\nGTSTORAGE_API int gtstorage_printf(const char* format, ...);", 2),
    ("inline function", "static inline int gtstorage_zero(void) { return 0; }", 1),
    ("global variable", "GTSTORAGE_API extern int gtstorage_global;", 1),
    ("unknown type", "GTSTORAGE_API int gtstorage_take(gtstorage_unknown* x);", 1),
    ("nested conditional", "#if GTSTORAGE_VERSION_MAJOR > 1\n#endif", 1),
    ("initializer of the wrong size", "#define GTSTORAGE_DLPACK_OPTIONS_SHORT_INIT \\\n"
     "  { sizeof(gtstorage_dlpack_options), 0 }", 1),
]


def scratch_header(tmp, insert=None, edit=None):
    with open(HEADER, encoding="utf-8") as f:
        text = f.read()
    if edit:
        text = edit(text)
    first = None
    if insert is not None:
        at = text.rindex("#ifdef __cplusplus")
        first = text[:at].count("\n") + 1  # line of the snippet's first line
        text = text[:at] + insert + "\n\n" + text[at:]
    path = os.path.join(tmp, "gtstorage.h")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path, first


def run(header, outdir):
    return subprocess.run([sys.executable, GEN, "--header", header, "--output-dir", outdir],
                          capture_output=True, text=True)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def load_python(path):
    spec = importlib.util.spec_from_file_location("capi_trial", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def added_lines(old, new):
    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), n=0, lineterm=""))
    removed = [d for d in diff if d.startswith("-") and not d.startswith("---")]
    added = [d[1:] for d in diff if d.startswith("+") and not d.startswith("+++")]
    return removed, added


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="gen_bindings_test.") as tmp:
        # The real header generates, and reproduces the checked-in files (deterministic).
        out = os.path.join(tmp, "real")
        r = run(HEADER, out)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            return 1
        base_py, base_f = read(os.path.join(out, PY_OUT)), read(os.path.join(out, F_OUT))

        # 1. Unknown constructs.
        for what, snippet, bad_line in UNKNOWN:
            d = os.path.join(tmp, re.sub(r"\W+", "_", what))
            os.makedirs(d)
            path, first = scratch_header(d, insert=snippet)
            expected_line = first + bad_line - 1
            r = run(path, os.path.join(d, "out"))
            ok = (r.returncode == 2 and
                  re.search(rf"^{re.escape(path)}:{expected_line}: error: ", r.stderr, re.M))
            print(f"{'ok  ' if ok else 'FAIL'} unknown construct ({what}): "
                  f"{r.stderr.strip() or 'exit status %d, no message' % r.returncode}")
            if not ok:
                failures.append(f"{what}: expected exit 2 and '{path}:{expected_line}: error:'")
            if os.path.exists(os.path.join(d, "out")):
                failures.append(f"{what}: files were written despite the error")

        # 2. A trial field appended to gtstorage_stats.
        d = os.path.join(tmp, "trial_field")
        os.makedirs(d)

        def add_field(text):
            m = re.search(r"(typedef struct gtstorage_stats \{.*?)(\n\} gtstorage_stats;)", text,
                          re.S)
            text = (text[:m.end(1)] + "\n  int64_t trial_field; /**< A trial field. */" +
                    text[m.end(1):])
            # its initializer macro, where the header has one, gets the new field's default
            return re.sub(r"(#define GTSTORAGE_STATS_INIT[\s\\]*\{[^}]*)\}", r"\1, 0}", text)

        path, _ = scratch_header(d, edit=add_field)
        r = run(path, os.path.join(d, "out"))
        if r.returncode != 0:
            failures.append("trial field: generator failed: " + r.stderr)
        else:
            py = read(os.path.join(d, "out", PY_OUT))
            fo = read(os.path.join(d, "out", F_OUT))
            removed, added = added_lines(base_py, py)
            if removed or added != ['        ("trial_field", ctypes.c_int64),']:
                failures.append(f"trial field, Python: -{removed} +{added}")
            removed, added = added_lines(base_f, fo)
            if removed or added != ["    integer(c_int64_t) :: trial_field = 0"]:
                failures.append(f"trial field, Fortran: -{removed} +{added}")
            m = re.search(r"type, bind\(C\), public :: gtstorage_stats\n(.*?)end type", fo, re.S)
            if not m or not m.group(1).rstrip().endswith("trial_field = 0"):
                failures.append("trial field, Fortran: not the last component of gtstorage_stats")
            old_stats = load_python(os.path.join(out, PY_OUT)).Stats
            new_stats = load_python(os.path.join(d, "out", PY_OUT)).Stats
            if (ctypes.sizeof(new_stats) != ctypes.sizeof(old_stats) + 8 or
                    new_stats._fields_[-1][0] != "trial_field"):
                failures.append("trial field, Python: Stats did not grow by the int64 field")
            print(f"{'ok  ' if not failures else 'FAIL'} trial field: Stats "
                  f"{ctypes.sizeof(old_stats)} -> {ctypes.sizeof(new_stats)} bytes")

        # 3. A new enum and function.
        d = os.path.join(tmp, "trial_function")
        os.makedirs(d)
        snippet = ("typedef enum gtstorage_trial {\n  GTSTORAGE_TRIAL_A = 0,\n"
                   "  GTSTORAGE_TRIAL_B = 7\n} gtstorage_trial;\n\n"
                   "GTSTORAGE_API int gtstorage_trial_call(gtstorage_handle handle, "
                   "const int64_t* values,\n    uint32_t nvalues, gtstorage_stats* out);")
        path, _ = scratch_header(d, insert=snippet)
        r = run(path, os.path.join(d, "out"))
        before = len(failures)
        if r.returncode != 0:
            failures.append("trial function: generator failed: " + r.stderr)
        else:
            mod = load_python(os.path.join(d, "out", PY_OUT))
            fo = read(os.path.join(d, "out", F_OUT))
            restype, argtypes = mod.PROTOTYPES["gtstorage_trial_call"]
            if (mod.TRIAL_B != 7 or restype is not ctypes.c_int or argtypes[0] is not mod.handle_t
                    or argtypes[1]._type_ is not ctypes.c_int64 or argtypes[3]._type_ is not mod.Stats):
                failures.append("trial function, Python: wrong prototype or constant")
            for needle in ("integer(c_int), parameter, public :: GTSTORAGE_TRIAL_B = 7",
                           'bind(C, name="gtstorage_trial_call") result(status)',
                           "integer(c_int64_t), intent(in) :: values(*)",
                           "type(gtstorage_stats), intent(inout) :: out",
                           "gtstorage_trial_call_c"):
                if needle not in fo:
                    failures.append(f"trial function, Fortran: no '{needle}'")
        print(f"{'ok  ' if len(failures) == before else 'FAIL'} trial enum and function")

    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
