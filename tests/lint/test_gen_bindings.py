#!/usr/bin/env python3
"""Tests of tools/gen_bindings.py on scratch copies of the public header.

1. Every construct the generator does not understand stops it with exit status 2 and a message
   "<header>:<line>: error: …" naming the line of that construct (nothing is silently dropped).
2. The round trip of issue 9's "Done when" (changing the header and running the generator is the
   only edit the bindings need): a field appended to gtstorage_stats (and its _INIT macro), a
   value appended to gtstorage_memory, a new enum and a new function in a scratch header change
   exactly the expected lines of the four generated files (ctypes module, Fortran include, the
   C and Fortran struct layout tables); the generated ctypes module imports with them, the
   generated Fortran include compiles inside a module (gfortran or $FC; skipped without one)
   and a procedure uses the trial component, constants and interface; removing the trial
   changes from the trial header gives back the original header, from which the generator
   writes files byte-identical to the checked-in ones.

Standard library only; exit status 0 on success.
"""

import ctypes
import difflib
import importlib.util
import os
import re
import shutil
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
    ("enum parameter of a type that is no enum",
     "GTSTORAGE_API int gtstorage_take(GTSTORAGE_ENUM(gtstorage_handle) x);", 1),
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


TRIAL_FIELD = "\n  int64_t trial_field; /**< A trial field. */"
TRIAL_ENUM_OLD = "  GTSTORAGE_MEMORY_ALL = 3          /**<"
TRIAL_ENUM_NEW = "  GTSTORAGE_MEMORY_ALL = 3,         /**<"
TRIAL_VALUE = "  GTSTORAGE_MEMORY_TRIAL = 9 /**< A trial value. */\n"
TRIAL_SNIPPET = ("typedef enum gtstorage_trial {\n  GTSTORAGE_TRIAL_A = 0,\n"
                 "  GTSTORAGE_TRIAL_B = 7\n} gtstorage_trial;\n\n"
                 "GTSTORAGE_API int gtstorage_trial_call(gtstorage_handle handle, "
                 "const int64_t* values,\n    uint32_t nvalues, gtstorage_stats* out);\n\n")
ABI_F_OUT = os.path.join("tests", "fortran", "abi_layout_gen.inc")
ABI_C_OUT = os.path.join("tests", "fortran", "abi_layout_gen.h")

# What the trial changes add to each generated file (unified diff without context, in order).
# The Fortran `public ::` statement of the interfaces, which is wrapped to the line length, is
# compared as a list of names instead (see fortran_public_names).
TRIAL_ADDED = {
    PY_OUT: [
        "MEMORY_TRIAL = 9",
        "# gtstorage_trial",
        "TRIAL_A = 0",
        "TRIAL_B = 7",
        "",
        '         "pool_high_water_bytes trial_field", ctypes.c_int64),',
        '        "GTSTORAGE_MEMORY_TRIAL": 9,',
        "    },",
        '    "gtstorage_trial": {',
        '        "GTSTORAGE_TRIAL_A": 0,',
        '        "GTSTORAGE_TRIAL_B": 7,',
        '    "gtstorage_trial_call": (',
        "        ctypes.c_int,",
        "        [handle_t, ctypes.POINTER(ctypes.c_int64), ctypes.c_uint32, "
        "ctypes.POINTER(Stats)],",
        "    ),",
        '    "MEMORY_TRIAL",',
        '    "TRIAL_A",',
        '    "TRIAL_B",',
    ],
    F_OUT: [
        "  integer(c_int), parameter, public :: GTSTORAGE_MEMORY_TRIAL = 9",
        "  ! gtstorage_trial",
        "  integer(c_int), parameter, public :: GTSTORAGE_TRIAL_A = 0",
        "  integer(c_int), parameter, public :: GTSTORAGE_TRIAL_B = 7",
        "    integer(c_int64_t) :: trial_field = 0",
        "    function gtstorage_trial_call_c(handle, values, nvalues, out) &",
        '        bind(C, name="gtstorage_trial_call") result(status)',
        "      import :: c_int, c_int32_t, c_int64_t, gtstorage_stats",
        "      integer(c_int64_t), value :: handle  !< gtstorage_handle",
        "      integer(c_int64_t), intent(in) :: values(*)",
        "      integer(c_int32_t), value :: nvalues  !< uint32_t",
        "      type(gtstorage_stats), intent(inout) :: out",
        "      integer(c_int) :: status",
        "    end function gtstorage_trial_call_c",
        "",
    ],
    ABI_F_OUT: [
        '    call same_offset(8, 15, "gtstorage_stats%trial_field", off(c_loc(x), '
        "c_loc(x%trial_field)))",
    ],
    ABI_C_OUT: [
        "    (int64_t)offsetof(gtstorage_stats, trial_field),",
        "    15,",
    ],
}
# What they remove: the field count of gtstorage_stats in the C layout table (14, now 15), and
# in the ctypes module the line of Stats' last declaration, which the trial field joins.
TRIAL_REMOVED = {ABI_C_OUT: ["    14,"],
                 PY_OUT: ['         "pool_high_water_bytes", ctypes.c_int64),']}

