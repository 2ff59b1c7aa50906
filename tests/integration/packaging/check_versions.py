#!/usr/bin/env python3
"""Fails when any version of gtstorage disagrees with project(gtstorage VERSION x.y.z).

Checked (registered as the CTest test packaging.versions, see CMakeLists.txt here):
  - CMakeLists.txt read with pyproject.toml's own regex (scikit-build-core's regex provider, the
    wheel's version) and the version CMake configured (PROJECT_VERSION);
  - pyproject.toml declares the version dynamic (no second, hand-written number);
  - the header's GTSTORAGE_VERSION_MAJOR/MINOR/PATCH, and GTSTORAGE_VERSION_NUMBER as compiled;
  - the Fortran module's GTSTORAGE_VERSION_MAJOR/MINOR/PATCH (bindings/fortran/gtstorage.f90 and
    the generated gtstorage_c_api.inc it includes);
  - the library's gtstorage_version_string() and gtstorage_version(), its file name
    (libgtstorage.so.x.y.z) and SONAME (libgtstorage.so.x);
  - the Python package: <build>/python/gtstorage/_version.py (generated), and no hard-coded
    __version__ literal in bindings/python/gtstorage/__init__.py nor a version in another
    pyproject.toml under bindings/python;
  - <build>/gtstorage.pc (Version:) and <build>/gtstorageConfigVersion.cmake (PACKAGE_VERSION).
"""
import argparse
import os
import re
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--project-version", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--print-version", required=True)
    ap.add_argument("--library-file", required=True)
    ap.add_argument("--soname", required=True)
    a = ap.parse_args()

    want = a.project_version
    major, minor, patch = want.split(".")
    found = {}  # what -> version seen
    errors = []

    def read(path):
        with open(path, encoding="utf-8") as f:
            return f.read()

    def see(what, value):
        found[what] = value
        if value != want:
            errors.append(f"{what}: {value!r} (project version {want!r})")

    src, build = a.source_dir, a.build_dir

    # -- pyproject.toml: dynamic version, read from CMakeLists.txt by its own regex -------------
    pyproject = os.path.join(src, "pyproject.toml")
    text = read(pyproject)
    try:
        import tomllib  # Python >= 3.11
    except ImportError:  # pragma: no cover - older interpreters
        try:
            import tomli as tomllib  # type: ignore
        except ImportError:
            tomllib = None
    if tomllib is not None:
        data = tomllib.loads(text)
        project = data.get("project", {})
        if "version" in project:
            errors.append(f"pyproject.toml: [project] has a static version {project['version']!r}")
        if "version" not in project.get("dynamic", []):
            errors.append("pyproject.toml: [project].dynamic does not list 'version'")
        meta = data.get("tool", {}).get("scikit-build", {}).get("metadata", {}).get("version", {})
        provider, regex = meta.get("provider"), meta.get("regex")
        input_file = meta.get("input")
    else:
        provider = "scikit_build_core.metadata.regex" if "metadata.regex" in text else None
        m = re.search(r"^regex\s*=\s*'([^']*)'", text, re.M)
        regex = m.group(1) if m else None
        m = re.search(r'^input\s*=\s*"([^"]*)"', text, re.M)
        input_file = m.group(1) if m else None
    if provider != "scikit_build_core.metadata.regex" or not regex or input_file != "CMakeLists.txt":
        errors.append("pyproject.toml: the version must come from CMakeLists.txt through "
                      f"scikit_build_core.metadata.regex (provider={provider!r}, "
                      f"input={input_file!r}, regex={regex!r})")
    else:
        # As scikit-build-core does: re.search(regex, text, re.MULTILINE), group "value".
        m = re.search(regex, read(os.path.join(src, input_file)), re.MULTILINE)
        if not m:
            errors.append(f"pyproject.toml: regex {regex!r} does not match CMakeLists.txt")
        else:
            see("pyproject.toml (regex on CMakeLists.txt)", m.group("value"))

    # -- header ----------------------------------------------------------------------------------
    header = read(os.path.join(src, "include", "gtstorage", "gtstorage.h"))
    parts = []
    for name in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"^#define\s+GTSTORAGE_VERSION_{name}\s+(\d+)", header, re.M)
        parts.append(m.group(1) if m else "?")
    see("include/gtstorage/gtstorage.h GTSTORAGE_VERSION_MAJOR/MINOR/PATCH", ".".join(parts))

    # -- Fortran module (its own named constants) ------------------------------------------------
    f90 = os.path.join(src, "bindings", "fortran", "gtstorage.f90")
    if os.path.exists(f90):
        # with the files it includes (the C ABI part is generated from the header)
        text_f90 = re.sub(r'^[ \t]*include[ \t]+"([^"]+)"[ \t]*$',
                          lambda m: read(os.path.join(os.path.dirname(f90), m.group(1))),
                          read(f90), flags=re.M | re.I)
        parts = []
        for name in ("MAJOR", "MINOR", "PATCH"):
            m = re.search(rf"\bGTSTORAGE_VERSION_{name}\s*=\s*(\d+)", text_f90, re.I)
            parts.append(m.group(1) if m else "?")
        see("bindings/fortran/gtstorage.f90 GTSTORAGE_VERSION_MAJOR/MINOR/PATCH", ".".join(parts))

    # -- library ---------------------------------------------------------------------------------
    out = subprocess.run([a.print_version], capture_output=True, text=True)
    if out.returncode != 0:
        errors.append(f"{a.print_version} failed: {out.stderr.strip()}")
    else:
        runtime_str, runtime_num, header_num, header_dotted = out.stdout.split()
        number = str(int(major) * 10000 + int(minor) * 100 + int(patch))
        see("gtstorage_version_string()", runtime_str)
        see("GTSTORAGE_VERSION_* as compiled", header_dotted)
        if runtime_num != number:
            errors.append(f"gtstorage_version(): {runtime_num} (want {number})")
        if header_num != number:
            errors.append(f"GTSTORAGE_VERSION_NUMBER: {header_num} (want {number})")
    if a.library_file.startswith("libgtstorage.so"):  # ELF platforms
        see("library file name", a.library_file[len("libgtstorage.so."):])
        if a.soname != f"libgtstorage.so.{major}":
            errors.append(f"SONAME file name {a.soname!r} (want libgtstorage.so.{major})")

    # -- Python package --------------------------------------------------------------------------
    version_py = os.path.join(build, "python", "gtstorage", "_version.py")
    m = re.search(r'^__version__\s*=\s*"([^"]*)"', read(version_py), re.M)
    see("<build>/python/gtstorage/_version.py", m.group(1) if m else None)
    init = read(os.path.join(src, "bindings", "python", "gtstorage", "__init__.py"))
    m = re.search(r'^__version__\s*=\s*["\']([^"\']*)["\']', init, re.M)
    if m:
        errors.append(f"bindings/python/gtstorage/__init__.py hard-codes __version__ = {m.group(1)!r}"
                      " (it must come from _version.py or the library)")
    old = os.path.join(src, "bindings", "python", "pyproject.toml")
    if os.path.exists(old) and re.search(r"^version\s*=", read(old), re.M):
        errors.append("bindings/python/pyproject.toml carries its own version")

    # -- pkg-config and CMake package -------------------------------------------------------------
    pc = os.path.join(build, "gtstorage.pc")
    if os.path.exists(pc):
        m = re.search(r"^Version:\s*(\S+)", read(pc), re.M)
        see("gtstorage.pc Version", m.group(1) if m else None)
    else:
        errors.append(f"{pc} missing")
    cv = os.path.join(build, "gtstorageConfigVersion.cmake")
    if os.path.exists(cv):
        m = re.search(r'set\(PACKAGE_VERSION\s+"([^"]*)"\)', read(cv))
        see("gtstorageConfigVersion.cmake PACKAGE_VERSION", m.group(1) if m else None)
    else:
        errors.append(f"{cv} missing")

    for what, value in found.items():
        print(f"  {what}: {value}")
    if errors:
        print("version mismatch:\n  " + "\n  ".join(errors), file=sys.stderr)
        return 1
    print(f"all {len(found)} versions are {want}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
