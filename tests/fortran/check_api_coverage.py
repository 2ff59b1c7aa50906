#!/usr/bin/env python3
"""Checks that the Fortran module covers the whole public C header.

For every function declared GTSTORAGE_API in gtstorage.h there must be a bind(C) interface with
that binding label, for every enumerator and numeric #define a Fortran named constant of the same
name and value, and for every typedef'd struct a bind(C) derived type of the same name. The
header grows by appending (ABI rule); this test fails when it grows and the binding does not.

The C ABI part of the module is generated (tools/gen_bindings.py, included from gtstorage.f90), so
this is a second, independent reading of the header.

Usage: check_api_coverage.py gtstorage.h gtstorage.f90
"""

import os
import re
import sys

# Macros that are not values (include guards, export attributes, initializer lists) or whose
# value is not an integer literal expression the binding can mirror as written.
SKIP_MACROS = {"GTSTORAGE_GTSTORAGE_H", "GTSTORAGE_API", "GTSTORAGE_VERSION_NUMBER",
               "GTSTORAGE_NULL_HANDLE", "GTSTORAGE_SLICE_NONE"}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_api(text):
    code = strip_comments(text)
    functions = re.findall(r"GTSTORAGE_API\s+[^;(]*?\b(gtstorage_\w+)\s*\(", code)
    enums = {}
    for body in re.findall(r"typedef\s+enum\s+\w*\s*\{(.*?)\}", code, flags=re.S):
        for name, value in re.findall(r"(GTSTORAGE_\w+)\s*=\s*(-?\d+)", body):
            enums[name] = int(value)
    macros = {}
    for name, value in re.findall(r"#\s*define\s+(GTSTORAGE_\w+)[ \t]+(-?\d+)\b[ \t]*\n", code):
        if name not in SKIP_MACROS:
            macros[name] = int(value)
    structs = re.findall(r"typedef\s+struct\s+(gtstorage_\w+)\s*\{", code)
    return functions, enums, macros, structs


def fortran_api(text):
    labels = set(re.findall(r'bind\s*\(\s*C\s*,\s*name\s*=\s*"(\w+)"', text, flags=re.I))
    # Named constants: NAME = value inside integer(...), parameter declarations (maybe continued).
    constants = {}
    for decl in re.findall(r"integer\([^)]*\),\s*parameter[^:]*::(.*?)(?<!&)\n",
                           re.sub(r"&\s*\n\s*", " ", text), flags=re.I):
        for name, value in re.findall(r"(GTSTORAGE_\w+)\s*=\s*(-?\d+)\b", decl, flags=re.I):
            constants[name.upper()] = int(value)
    types = {t.lower() for t in re.findall(r"type\s*,\s*bind\s*\(\s*C\s*\)[^:]*::\s*(\w+)",
                                            text, flags=re.I)}
    return labels, constants, types


def read_fortran(path):
    """The source with its `include "file"` lines replaced by the files (generated parts)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()

    def splice(m):
        return read_fortran(os.path.join(os.path.dirname(path), m.group(1)))

    return re.sub(r'^[ \t]*include[ \t]+"([^"]+)"[ \t]*$', splice, text, flags=re.M | re.I)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        functions, enums, macros, structs = header_api(f.read())
    labels, constants, types = fortran_api(read_fortran(sys.argv[2]))

    problems = []
    for name in functions:
        if name not in labels:
            problems.append(f"function {name}: no bind(C, name=\"{name}\") interface")
    for name, value in {**enums, **macros}.items():
        if name not in constants:
            problems.append(f"constant {name} = {value}: missing")
        elif constants[name] != value:
            problems.append(f"constant {name}: {constants[name]} in Fortran, {value} in C")
    for name in structs:
        if name.lower() not in types:
            problems.append(f"struct {name}: no bind(C) derived type")
    if len(functions) < 40 or len(enums) < 40 or len(structs) < 9:
        problems.append(f"parsed only {len(functions)} functions, {len(enums)} enumerators, "
                        f"{len(structs)} structs from the header: the parser needs updating")

    for p in problems:
        print("MISSING/WRONG:", p)
    print(f"{len(functions)} functions, {len(enums)} enumerators, {len(macros)} macros, "
          f"{len(structs)} structs checked; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