FORTRAN_TEST = """module trial_capi
  use, intrinsic :: iso_c_binding
  implicit none
  private
  include "gtstorage_c_api.inc"
end module trial_capi

subroutine use_trial(handle, values, status)
  use, intrinsic :: iso_c_binding
  use trial_capi
  implicit none
  integer(gtstorage_handle_kind), intent(in) :: handle
  integer(c_int64_t), intent(in) :: values(2)
  integer(c_int), intent(out) :: status
  type(gtstorage_stats) :: s
  s%trial_field = 5_c_int64_t
  if (GTSTORAGE_MEMORY_TRIAL /= 9 .or. GTSTORAGE_TRIAL_B /= 7) error stop 1
  status = gtstorage_trial_call_c(handle, values, 2_c_int32_t, s)
end subroutine use_trial
"""


def add_trials(text):
    m = re.search(r"(typedef struct gtstorage_stats \{.*?)(\n\} gtstorage_stats;)", text, re.S)
    text = text[:m.end(1)] + TRIAL_FIELD + text[m.end(1):]
    # its initializer macro gets the new field's default
    text = re.sub(r"(#define GTSTORAGE_STATS_INIT[\s\\]*\{[^}]*)\}", r"\1, 0}", text, count=1)
    if text.count(TRIAL_ENUM_OLD) != 1:
        raise ValueError("the header's GTSTORAGE_MEMORY_ALL line changed; update the test")
    text = text.replace(TRIAL_ENUM_OLD, TRIAL_ENUM_NEW)
    text = text.replace("} gtstorage_memory;", TRIAL_VALUE + "} gtstorage_memory;")
    at = text.rindex("#ifdef __cplusplus")
    return text[:at] + TRIAL_SNIPPET + text[at:]


def remove_trials(text):
    """The inverse edit, made on the trial header (not a fresh copy of the original)."""
    for old, new in ((TRIAL_FIELD, ""), (TRIAL_VALUE, ""), (TRIAL_ENUM_NEW, TRIAL_ENUM_OLD),
                     (TRIAL_SNIPPET, "")):
        if text.count(old) != 1:
            raise ValueError(f"trial text not found once: {old!r}")
        text = text.replace(old, new)
    return re.sub(r"(#define GTSTORAGE_STATS_INIT[\s\\]*\{[^}]*), 0\}", r"\1}", text,
                  count=1)


def fortran_public_names(text):
    """The names of the interfaces' `public ::` statement, and the text with it taken out."""
    m = re.search(r"^  public :: gtstorage_version_c,.*?[^&]\n", text, re.M | re.S)
    if not m:
        return None, text
    names = [n.strip() for n in re.sub(r"&\s*\n", " ", m.group(0))
             .replace("public ::", "").split(",")]
    return names, text[:m.start()] + "<public statement>\n" + text[m.end():]


def diff_lines(old, new):
    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), n=0, lineterm=""))
    removed = [d[1:] for d in diff if d.startswith("-") and not d.startswith("---")]
    added = [d[1:] for d in diff if d.startswith("+") and not d.startswith("+++")]
    return removed, added


def fortran_compiler():
    for name in (os.environ.get("FC"), "gfortran"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def trial_round_trip(tmp, base_py):
    failures = []
    d = os.path.join(tmp, "trial")
    os.makedirs(d)
    with open(HEADER, encoding="utf-8") as f:
        original = f.read()
    try:
        trial_text = add_trials(original)
    except (AttributeError, ValueError) as exc:
        return [f"trial round trip: cannot edit the header: {exc}"]
    path = os.path.join(d, "gtstorage.h")
    with open(path, "w", encoding="utf-8") as f:
        f.write(trial_text)
    r = run(path, os.path.join(d, "out"))
    if r.returncode != 0:
        return ["trial round trip: generator failed: " + r.stderr]

    # Exactly the expected lines change, in each of the four generated files.
    for rel, want_added in TRIAL_ADDED.items():
        old = read(os.path.join(ROOT, rel))
        new = read(os.path.join(d, "out", rel))
        if rel == F_OUT:
            old_names, old = fortran_public_names(old)
            new_names, new = fortran_public_names(new)
            if old_names is None or new_names is None:
                failures.append("trial, Fortran: no `public ::` statement of the interfaces")
            elif (new_names.count("gtstorage_trial_call_c") != 1 or
                  [n for n in new_names if n != "gtstorage_trial_call_c"] != old_names):
                failures.append(f"trial, Fortran: public names {new_names} are not the old ones "
                                "plus gtstorage_trial_call_c")
        removed, added = diff_lines(old, new)
        want_removed = TRIAL_REMOVED.get(rel, [])
        ok = removed == want_removed and added == want_added
        print(f"{'ok  ' if ok else 'FAIL'} trial diff of {rel}: -{len(removed)} +{len(added)}")
        if not ok:
            failures.append(f"trial diff of {rel}:\n  removed {removed}\n  added {added}\n"
                            f"  expected removed {want_removed}\n  expected added {want_added}")

    # The generated ctypes module imports, with the trial field, value, enum and function.
    try:
        old_mod = load_python(os.path.join(ROOT, PY_OUT))
        mod = load_python(os.path.join(d, "out", PY_OUT))
        restype, argtypes = mod.PROTOTYPES["gtstorage_trial_call"]
        ok = (ctypes.sizeof(mod.Stats) == ctypes.sizeof(old_mod.Stats) + 8 and
              mod.Stats._fields_[-1] == ("trial_field", ctypes.c_int64) and
              mod.MEMORY_TRIAL == 9 and mod.TRIAL_B == 7 and
              mod.ENUMS["gtstorage_memory"]["GTSTORAGE_MEMORY_TRIAL"] == 9 and
              restype is ctypes.c_int and argtypes[0] is mod.handle_t and
              argtypes[1]._type_ is ctypes.c_int64 and argtypes[3]._type_ is mod.Stats and
              "MEMORY_TRIAL" in mod.__all__)
        if not ok:
            failures.append("trial, Python: the imported module lacks a trial item")
        print(f"{'ok  ' if ok else 'FAIL'} trial Python module imports: Stats "
              f"{ctypes.sizeof(old_mod.Stats)} -> {ctypes.sizeof(mod.Stats)} bytes")
    except Exception as exc:  # noqa: BLE001 (any failure to import is the finding)
        failures.append(f"trial, Python: the generated module does not import: {exc!r}")

    # The generated Fortran include compiles inside a module, and a procedure can use the trial
    # component, constants and interface.
    fc = fortran_compiler()
    if fc is None:
        print("skip trial Fortran compile: no Fortran compiler (gfortran or $FC)")
    else:
        src = os.path.join(d, "trial.f90")
        with open(src, "w", encoding="utf-8") as f:
            f.write(FORTRAN_TEST)
        r = subprocess.run([fc, "-c", "-std=f2018", "-I", os.path.join(d, "out", "bindings",
                            "fortran"), src, "-o", os.path.join(d, "trial.o")], cwd=d,
                           capture_output=True, text=True)
        ok = r.returncode == 0
        print(f"{'ok  ' if ok else 'FAIL'} trial Fortran compiles ({os.path.basename(fc)})")
        if not ok:
            failures.append("trial, Fortran: the generated include does not compile:\n" +
                            r.stdout + r.stderr)

    # Remove the trial changes again: the header is the original, the generated files are
    # byte-identical to the checked-in ones.
    try:
        back = remove_trials(trial_text)
    except ValueError as exc:
        return failures + [f"trial removal: {exc}"]
    if back != original:
        failures.append("trial removal: the header is not the original again")
    path = os.path.join(d, "removed", "gtstorage.h")
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as f:
        f.write(back)
    r = run(path, os.path.join(d, "removed", "out"))
    if r.returncode != 0:
        return failures + ["trial removal: generator failed: " + r.stderr]
    same = True
    for rel in TRIAL_ADDED:
        with open(os.path.join(ROOT, rel), "rb") as f:
            checked_in = f.read()
        with open(os.path.join(d, "removed", "out", rel), "rb") as f:
            regenerated = f.read()
        if regenerated != checked_in:
            same = False
            failures.append(f"trial removal: {rel} differs from the checked-in file")
    if read(os.path.join(d, "removed", "out", PY_OUT)) != base_py:
        failures.append("trial removal: the Python module differs from the real header's")
    print(f"{'ok  ' if same else 'FAIL'} trial removed: the generated files are byte-identical "
          "to the checked-in ones")
    return failures


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

        # 2. The round trip of the "Done when": trial changes in a scratch header (a
        # field appended to gtstorage_stats, a value appended to gtstorage_memory, a new enum and
        # a new function), the generator run, and nothing else edited: exactly the expected
        # lines change in every generated file, the Fortran compiles and the Python imports;
        # then the trial changes are removed again and the generated files are byte-identical
        # to the checked-in ones.
        failures += trial_round_trip(tmp, base_py)

    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
