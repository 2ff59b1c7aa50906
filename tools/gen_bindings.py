#!/usr/bin/env python3
"""Generates the header-derived parts of the Python and Fortran bindings from gtstorage.h.

include/gtstorage/gtstorage.h is the single source of the C ABI, together with the experimental
tier it includes on request (include/gtstorage/gtstorage_experimental.h: the same style, read
after it from the same directory, or from the repository when a scratch header has no
neighbour). This script (Python standard library only) parses both and writes:

  bindings/python/gtstorage/_capi_generated.py   every constant and enum value, every struct as a
                                                 ctypes.Structure, the typedefs, and the
                                                 prototypes of every exported function as data
                                                 (PROTOTYPES), which _capi.py applies on load
  bindings/fortran/gtstorage_c_api.inc           the same for module gtstorage: named constants,
                                                 bind(C) derived types (defaults from the *_INIT
                                                 macros) and the bind(C) interfaces <name>_c
  tests/fortran/abi_layout_gen.{inc,h}           the size and every field offset of every struct,
                                                 in Fortran (c_sizeof, c_loc) and in C (sizeof,
                                                 offsetof), for tests/fortran/test_abi.f90
  bindings/fortran/gtstorage_gen_*.inc,          the Fortran generics' specifics, one per element
  bindings/fortran/gtstorage_cfi_types.h         type (table FORTRAN_TYPES), and the C shim's table
  src/capi/enums.hpp                             the boundary's enum translations (table
                                                 CPP_ENUM_TRANSLATIONS)
  src/capi/struct_history*.hpp                   the size every versioned struct had in each
                                                 released version (table STRUCT_HISTORY), for the
                                                 boundary; the same table is rewritten into the
                                                 size table of gtstorage.h's conventions, and
  tests/abi/struct_sizes_gen.h                   with every struct's x86-64 size, for the test
                                                 abi.struct_sizes
  src/gtstorage.map                              the linker version script: the experimental
                                                 header's functions in GTSTORAGE_EXPERIMENTAL, the
                                                 rest in GTSTORAGE_1
  tests/abi/exported_functions.txt               every function with its tier, for the ABI
                                                 scripts (tests/abi/*.sh, update-abi-baseline.sh)

and, from the header of each optional component (include/gtstorage/gtstorage_mpi.h, which
includes gtstorage.h and uses its types; read from next to the header, else the repository's):

  bindings/python/gtstorage/_mpi_capi_generated.py   the component's constants, structs and
                                                     PROTOTYPES (gtstorage.mpi applies them to
                                                     libgtstorage_mpi)
  bindings/fortran/gtstorage_mpi_c_api.inc           the same for module gtstorage_mpi

The header is written in a regular style, and the parser accepts exactly that style:

  #define GTSTORAGE_X <integer expression>       (literals, GTSTORAGE_* names, INT64_MIN …,
                                                  casts to a typedef, + - * << >> | & ~ ( ))
  #define GTSTORAGE_X_INIT { … }                 initializer of the struct declared just before
                                                 (or of the struct named in its sizeof(...))
  typedef enum name { A = <expr>, … } name;      every value explicit
  typedef struct name { <field>; … } name;       fixed-width fields, pointers, arrays [N][M]
  typedef <scalar type> name;                    e.g. gtstorage_handle
  typedef <type> (*name)(<params>);              function pointer
  struct name;                                   opaque forward declaration
  GTSTORAGE_API <type> gtstorage_x(<params>);    exported function

  GTSTORAGE_API GTSTORAGE_DEPRECATED("…") <type> gtstorage_x(<params>);   a deprecated function
  GTSTORAGE_ENUM(<enum>) <name>                  a parameter taking one value of the enum (int32_t
                                                 in C++ and in the bindings: the same ABI)

plus the include guard, #include of standard headers, the GTSTORAGE_API, GTSTORAGE_DEPRECATED
and GTSTORAGE_ENUM definition blocks, the extern "C" block, and the include of the experimental header between
`#if defined(GTSTORAGE_EXPERIMENTAL)` and `#endif` (in gtstorage.h; the experimental header
includes "gtstorage.h"). Anything else stops the generator with "file:line: error: …", so a new
construct in the header is noticed, not silently dropped.

Usage:
  gen_bindings.py                                 rewrite the checked-in files
  gen_bindings.py --check                         generate into a temporary directory and exit 1,
                                                  naming each stale file, if the checked-in files
                                                  differ (CTest bindings.generated_up_to_date)
  gen_bindings.py --header H --output-dir D       read another header, write under D (same
                                                  relative paths as in the repository)
"""

import argparse
import ast
import difflib
import itertools
import os
import re
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
HEADER_REL = "include/gtstorage/gtstorage.h"
EXPERIMENTAL_NAME = "gtstorage_experimental.h"
PY_OUT = "bindings/python/gtstorage/_capi_generated.py"
F_OUT = "bindings/fortran/gtstorage_c_api.inc"
ABI_F_OUT = "tests/fortran/abi_layout_gen.inc"
ABI_C_OUT = "tests/fortran/abi_layout_gen.h"
BANNER = ("generated by tools/gen_bindings.py from include/gtstorage/gtstorage.h and\n"
          "gtstorage_experimental.h — do not edit.\n"
          "Regenerate with: python3 tools/gen_bindings.py")


def banner(h):
    """The do-not-edit banner, naming the header @p h was read from."""
    if not h.parent:
        return BANNER
    return BANNER.replace("include/gtstorage/gtstorage.h and\ngtstorage_experimental.h",
                          f"include/gtstorage/{os.path.basename(h.path)}")


# Optional components: (header name, its Python output or None, its Fortran output, Fortran
# module). libgtstorage_python has no Python output: Python never calls it through ctypes (it is
# the library that starts Python).
COMPONENTS = [("gtstorage_mpi.h", "bindings/python/gtstorage/_mpi_capi_generated.py",
               "bindings/fortran/gtstorage_mpi_c_api.inc", "gtstorage_mpi"),
              ("gtstorage_python.h", None, "bindings/fortran/gtstorage_python_c_api.inc",
               "gtstorage_python")]

PREFIX = "GTSTORAGE_"

# Fortran-only choices the header cannot express. A struct pointer parameter is a required
# `type(T), intent(in|inout)` dummy; where C allows NULL for "all defaults", Fortran needs
# `type(c_ptr), value` to pass c_null_ptr (an absent optional is not NULL for a bind(C) dummy
# of a derived type in every compiler). New functions get the regular mapping.
FORTRAN_NULLABLE_POINTERS = {("gtstorage_wrap_dlpack", "options")}
# Non-const pointers that are output arrays (dimension (*)) although no n<name> count follows
# them (their length is another parameter's value).
FORTRAN_OUTPUT_ARRAYS = {("gtstorage_decomp_local_extent", "out_offset"),
                         ("gtstorage_decomp_local_extent", "out_extent")}


class HeaderError(Exception):
    def __init__(self, path, line, message):
        super().__init__(f"{path}:{line}: error: {message}")


# ------------------------------------------------------------------------------------------------
# Types

INT_TYPES = {  # C name -> (bits, signed)
    "int8_t": (8, True), "int16_t": (16, True), "int32_t": (32, True), "int64_t": (64, True),
    "uint8_t": (8, False), "uint16_t": (16, False), "uint32_t": (32, False),
    "uint64_t": (64, False),
}
SCALARS = set(INT_TYPES) | {"int", "size_t", "double", "float", "char", "void"}
LIMIT_MACROS = {
    "INT8_MIN": -2**7, "INT8_MAX": 2**7 - 1, "INT16_MIN": -2**15, "INT16_MAX": 2**15 - 1,
    "INT32_MIN": -2**31, "INT32_MAX": 2**31 - 1, "INT64_MIN": -2**63, "INT64_MAX": 2**63 - 1,
    "UINT8_MAX": 2**8 - 1, "UINT16_MAX": 2**16 - 1, "UINT32_MAX": 2**32 - 1,
    "UINT64_MAX": 2**64 - 1,
}


class CType:
    """base: a scalar name, a typedef name, or "struct X"; const: of the pointee (or value);
    ptr: pointer depth; dims: array extents as written (ints or constant names); enum: the enum
    a GTSTORAGE_ENUM(e) parameter names (its base is then int32_t, what C++ and the bindings
    see: the same ABI)."""

    def __init__(self, base, const=False, ptr=0, dims=(), enum=None):
        self.base, self.const, self.ptr, self.dims = base, const, ptr, tuple(dims)
        self.enum = enum

    def c(self):
        s = ("const " if self.const else "") + self.base + (" " + "*" * self.ptr if self.ptr else "")
        return s + "".join(f"[{d}]" for d in self.dims)


class Header:
    def __init__(self, path):
        self.path = path
        self.constants = []    # (name, value, kind) kind: "int" | ("cast", typedef) ; value: int
        self.enums = []        # (name, [(member, value)])
        self.structs = []      # (name, [(field, CType, line)], line)
        self.scalar_typedefs = []  # (name, base)
        self.fn_typedefs = []  # (name, CType ret, [(param, CType)])
        self.opaque = []       # struct names
        self.functions = []    # (name, CType ret, [(param, CType)], line)
        self.initializers = {}  # struct name -> (macro name, [values])
        self.values = {}       # every integer constant by name (enum members included)
        self.deprecated = {}   # function -> deprecation message
        self.experimental = set()  # functions of the experimental header
        self.includes = []     # experimental headers to read after this one
        self.parent = None     # for a component header: the core header whose types it uses

    # lookups
    def struct(self, name):
        for s in self.structs:
            if s[0] == name:
                return s
        return self.parent.struct(name) if self.parent else None

    def typedef_kind(self, name):
        if any(n == name for n, _ in self.scalar_typedefs):
            return "scalar"
        if any(n == name for n, *_ in self.fn_typedefs):
            return "fn"
        if self.struct(name):
            return "struct"
        if any(n == name for n, _ in self.enums):
            return "enum"
        return self.parent.typedef_kind(name) if self.parent else None

    def scalar_base(self, name):
        for n, b in self.scalar_typedefs:
            if n == name:
                return b
        return self.parent.scalar_base(name) if self.parent else None


# ------------------------------------------------------------------------------------------------
# Lexing

TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+) |
    (?P<nl>\n) |
    (?P<str>"(?:[^"\\\n]|\\.)*") |
    (?P<num>0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*) |
    (?P<id>[A-Za-z_]\w*) |
    (?P<op><<|>>|[{}()\[\];,*=+\-|&~/<>.])
""", re.X)


def strip_comments(text, path):
    """Comments become blanks; newlines are kept, so line numbers stay right."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise HeaderError(path, text.count("\n", 0, i) + 1, "unterminated comment")
            out.append(re.sub(r"[^\n]", " ", text[i:j + 2]))
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text[i] == '"':
            m = re.compile(r'"(?:[^"\\\n]|\\.)*"').match(text, i)
            if not m:
                raise HeaderError(path, text.count("\n", 0, i) + 1, "unterminated string")
            out.append(m.group(0))
            i = m.end()
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def tokenize(text, path, first_line):
    """[(token, line)] of a code fragment starting at first_line."""
    toks, pos, line = [], 0, first_line
    while pos < len(text):
        m = TOKEN_RE.match(text, pos)
        if not m:
            raise HeaderError(path, line, f"unexpected character {text[pos]!r}")
        kind = m.lastgroup
        if kind == "nl":
            line += 1
        elif kind != "ws":
            toks.append((m.group(0), line))
        pos = m.end()
    return toks


# ------------------------------------------------------------------------------------------------
# Parsing

# Preprocessor lines allowed besides #define GTSTORAGE_* and #include <…>: the include guard,
# the GTSTORAGE_API block and the extern "C" block.
ALLOWED_CONDITIONALS = {
    "#if defined(_WIN32)", "#if defined(GTSTORAGE_BUILDING)", "#elif defined(__GNUC__)",
    "#else", "#endif", "#ifdef __cplusplus",
    # the GTSTORAGE_DEPRECATED block
    "#if defined(GTSTORAGE_NO_DEPRECATION_WARNINGS) || defined(GTSTORAGE_BUILDING)",
    "#elif defined(_MSC_VER)",
    # the experimental tier, on request
    "#if defined(GTSTORAGE_EXPERIMENTAL)",
    # the GTSTORAGE_ENUM block
    "#if defined(__cplusplus)",
}
EXPERIMENTAL_CONDITIONAL = "#if defined(GTSTORAGE_EXPERIMENTAL)"
DEPRECATED_DEFINE = "GTSTORAGE_DEPRECATED(msg)"
ENUM_DEFINE = "GTSTORAGE_ENUM(e)"


def experimental_path(path):
    """The experimental header next to @p path, else the repository's."""
    near = os.path.join(os.path.dirname(os.path.abspath(path)), EXPERIMENTAL_NAME)
    if os.path.exists(near):
        return near
    return os.path.join(ROOT, os.path.dirname(HEADER_REL), EXPERIMENTAL_NAME)


def component_path(path, name):
    """The component header @p name next to @p path, else the repository's."""
    near = os.path.join(os.path.dirname(os.path.abspath(path)), name)
    if os.path.exists(near):
        return near
    return os.path.join(ROOT, os.path.dirname(HEADER_REL), name)


def parse_component(path, core):
    """A component header: its own declarations only, with the core's types and constants
    known (it includes gtstorage.h)."""
    h = Header(path)
    h.parent = core
    h.values = dict(core.values)
    parse_header(path, h, component=True)
    if not h.functions:
        raise HeaderError(path, 1, "no GTSTORAGE_API function found")
    return h


def parse_header(path, h=None, experimental=False, component=False):
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    text = strip_comments(raw, path)
    lines = text.split("\n")
    first = h is None
    if h is None:
        h = Header(path)
    code = []          # (line number, text) of C declarations
    guard = None
    in_cplusplus = 0   # depth of #ifdef __cplusplus blocks
    depth_stack = []   # kinds of open conditionals
    i = 0
    while i < len(lines):
        lineno = i + 1
        line = lines[i]
        # join continuation lines
        while line.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line.rstrip()[:-1] + " " + lines[i]
        i += 1
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            directive = "#" + re.sub(r"\s+", " ", stripped[1:].strip())
            words = directive.split(" ", 2)
            if words[0] == "#ifndef" and guard is None and len(words) == 2:
                guard = words[1]
                depth_stack.append("guard")
            elif words[0] == "#include":
                if re.fullmatch(r"#include <[a-z0-9_]+\.h>", directive):
                    pass
                elif (directive == f'#include "{EXPERIMENTAL_NAME}"' and not experimental
                      and depth_stack and depth_stack[-1] == "experimental"):
                    h.includes.append(experimental_path(path))
                elif directive == '#include "gtstorage.h"' and (experimental or component):
                    pass  # the stable header, already read
                else:
                    raise HeaderError(path, lineno, f"unsupported include: {directive}")
            elif words[0] == "#define":
                # handled in document order with the declarations (casts need the typedefs)
                code.append((lineno, ("#define", words, guard, list(depth_stack))))
            elif directive in ALLOWED_CONDITIONALS:
                if directive == "#ifdef __cplusplus":
                    depth_stack.append("cplusplus")
                    in_cplusplus += 1
                elif directive == EXPERIMENTAL_CONDITIONAL:
                    depth_stack.append("experimental")
                elif directive.startswith("#if "):
                    depth_stack.append("api")
                elif directive == "#endif":
                    if not depth_stack:
                        raise HeaderError(path, lineno, "#endif without #if")
                    if depth_stack.pop() == "cplusplus":
                        in_cplusplus -= 1
                elif not depth_stack or depth_stack[-1] != "api":
                    raise HeaderError(path, lineno, f"{directive} outside the GTSTORAGE_API block")
            else:
                raise HeaderError(path, lineno, f"unsupported preprocessor line: {directive}")
            continue
        if in_cplusplus:
            if stripped not in ('extern "C" {', "}"):
                raise HeaderError(path, lineno, f"unexpected C++-only code: {stripped}")
            continue
        code.append((lineno, line))
    if depth_stack:
        raise HeaderError(path, len(lines), "unterminated #if block")

    toks = []
    for lineno, line in code:
        if isinstance(line, tuple):
            toks.append((line, lineno))
        else:
            toks.extend(tokenize(line, path, lineno))
    before = {f[0] for f in h.functions}
    parse_declarations(h, toks, path)
    resolve_initializers(h, path)
    if experimental:
        h.experimental |= {f[0] for f in h.functions} - before
    if first:
        for inc in h.includes:
            if not os.path.exists(inc):
                raise HeaderError(path, 1, f"{inc} not found")
            parse_header(inc, h, experimental=True)
        if not h.functions:
            raise HeaderError(path, 1, "no GTSTORAGE_API function found")
    return h


def parse_define(h, words, guard, depth_stack, path, lineno):
    name = words[1] if len(words) > 1 else ""
    body = words[2] if len(words) > 2 else ""
    if name in (DEPRECATED_DEFINE, ENUM_DEFINE):
        if not depth_stack or depth_stack[-1] != "api":
            raise HeaderError(path, lineno, f"{name} defined outside its #if block")
        return
    if "(" in name:
        raise HeaderError(path, lineno, f"function-like macro {name} is not supported")
    if name == guard and not body:
        return
    if name == "GTSTORAGE_API":
        if not depth_stack or depth_stack[-1] != "api":
            raise HeaderError(path, lineno, "GTSTORAGE_API defined outside its #if block")
        return
    if not name.startswith(PREFIX):
        raise HeaderError(path, lineno, f"macro {name} does not start with {PREFIX}")
    if not body:
        raise HeaderError(path, lineno, f"macro {name} has no value")
    toks = tokenize(body, path, lineno)
    if toks[0][0] == "{":
        h.initializers.setdefault("__pending__", []).append(
            (name, parse_braces(toks, 0, path)[0], lineno, len(h.structs)))
        return
    value, cast = eval_int(h, toks, path, lineno)
    h.constants.append((name, value, cast, lineno))
    h.values[name] = value


def eval_int(h, toks, path, lineno):
    """Value of an integer constant expression; the typedef it is cast to (or None)."""
    out, cast, i = [], None, 0
    while i < len(toks):
        t = toks[i][0]
        # a cast: ( typename )
        if (t == "(" and i + 2 < len(toks) and toks[i + 2][0] == ")"
                and (toks[i + 1][0] in INT_TYPES or h.scalar_base(toks[i + 1][0]))):
            cast = toks[i + 1][0]
            i += 3
            continue
        if re.fullmatch(r"0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*", t):
            out.append(str(int(t.rstrip("uUlL"), 0)))
        elif t in h.values:
            out.append(f"({h.values[t]})")
        elif t in LIMIT_MACROS:
            out.append(f"({LIMIT_MACROS[t]})")
        elif t in ("+", "-", "*", "(", ")", "<<", ">>", "|", "&", "~"):
            out.append(t)
        else:
            raise HeaderError(path, lineno, f"cannot evaluate {t!r} in an integer constant")
        i += 1
    expr = " ".join(out)
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise HeaderError(path, lineno, f"malformed integer expression: {expr}") from None
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Add, ast.Sub, ast.Mult,
               ast.LShift, ast.RShift, ast.BitOr, ast.BitAnd, ast.Invert, ast.USub, ast.UAdd)
    for node in ast.walk(tree):
        if not isinstance(node, allowed):
            raise HeaderError(path, lineno, f"unsupported integer expression: {expr}")
    return eval(compile(tree, path, "eval")), cast  # only literals and operators, checked above


def parse_braces(toks, i, path):
    """A brace initializer at toks[i]: a list of items (token strings or nested lists)."""
    assert toks[i][0] == "{"
    items, cur, i = [], [], i + 1
    while True:
        if i >= len(toks):
            raise HeaderError(path, toks[-1][1], "unterminated initializer")
        t = toks[i][0]
        if t == "{":
            sub, i = parse_braces(toks, i, path)
            cur.append(sub)
            continue
        if t in (",", "}"):
            if cur:
                items.append(cur[0] if len(cur) == 1 and isinstance(cur[0], list) else
                             " ".join(x for x in cur if isinstance(x, str)))
                if len(cur) > 1 and any(isinstance(x, list) for x in cur):
                    raise HeaderError(path, toks[i][1], "malformed initializer element")
            elif t == ",":
                raise HeaderError(path, toks[i][1], "empty initializer element")
            cur = []
            i += 1
            if t == "}":
                return items, i
            continue
        cur.append(t)
        i += 1


class Cursor:
    def __init__(self, toks, path):
        self.toks, self.i, self.path = toks, 0, path

    def peek(self, k=0):
        j = self.i + k
        return self.toks[j][0] if j < len(self.toks) else None

    def line(self):
        return self.toks[min(self.i, len(self.toks) - 1)][1]

    def take(self, expected=None):
        if self.i >= len(self.toks):
            raise HeaderError(self.path, self.toks[-1][1] if self.toks else 1,
                              "unexpected end of header")
        t = self.toks[self.i][0]
        if expected is not None and t != expected:
            raise HeaderError(self.path, self.line(), f"expected {expected!r}, found {t!r}")
        self.i += 1
        return t

    def ident(self):
        t = self.take()
        if not re.fullmatch(r"[A-Za-z_]\w*", t):
            raise HeaderError(self.path, self.toks[self.i - 1][1], f"expected a name, found {t!r}")
        return t

    def error(self, message):
        return HeaderError(self.path, self.line(), message)


def parse_type(h, cur, allow_void=True):
    """[const] base [*]… ; base is a scalar, a typedef or `struct X`."""
    const = False
    if cur.peek() == "const":
        cur.take()
        const = True
    t = cur.ident()
    if t == "GTSTORAGE_ENUM" and not const:
        cur.take("(")
        enum = cur.ident()
        cur.take(")")
        if h.typedef_kind(enum) != "enum":
            raise cur.error(f"GTSTORAGE_ENUM({enum}): not an enum declared before")
        if cur.peek() == "*":
            raise cur.error("GTSTORAGE_ENUM is for parameters passed by value")
        return CType("int32_t", enum=enum)
    if t == "struct":
        name = cur.ident()
        if name not in h.opaque and not h.struct(name):
            raise cur.error(f"unknown struct {name}")
        base = "struct " + name if name in h.opaque else name
    elif t in SCALARS:
        base = t
    elif h.typedef_kind(t):
        base = t
    else:
        raise cur.error(f"unknown type {t!r} (use a fixed-width integer type, or declare it first)")
    ptr = 0
    while cur.peek() == "*":
        cur.take()
        ptr += 1
    if cur.peek() == "const":
        raise cur.error("const pointers (T* const) are not supported")
    if base == "void" and ptr == 0 and not allow_void:
        raise cur.error("a value of type void")
    return CType(base, const, ptr)


def parse_dims(h, cur):
    dims = []
    while cur.peek() == "[":
        cur.take("[")
        d = cur.take()
        if re.fullmatch(r"\d+", d):
            dims.append(int(d))
        elif d in h.values:
            dims.append(d)
        else:
            raise cur.error(f"array extent {d!r} is not a literal or a known constant")
        cur.take("]")
    return dims


def parse_params(h, cur, fname):
    cur.take("(")
    params = []
    if cur.peek() == "void" and cur.peek(1) == ")":
        cur.take()
    while cur.peek() != ")":
        ctype = parse_type(h, cur)
        if ctype.base == "void" and ctype.ptr == 0:
            raise cur.error(f"{fname}: a parameter of type void")
        if cur.peek() == "(":
            raise cur.error(f"{fname}: function pointer parameters need a typedef")
        pname = cur.ident()
        if cur.peek() == "[":
            raise cur.error(f"{fname}: array parameter {pname}; write a pointer")
        if pname in [p for p, _ in params]:
            raise cur.error(f"{fname}: parameter {pname} appears twice")
        params.append((pname, ctype))
        if cur.peek() == ",":
            cur.take()
        elif cur.peek() != ")":
            raise cur.error(f"{fname}: expected ',' or ')', found {cur.peek()!r}")
    cur.take(")")
    return params


def parse_declarations(h, toks, path):
    cur = Cursor(toks, path)
    while cur.peek() is not None:
        line = cur.line()
        t = cur.peek()
        if isinstance(t, tuple):
            _, words, guard, depth_stack = t
            parse_define(h, words, guard, depth_stack, path, line)
            cur.i += 1
        elif t == "typedef":
            cur.take()
            kind = cur.peek()
            if kind == "enum":
                cur.take()
                name = cur.ident()
                cur.take("{")
                members = []
                while cur.peek() != "}":
                    mline = cur.line()
                    member = cur.ident()
                    if not member.startswith(PREFIX):
                        raise HeaderError(path, mline, f"enumerator {member} lacks the prefix")
                    if cur.peek() != "=":
                        raise HeaderError(path, mline, f"enumerator {member} has no explicit "
                                                       "value (the ABI fixes every value)")
                    cur.take("=")
                    expr = []
                    while cur.peek() not in (",", "}"):
                        expr.append(cur.toks[cur.i])
                        cur.take()
                    value, _ = eval_int(h, expr, path, mline)
                    if not -2**31 <= value < 2**31:
                        raise HeaderError(path, mline, f"{member} = {value} does not fit an int")
                    members.append((member, value))
                    h.values[member] = value
                    if cur.peek() == ",":
                        cur.take()
                cur.take("}")
                if cur.ident() != name:
                    raise HeaderError(path, line, f"typedef enum {name} … must be named {name}")
                cur.take(";")
                h.enums.append((name, members))
            elif kind == "struct" and cur.peek(2) == "{":
                cur.take()
                name = cur.ident()
                cur.take("{")
                fields = []
                while cur.peek() != "}":
                    fline = cur.line()
                    ctype = parse_type(h, cur, allow_void=False)
                    if cur.peek() == "(":
                        raise HeaderError(path, fline, "function pointer fields need a typedef")
                    fname = cur.ident()
                    if cur.peek() == ":":
                        raise HeaderError(path, fline, "bit fields are not supported")
                    ctype.dims = tuple(parse_dims(h, cur))
                    if cur.peek() == ",":
                        raise HeaderError(path, fline, "declare one field per declaration")
                    cur.take(";")
                    if fname in [f for f, *_ in fields]:
                        raise HeaderError(path, fline, f"field {fname} appears twice")
                    if ctype.base == "struct " + name or (ctype.base == name and not ctype.ptr):
                        raise HeaderError(path, fline, "self-referencing struct")
                    fields.append((fname, ctype, fline))
                cur.take("}")
                if cur.ident() != name:
                    raise HeaderError(path, line, f"typedef struct {name} … must be named {name}")
                cur.take(";")
                if not fields:
                    raise HeaderError(path, line, f"struct {name} has no fields")
                h.structs.append((name, fields, line))
            elif cur.peek(1) == "(" or cur.peek(2) == "(" or (
                    cur.peek(1) == "*" and cur.peek(2) == "("):
                ret = parse_type(h, cur)
                cur.take("(")
                cur.take("*")
                name = cur.ident()
                cur.take(")")
                params = parse_params(h, cur, name)
                cur.take(";")
                h.fn_typedefs.append((name, ret, params))
            else:
                base = parse_type(h, cur)
                if base.ptr or base.const or base.base not in INT_TYPES:
                    raise HeaderError(path, line, "only typedefs of fixed-width integer types, "
                                                  "enums, structs and function pointers are "
                                                  "supported")
                name = cur.ident()
                cur.take(";")
                h.scalar_typedefs.append((name, base.base))
        elif t == "struct" and cur.peek(2) == ";":
            cur.take()
            h.opaque.append(cur.ident())
            cur.take(";")
        elif t == "GTSTORAGE_API":
            cur.take()
            deprecated = None
            if cur.peek() == "GTSTORAGE_DEPRECATED":
                cur.take()
                cur.take("(")
                msg = cur.peek()
                if not (isinstance(msg, str) and msg.startswith('"')):
                    raise HeaderError(path, line, "GTSTORAGE_DEPRECATED needs a string message")
                cur.take()
                cur.take(")")
                deprecated = ast.literal_eval(msg)
            ret = parse_type(h, cur)
            name = cur.ident()
            if not name.startswith("gtstorage_"):
                raise HeaderError(path, line, f"exported function {name} lacks the prefix")
            params = parse_params(h, cur, name)
            cur.take(";")
            if any(f[0] == name for f in h.functions):
                raise HeaderError(path, line, f"function {name} declared twice")
            h.functions.append((name, ret, params, line))
            if deprecated is not None:
                h.deprecated[name] = deprecated
        else:
            raise HeaderError(path, line, f"unsupported declaration starting with {t!r}")


def resolve_initializers(h, path):
    """Attaches each brace-initializer macro to its struct: the one in its leading sizeof(...),
    else the struct declared just before it; the number of elements must match the fields."""
    for name, items, lineno, nstructs in h.initializers.pop("__pending__", []):
        target = None
        first = items[0] if items else None
        m = re.fullmatch(r"sizeof \( (?:struct )?(\w+) \)", first) if isinstance(first, str) else None
        if m:
            target = h.struct(m.group(1))
            if not target:
                raise HeaderError(path, lineno, f"{name}: sizeof of unknown struct {m.group(1)}")
        elif nstructs:
            target = h.structs[nstructs - 1]
        if not target:
            raise HeaderError(path, lineno, f"initializer {name} belongs to no struct")
        sname, fields, _ = target
        if len(items) != len(fields):
            raise HeaderError(path, lineno, f"initializer {name} has {len(items)} elements, "
                                            f"struct {sname} has {len(fields)} fields")
        if sname in h.initializers:
            raise HeaderError(path, lineno, f"struct {sname} has two initializers "
                                            f"({h.initializers[sname][0]} and {name})")
        values = []
        for (fname, ctype, _), item in zip(fields, items):
            values.append(init_value(h, sname, fname, ctype, item, path, lineno))
        h.initializers[sname] = (name, values)


def init_value(h, sname, fname, ctype, item, path, lineno):
    """("sizeof"|"null"|"int"|"array", value) of one initializer element."""
    where = f"{sname}.{fname}"
    if isinstance(item, list):
        if not ctype.dims:
            raise HeaderError(path, lineno, f"{where}: braces for a field that is not an array")
        if len(ctype.dims) > 1:
            def flat(x):
                return [z for y in x for z in flat(y)] if isinstance(x, list) else [x]
            if all(x == "0" for x in flat(item)):
                return ("int", 0, None)  # {{0}}: all zero
            raise HeaderError(path, lineno, f"{where}: initializers of 2-d arrays other than "
                                            "all zero ({{0}}) are not supported")
        vals = [init_value(h, sname, fname, CType(ctype.base, ctype.const, ctype.ptr), x, path,
                           lineno) for x in item]
        if len(vals) == 1 and vals[0] == ("int", 0, None):
            return ("int", 0, None)  # {0}: all zero
        if len(vals) != (ctype.dims[0] if isinstance(ctype.dims[0], int) else
                         h.values[ctype.dims[0]]):
            raise HeaderError(path, lineno, f"{where}: {len(vals)} values for {ctype.c()}")
        return ("array", vals, None)
    if re.fullmatch(r"sizeof \( (?:struct )?\w+ \)", item):
        if fname != "struct_size":
            raise HeaderError(path, lineno, f"{where}: sizeof(...) outside struct_size")
        return ("sizeof", 0, None)
    if item == "NULL":
        if not ctype.ptr and h.typedef_kind(ctype.base) != "fn":
            raise HeaderError(path, lineno, f"{where}: NULL for a field that is not a pointer")
        return ("null", 0, None)
    if ctype.ptr or ctype.dims:
        raise HeaderError(path, lineno, f"{where}: {item!r} for a pointer or array field")
    toks = tokenize(item, path, lineno)
    value, _ = eval_int(h, toks, path, lineno)
    symbol = item if re.fullmatch(PREFIX + r"\w+", item) else None
    return ("int", value, symbol)


# ------------------------------------------------------------------------------------------------
# Python output

def py_name(c_name):
    if not c_name.startswith(PREFIX):
        raise ValueError(c_name)
    return c_name[len(PREFIX):]


def py_class(struct_name):
    return "".join(w.capitalize() for w in struct_name[len("gtstorage_"):].split("_"))


def py_typedef(name, h):
    kind = h.typedef_kind(name)
    short = name[len("gtstorage_"):] if name.startswith("gtstorage_") else name
    if kind == "scalar":
        return short + "_t"
    if kind == "fn":
        return short.upper()
    if kind == "struct":
        return py_class(name)
    if kind == "enum":
        return "ctypes.c_int"
    raise ValueError(name)


PY_SCALARS = {"int8_t": "ctypes.c_int8", "int16_t": "ctypes.c_int16", "int32_t": "ctypes.c_int32",
              "int64_t": "ctypes.c_int64", "uint8_t": "ctypes.c_uint8",
              "uint16_t": "ctypes.c_uint16", "uint32_t": "ctypes.c_uint32",
              "uint64_t": "ctypes.c_uint64", "int": "ctypes.c_int", "size_t": "ctypes.c_size_t",
              "double": "ctypes.c_double", "float": "ctypes.c_float", "char": "ctypes.c_char"}


def py_type(h, ct):
    if ct.ptr == 0:
        if ct.base == "void":
            t = "None"
        elif ct.base in PY_SCALARS:
            t = PY_SCALARS[ct.base]
        else:
            t = py_typedef(ct.base, h)
    else:
        opaque = ct.base == "void" or ct.base.startswith("struct ")
        if ct.base == "char":
            t, depth = "ctypes.c_char_p", ct.ptr - 1
        elif opaque:
            t, depth = "ctypes.c_void_p", ct.ptr - 1
        else:
            t, depth = py_type(h, CType(ct.base)), ct.ptr
        for _ in range(depth):
            t = f"ctypes.POINTER({t})"
    for d in reversed(ct.dims):
        t = f"({t} * {d if isinstance(d, int) else py_name(d)})"
    if ct.dims:
        t = t[1:-1]
    return t


# The struct section of the generated modules: one _fields_ helper (in the core's module, imported
# by a component's) expands the declarations of each struct, consecutive fields of one type
# grouped as in C's `int64_t h2d_count, h2d_bytes;`.
PY_STRUCTS_CORE = '''
# Structs (field order and types exactly as in the header): each lists its declarations, the
# consecutive fields of one type together ("h2d_count h2d_bytes", ctypes.c_int64).


def _fields(*declarations):
    """The ctypes _fields_ of declarations ("name name …", ctypes type), in header order."""
    return [(name, ctype) for names, ctype in declarations for name in names.split()]
'''
PY_STRUCTS_COMPONENT = """
# Structs (field order and types exactly as in the header), declared as in the core's module.
"""


def py_declaration(names, ctype):
    """("name name …", ctype): one declaration of a struct's _fields_ call; a names string too
    long for one line goes on in the next ones (implicit concatenation)."""
    text = " ".join(names)
    if 8 + len(text) + len(ctype) + 7 <= 100:
        return f'("{text}", {ctype})'
    chunks = [names[0]]
    for name in names[1:]:
        if len(chunks[-1]) + 1 + len(name) > 72:
            chunks.append(name)
        else:
            chunks[-1] += " " + name
    quoted = ' "\n         "'.join(chunks)
    return f'("{quoted}", {ctype})'


def gen_python(h):
    header = os.path.basename(h.path) if h.parent else "gtstorage.h"
    out = ["# " + banner(h).replace("\n", "\n# ") + "\n",
           f'"""The C ABI of include/gtstorage/{header} as ctypes data (generated)."""\n\n',
           "import ctypes\n"]
    if h.parent:
        out.append("\nfrom ._capi_generated import *  # noqa: F401,F403  (the core's types)\n"
                   "from ._capi_generated import _fields  # (how a struct lists its fields)\n")
    names = []

    out.append("\n# Constants (#define) and enumerations, without the GTSTORAGE_ prefix.\n")
    for name, value, _, _ in h.constants:
        out.append(f"{py_name(name)} = {value}\n")
        names.append(py_name(name))
    enum_map = []
    for ename, members in h.enums:
        out.append(f"\n# {ename}\n")
        for m, v in members:
            out.append(f"{py_name(m)} = {v}\n")
            names.append(py_name(m))
        enum_map.append((ename, members))

    out.append("\n# Typedefs.\n")
    for name, base in h.scalar_typedefs:
        out.append(f"{py_typedef(name, h)} = {PY_SCALARS[base]}  # {name}\n")
        names.append(py_typedef(name, h))

    # Function pointer typedefs go before the first struct that uses them; emit them all first
    # unless they use structs (then after the structs).
    def fn_typedef(name, ret, params):
        args = ", ".join([py_type(h, ret)] + [py_type(h, ct) for _, ct in params])
        return f"{py_typedef(name, h)} = ctypes.CFUNCTYPE({args})  # {name}\n"

    for name, ret, params in h.fn_typedefs:
        out.append(fn_typedef(name, ret, params))
        names.append(py_typedef(name, h))

    out.append(PY_STRUCTS_CORE if not h.parent else PY_STRUCTS_COMPONENT)
    for sname, fields, _ in h.structs:
        cls = py_class(sname)
        names.append(cls)
        out.append(f'\n\nclass {cls}(ctypes.Structure):\n    """{sname}."""\n\n'
                   "    _fields_ = _fields(\n")
        groups = itertools.groupby(fields, key=lambda f: py_type(h, f[1]))
        declarations = [py_declaration([f[0] for f in group], ctype) for ctype, group in groups]
        out.append("        " + wrap_list(declarations, 8, 99) + ",\n    )\n")

    out.append("\n\n#: C struct name -> ctypes class.\nSTRUCTS = {\n")
    for sname, _, _ in h.structs:
        out.append(f'    "{sname}": {py_class(sname)},\n')
    out.append("}\n")

    out.append("\n#: C enum name -> {C enumerator name: value}.\nENUMS = {\n")
    for ename, members in enum_map:
        out.append(f'    "{ename}": {{\n')
        for m, v in members:
            out.append(f'        "{m}": {v},\n')
        out.append("    },\n")
    out.append("}\n")

    out.append("\n#: Exported function -> (restype, [argtypes]), in header order.\nPROTOTYPES = {\n")
    for fname, ret, params, _ in h.functions:
        args = ", ".join(py_type(h, ct) for _, ct in params)
        entry = f'    "{fname}": ({py_type(h, ret)}, [{args}]),\n'
        if len(entry) > 100:
            entry = (f'    "{fname}": (\n        {py_type(h, ret)},\n        [' +
                     wrap_list([py_type(h, ct) for _, ct in params], 9, 100) + "],\n    ),\n")
        out.append(entry)
    out.append("}\n")

    out.append("\n#: Deprecated functions -> the message of their GTSTORAGE_DEPRECATED.\n"
               "DEPRECATED = {\n")
    for fname, *_ in h.functions:
        if fname in h.deprecated:
            out.append(f'    "{fname}": {h.deprecated[fname]!r},\n')
    out.append("}\n")
    out.append("\n#: Functions of the experimental header (no ABI promise).\n")
    experimental = [fname for fname, *_ in h.functions if fname in h.experimental]
    if experimental:  # ({} would be an empty dict, not a set)
        out.append("EXPERIMENTAL = {\n" + "".join(f'    "{f}",\n' for f in experimental) + "}\n")
    else:
        out.append("EXPERIMENTAL: set[str] = set()\n")

    names += ["STRUCTS", "ENUMS", "PROTOTYPES", "DEPRECATED", "EXPERIMENTAL"]
    out.append("\n__all__ = [\n" + "".join(f'    "{n}",\n' for n in names) + "]\n")
    return "".join(out)


def wrap_list(items, indent, width):
    lines, cur = [], ""
    for k, item in enumerate(items):
        piece = item + (", " if k + 1 < len(items) else "")
        if cur and indent + len(cur) + len(piece.rstrip()) > width:
            lines.append(cur.rstrip())
            cur = ""
        cur += piece
    lines.append(cur)
    return ("\n" + " " * indent).join(lines)


# ------------------------------------------------------------------------------------------------
# Fortran output

F_INT = {"int8_t": "c_int8_t", "int16_t": "c_int16_t", "int32_t": "c_int32_t",
         "int64_t": "c_int64_t", "uint8_t": "c_int8_t", "uint16_t": "c_int16_t",
         "uint32_t": "c_int32_t", "uint64_t": "c_int64_t", "int": "c_int", "size_t": "c_size_t"}
F_REAL = {"double": "c_double", "float": "c_float"}


def f_kind_decl(h, base):
    """(declaration type, kind name to import, C comment or "") of a non-pointer base type."""
    if base in h.opaque or base.startswith("struct "):
        raise ValueError(base)
    b = h.scalar_base(base) or base
    if h.typedef_kind(base) == "enum":
        return "integer(c_int)", "c_int", ""
    if b in F_INT:
        note = base if base != b else (b if b.startswith("uint") else "")
        return f"integer({F_INT[b]})", F_INT[b], note
    if b in F_REAL:
        return f"real({F_REAL[b]})", F_REAL[b], ""
    if b == "char":
        return "character(kind=c_char)", "c_char", ""
    if h.typedef_kind(base) == "struct":
        return f"type({base})", base, ""
    if h.typedef_kind(base) == "fn":
        return "type(c_funptr)", "c_funptr", base
    raise ValueError(base)


def f_dims(dims):
    return ", ".join(str(d) for d in reversed(dims))


def f_default(h, ct, value):
    """Default initialization of a derived-type component."""
    kind, v, symbol = value
    if ct.ptr:
        return "c_null_ptr"
    decl, _, _ = f_kind_decl(h, ct.base)
    if decl == "type(c_funptr)":
        return "c_null_funptr"
    if decl.startswith("character"):
        return "c_null_char"
    if decl.startswith("type("):
        raise ValueError("struct-valued field default")
    if kind == "array":
        return "[" + ", ".join(f_default(h, CType(ct.base), x) for x in v) + "]"
    if decl.startswith("real"):
        return f"{float(v)!r}_{decl[5:-1]}"
    return symbol if symbol else str(v)


def f_int_constant(name, value, kind):
    if kind == "c_int64_t" and value == -2**63:
        return f"{name} = -huge(0_c_int64_t) - 1_c_int64_t"
    return f"{name} = {value}"


def f_wrap(text, indent, width=100):
    """Breaks a long line at ', ' with Fortran continuation."""
    if len(text) <= width:
        return text + "\n"
    out, line = [], text
    while len(line) > width:
        cut = line.rfind(", ", 0, width - 2)
        if cut <= indent + 10:
            break
        out.append(line[:cut + 1] + " &")
        line = " " * (indent + 2) + line[cut + 2:]
    out.append(line)
    return "\n".join(out) + "\n"


def f_param(h, fname, pname, ct, params, index):
    """(declaration line, kinds/types to import) of one dummy argument of a C interface."""
    nxt = params[index + 1][0] if index + 1 < len(params) else None
    is_array = nxt == "n" + pname or (fname, pname) in FORTRAN_OUTPUT_ARRAYS
    c_note = ct.c()
    if ct.ptr == 0:
        decl, imp, note = f_kind_decl(h, ct.base)
        if decl.startswith("type(") and decl != "type(c_funptr)":
            raise ValueError(f"{fname}: struct {pname} passed by value")
        return f"{decl}, value :: {pname}" + (f"  !< {note}" if note else ""), {imp}
    opaque = ct.base == "void" or ct.base.startswith("struct ")
    if (fname, pname) in FORTRAN_NULLABLE_POINTERS:
        return f"type(c_ptr), value :: {pname}  !< {c_note}, may be C NULL", {"c_ptr"}
    if ct.ptr >= 2:
        return f"type(c_ptr), intent(inout) :: {pname}  !< {c_note}", {"c_ptr"}
    if opaque:
        note = "" if ct.base == "void" else f"  !< {c_note}"
        return f"type(c_ptr), value :: {pname}{note}", {"c_ptr"}
    intent = "in" if ct.const else "inout"
    decl, imp, note = f_kind_decl(h, ct.base)
    if decl == "type(c_funptr)":
        return f"type(c_ptr), value :: {pname}  !< {c_note}", {"c_ptr"}
    if ct.base == "char":
        return (f"character(kind=c_char), intent({intent}) :: {pname}(*)" +
                ("  !< NUL-terminated" if ct.const else "")), {"c_char"}
    if decl.startswith("type("):
        dim = "(*)" if is_array else ""
    else:
        dim = "(*)" if (ct.const or is_array) else ""
    return (f"{decl}, intent({intent}) :: {pname}{dim}" + (f"  !< {note} *" if note else "")), \
        {imp}


def f_result(h, ret, params):
    names = {p for p, _ in params}
    if ret.ptr:
        rname, decl, imp = "p", "type(c_ptr)", {"c_ptr"}
    else:
        d, i, note = f_kind_decl(h, ret.base)
        rname = "status" if ret.base == "int" else "v"
        decl, imp = d + (f"  !< {note}" if note else ""), {i}
    for candidate in (rname, "res", "result_value"):
        if candidate not in names:
            return candidate, decl, imp
    raise ValueError("no result name")


def gen_fortran(h, module="gtstorage", source="bindings/fortran/gtstorage.f90"):
    out = ["! " + banner(h).replace("\n", "\n! ") + "\n",
           f"! Included in the specification part of module {module} ({source}),\n"
           "! which uses iso_c_binding. Unsigned C integers are the signed Fortran integers of the\n"
           "! same size (the same bits).\n"]

    out.append("\n  ! Kinds of the integer typedefs.\n")
    for name, base in h.scalar_typedefs:
        out.append(f"  integer, parameter, public :: {name}_kind = {F_INT[base]}  !< {base}\n")

    out.append("\n  ! Constants (#define).\n")
    for name, value, cast, _ in h.constants:
        if cast and h.scalar_base(cast):
            kind = f"{cast}_kind"
        elif -2**31 <= value < 2**31:
            kind = "c_int"
        else:
            kind = "c_int64_t"
        out.append(f"  integer({kind}), parameter, public :: {f_int_constant(name, value, kind)}\n")
    for ename, members in h.enums:
        out.append(f"  ! {ename}\n")
        for m, v in members:
            out.append(f"  integer(c_int), parameter, public :: {m} = {v}\n")

    out.append("\n  ! Structs. Defaults are those of the C *_INIT initializers (zero without one), except\n"
               "  ! struct_size, which a type cannot take from c_sizeof of itself: the Fortran layer\n"
               "  ! sets it; raw callers set it to c_sizeof(x) or call the matching *_init_c.\n"
               "  ! C arrays [n][m] are (m, n) here.\n")
    for sname, fields, _ in h.structs:
        init = h.initializers.get(sname)
        out.append(f"\n  !> C {sname}" + (f" (defaults of {init[0]})" if init else "") + ".\n")
        out.append(f"  type, bind(C), public :: {sname}\n")
        for k, (fname, ct, _) in enumerate(fields):
            value = init[1][k] if init else ("int", 0, None)
            if ct.ptr:
                decl, note = "type(c_ptr)", ("" if ct.c() == "void *" else ct.c())
            else:
                decl, _, note = f_kind_decl(h, ct.base)
            dims = f"({f_dims(ct.dims)})" if ct.dims else ""
            line = f"    {decl} :: {fname}{dims} = {f_default(h, ct, value)}"
            if note:
                line += f"  !< {note}"
            out.append(line + "\n")
        out.append(f"  end type {sname}\n")

    if h.fn_typedefs:
        out.append("\n  ! Function pointer types: pass c_funloc of a procedure with this interface.\n")
        out.append("  abstract interface\n")
        for name, ret, params in h.fn_typedefs:
            out.extend(f_procedure(h, name, None, ret, params))
        out.append("  end interface\n")
        out.append(f_wrap("  public :: " + ", ".join(n for n, *_ in h.fn_typedefs), 2))

    out.append("\n  ! The C functions, one bind(C) interface each, named <C name>_c. Output arguments\n"
               "  ! are intent(inout), not intent(out): on failure the C functions leave them\n"
               "  ! unchanged, and with intent(out) the compiler may drop the caller's initialization.\n")
    out.append(f_wrap("  public :: " + ", ".join(f"{n}_c" for n, *_ in h.functions), 2, 100))
    out.append("  interface\n")
    for name, ret, params, _ in h.functions:
        if name in h.experimental:
            out.append("    ! experimental (gtstorage_experimental.h: no ABI promise)\n")
        if name in h.deprecated:
            out.append(f"    ! deprecated: {h.deprecated[name]}\n")
        out.extend(f_procedure(h, name + "_c", name, ret, params))
    out.append("  end interface\n")
    return "".join(out)


def f_procedure(h, fname, label, ret, params):
    decls, imports = [], set()
    for k, (pname, ct) in enumerate(params):
        d, imp = f_param(h, label or fname, pname, ct, params, k)
        decls.append(d)
        imports |= imp
    args = ", ".join(p for p, _ in params)
    bind = f'bind(C, name="{label}")' if label else "bind(C)"
    is_sub = ret.ptr == 0 and ret.base == "void"
    if is_sub:
        head = f"    subroutine {fname}({args}) &\n        {bind}\n"
        tail = f"    end subroutine {fname}\n"
    else:
        rname, rdecl, rimp = f_result(h, ret, params)
        imports |= rimp
        head = f"    function {fname}({args}) &\n        {bind} result({rname})\n"
        decls.append(f"{rdecl.split('  !<')[0]} :: {rname}" +
                     (f"  !<{rdecl.split('  !<')[1]}" if "  !<" in rdecl else ""))
        tail = f"    end function {fname}\n"
    kw = "subroutine" if is_sub else "function"
    lines = [f_wrap(f"    {kw} {fname}({args}) &", 4), head.split("\n")[1] + "\n"]
    if imports:
        lines.append(f_wrap("      import :: " + ", ".join(sorted(imports)), 6))
    for d in decls:
        lines.append("      " + d + "\n")
    lines.append(tail)
    lines.append("\n")
    return lines


# ------------------------------------------------------------------------------------------------
# Driver

def gen_abi_fortran(h):
    out = ["! " + BANNER.replace("\n", "\n! ") + "\n",
           "! Included after CONTAINS in tests/fortran/test_abi.f90: the size and every field offset of\n"
           "! every bind(C) type, compared with the C compiler's (abi_layout_gen.h, helpers.c).\n\n"]
    out.append("  subroutine check_all_layouts()\n")
    for k in range(len(h.structs)):
        out.append(f"    call layout_{k + 1}()\n")
    out.append("  end subroutine check_all_layouts\n")
    for k, (sname, fields, _) in enumerate(h.structs):
        out.append(f"\n  subroutine layout_{k + 1}()\n")
        out.append(f"    type({sname}), target :: x\n")
        out.append(f'    call same_size({k + 1}, "{sname}", c_sizeof(x))\n')
        for j, (fname, _, _) in enumerate(fields):
            out.append(f_wrap(f'    call same_offset({k + 1}, {j + 1}, "{sname}%{fname}", '
                              f"off(c_loc(x), c_loc(x%{fname})))", 4))
        out.append(f"  end subroutine layout_{k + 1}\n")
    return "".join(out)


def gen_abi_c(h):
    out = ["/* " + BANNER.replace("\n", "\n * ") + " */\n",
           "/* Included by tests/fortran/helpers.c: sizes and field offsets of every struct of the\n"
           " * header, in the order of abi_layout_gen.inc (index - 1). */\n"
           "#include <stddef.h>\n#include <stdint.h>\n\n"]
    out.append(f"enum {{ tfh_abi_nstructs = {len(h.structs)} }};\n\n")
    out.append("static const int64_t tfh_abi_sizes[] = {\n")
    for sname, _, _ in h.structs:
        out.append(f"    (int64_t)sizeof({sname}),\n")
    out.append("};\n")
    for k, (sname, fields, _) in enumerate(h.structs):
        out.append(f"\nstatic const int64_t tfh_abi_offsets_{k + 1}[] = {{\n")
        for fname, _, _ in fields:
            out.append(f"    (int64_t)offsetof({sname}, {fname}),\n")
        out.append("};\n")
    out.append("\nstatic const int64_t* const tfh_abi_offsets[] = {\n")
    for k in range(len(h.structs)):
        out.append(f"    tfh_abi_offsets_{k + 1},\n")
    out.append("};\n\nstatic const int32_t tfh_abi_nfields[] = {\n")
    for _, fields, _ in h.structs:
        out.append(f"    {len(fields)},\n")
    out.append("};\n")
    return "".join(out)


# ------------------------------------------------------------------------------------------------
# C++: the boundary's enum translations (src/capi/enums.hpp)

CPP_ENUMS_OUT = "src/capi/enums.hpp"

# What each public enum means below the ABI: (the translation's name, header enum, the parameter a refused
# value is reported as, internal type, {accepted member: internal enumerator}, whether the
# boundary also translates back with to_c(), which gives the first member of a value in header
# order). A member the table leaves out is refused, with the accepted ones listed from the header.
# (gtstorage_sync_op is not translated but carried out: capi.cpp maps each op onto a verb of the
# buffer set.)
CPP_ENUM_TRANSLATIONS = [
    ("init_of", "gtstorage_init", "init", "init_kind",
     {"GTSTORAGE_INIT_UNINITIALIZED": "uninitialized", "GTSTORAGE_INIT_ZEROS": "zeros",
      "GTSTORAGE_INIT_ONES": "ones", "GTSTORAGE_INIT_VALUE": "value",
      "GTSTORAGE_INIT_COPY": "copy"}, False),
    ("device_choice_of", "gtstorage_device", "device", "device_choice",
     {"GTSTORAGE_DEVICE_DEFAULT": "preset", "GTSTORAGE_DEVICE_CPU": "cpu",
      "GTSTORAGE_DEVICE_GPU": "gpu"}, False),
    # DEFAULT and NONE both mean "no host mirror" (the default of device presets).
    ("managed_of", "gtstorage_managed", "managed", "managed_kind",
     {"GTSTORAGE_MANAGED_DEFAULT": "none", "GTSTORAGE_MANAGED_NONE": "none",
      "GTSTORAGE_MANAGED_MIRROR": "mirror", "GTSTORAGE_MANAGED_UNIFIED": "unified"}, False),
    ("pitch_padding_of", "gtstorage_pitch_padding", "pitch_padding", "pitch_padding",
     {"GTSTORAGE_PITCH_PADDING_NONE": "none",
      "GTSTORAGE_PITCH_PADDING_AVOID_ALIASING": "avoid_aliasing"}, False),
    ("host_memory_of", "gtstorage_host_memory", "host_memory", "host_memory_kind",
     {"GTSTORAGE_HOST_PAGEABLE": "pageable", "GTSTORAGE_HOST_PINNED": "pinned"}, False),
    ("side_of", "gtstorage_side", "side", "side",
     {"GTSTORAGE_SIDE_HOST": "host", "GTSTORAGE_SIDE_DEVICE": "device"}, True),
    ("sync_state_of", "gtstorage_sync_state", "sync_state", "sync_state",
     {"GTSTORAGE_SYNC_CLEAN": "clean", "GTSTORAGE_SYNC_HOST_DIRTY": "host_dirty",
      "GTSTORAGE_SYNC_DEVICE_DIRTY": "device_dirty"}, True),
    ("alignment_unit_of", "gtstorage_alignment_unit", "alignment_unit", "alignment_unit",
     {"GTSTORAGE_ALIGN_ELEMENTS": "elements", "GTSTORAGE_ALIGN_BYTES": "bytes"}, True),
    # A preset's device is CPU or GPU; DEFAULT (the preset's own) means nothing there.
    ("device_kind_of", "gtstorage_device", "device", "device_kind",
     {"GTSTORAGE_DEVICE_CPU": "cpu", "GTSTORAGE_DEVICE_GPU": "gpu"}, True),
    ("layout_rule_of", "gtstorage_layout_rule", "rule", "layout_rule",
     {"GTSTORAGE_RULE_BY_DIMS": "by_dims", "GTSTORAGE_RULE_C_ORDER": "c_order",
      "GTSTORAGE_RULE_FORTRAN_ORDER": "fortran_order"}, True),
]

CPP_ENUMS_PREAMBLE = """\
//
// The public enum values of gtstorage.h, translated into the internal vocabularies of the
// layers below (and back), from the table CPP_ENUM_TRANSLATIONS of tools/gen_bindings.py. This
// file and the C entry points are the only places that know the ABI's numbers: storage, layout
// and interop work with their own enums. A refused value is reported with the parameter's name
// and the accepted values as the header numbers them.
#pragma once

#include <cstdint>

#include "capi/enum_translation.hpp"
#include "common/limits.hpp"
#include "gtstorage/gtstorage.h"
#include "layout/allocation_plan.hpp"
#include "layout/preset.hpp"
#include "storage/buffer_set.hpp"
#include "storage/storage.hpp"

namespace gts::capi {

static_assert(max_ndim == GTSTORAGE_MAX_NDIM, "the layers' max_ndim is the header's");

// The translations (capi/enum_translation.hpp), one a line: {the parameter a refused value is
// reported as, the accepted values as the refusal lists them, {{header value, internal
// enumerator}, ...} in header order}.
"""


def gen_cpp_enums(h):
    """src/capi/enums.hpp: one enum_translation table per row of CPP_ENUM_TRANSLATIONS."""
    enums = dict(h.enums)
    out = ["".join(f"// {line}".rstrip() + "\n" for line in banner(h).splitlines()),
           CPP_ENUMS_PREAMBLE]
    to_c = []
    for fn, enum, param, ctype, table, back in CPP_ENUM_TRANSLATIONS:
        if enum not in enums:
            raise KeyError(f"CPP_ENUM_TRANSLATIONS: {enum} is not an enum of the header")
        members = [(m, v) for m, v in enums[enum]]
        unknown = set(table) - {m for m, _ in members}
        if unknown:
            raise KeyError(f"CPP_ENUM_TRANSLATIONS: {sorted(unknown)} not members of {enum}")
        common = os.path.commonprefix([m for m, _ in members])
        common = common[:common.rfind("_") + 1]
        accepted = [(m, v) for m, v in members if m in table]
        listed = ", ".join(f"{v} {m[len(common):].lower()}" for m, v in accepted)
        pairs = ", ".join(f"{{{m}, {ctype}::{table[m]}}}" for m, _ in accepted)
        out.append(f"inline constexpr enum_translation<{ctype}, {len(accepted)}> {fn}{{"
                   f'"{param}", "a {enum} ({listed})", {{{{{pairs}}}}}}};\n')
        if back:
            to_c.append(f"inline int32_t to_c({ctype} x) {{ return {fn}.to_c(x); }}\n")
    out.append("\n// The internal enums translated back: to_c() gives an enumerator's header value.\n")
    out.extend(to_c)
    out.append("\n}  // namespace gts::capi\n")
    return "".join(out)


# ------------------------------------------------------------------------------------------------
# Fortran: the per-type specifics of the generics (assumed rank, one specific per element type)
#
# The generics gtstorage_get_pointer, gtstorage_wrap, gtstorage_wrap_device,
# gtstorage_copy_from_array and gtstorage_copy_to_array have one specific procedure per element
# type. Each takes an assumed-rank argument (p(..), a(..)), so it covers every rank from 0 (a
# 0-d storage) to Fortran's limit of 15; the C shim (gtstorage_cfi.c) reads the rank from the
# descriptor. A pointer dummy needs a declared type for the compiler to pass a descriptor of that
# type, and type(*) would accept any argument (character, derived types) at compile time, so the
# type stays generic by one specific per type, written from this table.

# (tag, Fortran type, NumPy typestr, ISO_Fortran_binding type code). The tag becomes part of the
# specific procedure names and of the C shim's symbols.
FORTRAN_TYPES = [
    ("real32", "real(c_float)", "<f4", "CFI_type_float"),
    ("real64", "real(c_double)", "<f8", "CFI_type_double"),
    ("int8", "integer(c_int8_t)", "|i1", "CFI_type_int8_t"),
    ("int16", "integer(c_int16_t)", "<i2", "CFI_type_int16_t"),
    ("int32", "integer(c_int32_t)", "<i4", "CFI_type_int32_t"),
    ("int64", "integer(c_int64_t)", "<i8", "CFI_type_int64_t"),
    ("logical", "logical(c_bool)", "|b1", "CFI_type_Bool"),
    ("complex64", "complex(c_float_complex)", "<c8", "CFI_type_float_Complex"),
    ("complex128", "complex(c_double_complex)", "<c16", "CFI_type_double_Complex"),
]
# Fortran 2008's rank limit (gfortran's CFI_MAX_RANK); the binding's generics reach it.
FORTRAN_MAX_RANK = 15
FORTRAN_GENERICS = ["gtstorage_get_pointer", "gtstorage_wrap", "gtstorage_wrap_device",
                    "gtstorage_copy_from_array", "gtstorage_copy_to_array"]
F_TYPES_INTERFACES_OUT = "bindings/fortran/gtstorage_gen_interfaces.inc"
F_TYPES_PROCEDURES_OUT = "bindings/fortran/gtstorage_gen_procedures.inc"
F_TYPES_C_OUT = "bindings/fortran/gtstorage_cfi_types.h"


def fortran_max_rank(h):
    """Highest rank of a Fortran pointer to a storage: GTSTORAGE_MAX_NDIM, capped at 15."""
    return min(h.values["GTSTORAGE_MAX_NDIM"], FORTRAN_MAX_RANK)


def f_kind_of(ftype):
    return ftype[ftype.index("(") + 1:ftype.index(")")]


def gen_fortran_type_interfaces():
    out = ["! " + BANNER.replace("\n", "\n! ") + "\n",
           "! Included in the specification part of module gtstorage: the generics over the element\n"
           "! type (table FORTRAN_TYPES) and the bind(C) pointer functions of the C shim.\n"]
    out.append("  public :: " + ", &\n            ".join(FORTRAN_GENERICS) + "\n")
    for generic in FORTRAN_GENERICS:
        out.append("\n  !> Generic over the element type; every rank (assumed rank).\n")
        out.append(f"  interface {generic}\n")
        for tag, *_ in FORTRAN_TYPES:
            out.append(f"    module procedure {generic}_{tag}\n")
        out.append(f"  end interface {generic}\n")

    # One bind(C) entry point per element type: one binding label may not carry two interfaces.
    out.append("\n  interface\n")
    for tag, ftype, *_ in FORTRAN_TYPES:
        imports = ", ".join(sorted({"c_int", "c_int32_t", "c_int64_t", f_kind_of(ftype)}))
        out.append(
            f"    function gtstorage_fortran_pointer_{tag}(handle, side, for_reading, p) &\n"
            f"        bind(C, name=\"gtstorage_fortran_pointer_{tag}\") result(status)\n"
            f"      import :: {imports}\n"
            f"      integer(c_int64_t), value :: handle\n"
            f"      integer(c_int32_t), value :: side, for_reading\n"
            f"      {ftype}, pointer, intent(inout) :: p(..)\n"
            f"      integer(c_int) :: status\n"
            f"    end function gtstorage_fortran_pointer_{tag}\n")
    out.append("  end interface\n")
    return "".join(out)


def gen_fortran_type_procedures():
    out = ["! " + BANNER.replace("\n", "\n! ") + "\n",
           "! Included after CONTAINS in module gtstorage: the specifics of the generics, one per\n"
           "! element type (table FORTRAN_TYPES).\n"]
    for tag, ftype, typestr, _ in FORTRAN_TYPES:
        out.append(f"""
  !> Associates p ({ftype}, any rank) with the host (or `side`) buffer of storage s. The shim
  !> leaves p disassociated on failure (an assumed-rank pointer cannot be nullified here).
  subroutine gtstorage_get_pointer_{tag}(s, p, status, side, readonly)
    integer(gtstorage_handle_kind), intent(in) :: s
    {ftype}, pointer, intent(out) :: p(..)
    integer, intent(out), optional :: status
    integer, intent(in), optional :: side
    logical, intent(in), optional :: readonly
    call gtstorage_fortran_clear_error()
    call finish(gtstorage_fortran_pointer_{tag}(s, side_arg(side), reading_arg(readonly), p), &
                status, "gtstorage_get_pointer")
  end subroutine gtstorage_get_pointer_{tag}

  !> Wraps the Fortran array a ({ftype}, any rank) in a storage s sharing its memory.
  subroutine gtstorage_wrap_{tag}(s, a, halo, dims, readonly, release, user_data, status)
    integer(gtstorage_handle_kind), intent(out) :: s
    {ftype}, target, intent(inout) :: a(..)
    integer, intent(in), optional :: halo(:)
    character(*), intent(in), optional :: dims
    logical, intent(in), optional :: readonly
    type(c_funptr), intent(in), optional :: release
    type(c_ptr), intent(in), optional :: user_data
    integer, intent(out), optional :: status
    call wrap_any(s, a, "{typestr}", halo, dims, readonly, release, user_data, status)
  end subroutine gtstorage_wrap_{tag}

  !> Wraps the device memory of a ({ftype}, any rank) as the device side of storage s: call it
  !> inside `!$acc host_data use_device(a)` (a's address is then the device copy's). stream: the
  !> CUDA stream the model queues a's work on (acc_get_cuda_stream(queue)); device_id: the
  !> device ordinal (default: where the runtime says a lives).
  subroutine gtstorage_wrap_device_{tag}(s, a, halo, dims, readonly, stream, device_id, status)
    integer(gtstorage_handle_kind), intent(out) :: s
    {ftype}, target, intent(inout) :: a(..)
    integer, intent(in), optional :: halo(:)
    character(*), intent(in), optional :: dims
    logical, intent(in), optional :: readonly
    type(c_ptr), intent(in), optional :: stream
    integer, intent(in), optional :: device_id
    integer, intent(out), optional :: status
    call wrap_device_any(s, a, "{typestr}", halo, dims, readonly, stream, device_id, status)
  end subroutine gtstorage_wrap_device_{tag}

  !> Copies the Fortran array a ({ftype}, any rank, shape of s) into storage s.
  subroutine gtstorage_copy_from_array_{tag}(s, a, status)
    integer(gtstorage_handle_kind), intent(in) :: s
    {ftype}, intent(in) :: a(..)
    integer, intent(out), optional :: status
    call copy_from_any(s, a, "{typestr}", status)
  end subroutine gtstorage_copy_from_array_{tag}

  !> Copies storage s into the Fortran array a ({ftype}, any rank, shape of s).
  subroutine gtstorage_copy_to_array_{tag}(a, s, status)
    {ftype}, intent(inout) :: a(..)
    integer(gtstorage_handle_kind), intent(in) :: s
    integer, intent(out), optional :: status
    call copy_to_any(a, s, "{typestr}", status)
  end subroutine gtstorage_copy_to_array_{tag}
""")
    return "".join(out)


def gen_fortran_type_c():
    out = ["/* " + BANNER.replace("\n", "\n * ") + " */\n",
           "/* GTSTORAGE_FORTRAN_TYPE(tag, CFI type code, NumPy typestr, Fortran type) */\n"]
    for tag, ftype, typestr, cfi in FORTRAN_TYPES:
        out.append(f"GTSTORAGE_FORTRAN_TYPE({tag}, {cfi}, \"{typestr}\", \"{ftype}\")\n")
    return "".join(out)


# ------------------------------------------------------------------------------------------------
# The struct-size history: one table, written into the header's conventions block, into the C
# boundary (src/capi/struct_history*.hpp) and into the ABI test (tests/abi/struct_sizes_gen.h)

# The released minor versions of the ABI, oldest first: the columns of the size history.
ABI_VERSIONS = ["1.0", "1.1"]

# Every struct that begins with struct_size: the version that introduced it, and for each later
# version that appended fields, the first field it appended (an older caller's struct ends where
# that field begins, so the older size is its offset on every ABI, not only on x86-64).
STRUCT_HISTORY = {
    "gtstorage_array": ("1.0", {}),
    "gtstorage_create_options": ("1.0", {"1.1": "pool"}),
    "gtstorage_wrap_options": ("1.0", {}),
    "gtstorage_plan_info": ("1.0", {}),
    "gtstorage_preset_info": ("1.0", {}),
    "gtstorage_interface_info": ("1.0", {}),
    "gtstorage_stats": ("1.0", {"1.1": "pool_held_bytes"}),
    "gtstorage_transfer_stats": ("1.0", {}),
    "gtstorage_pool_stats": ("1.1", {}),
    "gtstorage_dlpack_options": ("1.1", {}),
    "gtstorage_decomp_options": ("1.1", {}),
    "gtstorage_decomp_info": ("1.1", {}),
    "gtstorage_exchange_options": ("1.1", {}),
    "gtstorage_exchange_info": ("1.1", {}),
    "gtstorage_python_options": ("1.1", {}),
}

# The first line of the size table in a header's documentation; the generator rewrites the table.
SIZE_TABLE_TITLE = "struct (x86-64 / LP64 sizes in bytes)"
STRUCT_HISTORY_OUT = {None: "src/capi/struct_history.hpp",
                      "gtstorage_mpi.h": "src/capi/struct_history_mpi.hpp",
                      "gtstorage_python.h": "src/capi/struct_history_python.hpp"}
STRUCT_SIZES_OUT = "tests/abi/struct_sizes_gen.h"
SYMBOLS_OUT = "tests/abi/exported_functions.txt"

X86_64_SCALARS = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4,
                  "uint32_t": 4, "int64_t": 8, "uint64_t": 8, "int": 4, "size_t": 8,
                  "double": 8, "float": 4, "char": 1}


def x86_64_layout(h, name):
    """(size, alignment, {field: offset}) of struct @p name under the x86-64 System V ABI."""
    _, fields, _ = h.struct(name)
    offset, align, offsets = 0, 1, {}
    for fname, ct, _ in fields:
        if ct.ptr or h.typedef_kind(ct.base) == "fn":
            size = a = 8
        elif h.typedef_kind(ct.base) == "struct":
            size, a, _ = x86_64_layout(h, ct.base)
        elif h.typedef_kind(ct.base) == "enum":
            size = a = 4
        else:
            size = a = X86_64_SCALARS[h.scalar_base(ct.base) or ct.base]
        for d in ct.dims:
            size *= d if isinstance(d, int) else h.values[d]
        offset = (offset + a - 1) // a * a
        offsets[fname] = offset
        offset += size
        align = max(align, a)
    return (offset + align - 1) // align * align, align, offsets


def versioned_structs(h):
    """The structs of @p h (its own, not its parent's) that begin with struct_size."""
    return [s for s in h.structs if s[1][0][0] == "struct_size"]


def size_history(h, sname):
    """[(C++ expression, x86-64 size)] of @p sname per ABI version; ("0", 0) before it existed."""
    if sname not in STRUCT_HISTORY:
        raise KeyError(f"STRUCT_HISTORY: {sname} begins with struct_size but has no history")
    introduced, appended = STRUCT_HISTORY[sname]
    fields = [f for f, *_ in h.struct(sname)[1]]
    for version, field in appended.items():
        if version not in ABI_VERSIONS or field not in fields:
            raise KeyError(f"STRUCT_HISTORY: {sname}: {version} appended {field}?")
    size, _, offsets = x86_64_layout(h, sname)
    out = []
    for k, version in enumerate(ABI_VERSIONS):
        if k < ABI_VERSIONS.index(introduced):
            out.append(("0", 0))
            continue
        later = [appended[v] for v in ABI_VERSIONS[k + 1:] if v in appended]
        if later:
            out.append((f"offsetof({sname}, {later[0]})", offsets[later[0]]))
        else:
            out.append((f"sizeof({sname})", size))
    return out


def check_history_names(headers):
    known = {s[0] for h in headers for s in versioned_structs(h)}
    for sname in STRUCT_HISTORY:
        if sname not in known:
            raise KeyError(f"STRUCT_HISTORY: {sname} is not a struct with a struct_size")


def size_table(h):
    """The rows of the header's size table (Doxygen markdown inside the comment)."""
    first = f"| {SIZE_TABLE_TITLE} |"
    width = len(SIZE_TABLE_TITLE)
    rows = [first + "".join(f" {v} |" for v in ABI_VERSIONS),
            "|" + "-" * (width + 2) + "|" + "|".join("-----" for _ in ABI_VERSIONS) + "|"]
    for sname, _, _ in versioned_structs(h):
        cells = [f" {str(x) if x else '— ':>3} " for _, x in size_history(h, sname)]
        rows.append(f"| {'::' + sname:<{width}} |" + "|".join(cells) + "|")
    return rows


def header_with_size_table(h, text, path):
    """@p text (the header) with its size table rewritten from STRUCT_HISTORY."""
    lines = text.split("\n")
    at = [i for i, line in enumerate(lines) if f"| {SIZE_TABLE_TITLE} |" in line]
    if len(at) != 1:
        raise HeaderError(path, 1, f"expected one size table (a line with '| {SIZE_TABLE_TITLE}"
                                   " |') in the documentation")
    start = at[0]
    indent = lines[start][:lines[start].index("|")]
    end = start
    while end < len(lines) and lines[end].startswith(indent + "|"):
        end += 1
    return "\n".join(lines[:start] + [indent + r for r in size_table(h)] + lines[end:])


def gen_struct_history(h):
    """src/capi/struct_history*.hpp: history_of<T> for every versioned struct of one header."""
    core = h.parent is None
    out = ["".join(f"// {line}".rstrip() + "\n" for line in banner(h).splitlines())]
    header = "gtstorage.h" if core else os.path.basename(h.path)
    out.append(f"//\n// The sizes every struct of {header} that begins with struct_size had in each "
               "released\n// version (the table STRUCT_HISTORY of tools/gen_bindings.py): the "
               "boundary accepts exactly\n// these (capi/boundary.hpp). An older size is the "
               "offset of the first field appended after\n// it, so the history holds on every "
               "ABI.\n#pragma once\n\n#include <cstddef>\n#include <cstdint>\n\n")
    if core:
        out.append('#include "gtstorage/gtstorage.h"\n\nnamespace gts::capi {\n\n'
                   f"constexpr std::size_t abi_versions = {len(ABI_VERSIONS)};\n"
                   "/// The released versions, oldest first (the last one is this library's).\n"
                   "constexpr const char* version_names[abi_versions] = {" +
                   ", ".join(f'"{v}"' for v in ABI_VERSIONS) + "};\n\n"
                   "/// Sizes of a struct per version, oldest first; 0 where the struct did not "
                   "exist yet.\nstruct struct_history {\n  const char* name;\n"
                   "  uint32_t size[abi_versions];\n};\n\n"
                   "template <class T>\nstruct history_of;  // one specialization per struct "
                   "with a struct_size\n\n"
                   "/// history_of<T>: the sizes of T in each version, oldest first.\n" +
                   "".join(f"{line:<65}\\\n" for line in (
                       "#define GTS_STRUCT_HISTORY(T, ...)", "  template <>",
                       "  struct history_of<T> {",
                       "    static constexpr struct_history value = {#T, {__VA_ARGS__}};")) +
                   "  }\n\n")
    else:
        out.append(f'#include "capi/struct_history.hpp"\n#include "gtstorage/{header}"\n\n'
                   "namespace gts::capi {\n\n")
    for sname, _, _ in versioned_structs(h):
        sizes = ", ".join(f"uint32_t({e})" if e != "0" else "0" for e, _ in size_history(h, sname))
        out.append(f"GTS_STRUCT_HISTORY({sname}, {sizes});\n")
    out.append("\n}  // namespace gts::capi\n")
    return "".join(out)


def gen_struct_sizes(headers):
    """tests/abi/struct_sizes_gen.h: every public struct, its sizeof and the table's sizes."""
    out = ["/* " + BANNER.replace("\n", "\n * ") + " */\n",
           "/* Included by tests/abi/struct_sizes.c: every struct of the public headers with its\n"
           " * sizeof as the compiler lays it out, the x86-64 size the generator computed, and for\n"
           " * the versioned ones the size of each released version (as the boundary computes it,\n"
           " * and as the headers' tables print it on x86-64; 0: not yet introduced). */\n",
           f"#define GTS_ABI_VERSIONS {len(ABI_VERSIONS)}\n",
           "static const char* const gts_abi_versions[GTS_ABI_VERSIONS] = {" +
           ", ".join(f'"{v}"' for v in ABI_VERSIONS) + "};\n\n",
           "typedef struct gts_struct_row {\n  const char* name;\n  size_t size;\n"
           "  size_t x86_64_size;\n  int versioned;\n  size_t history[GTS_ABI_VERSIONS];\n"
           "  size_t x86_64_history[GTS_ABI_VERSIONS];\n} gts_struct_row;\n\n",
           "static const gts_struct_row gts_struct_rows[] = {\n"]
    for h in headers:
        versioned = {s[0] for s in versioned_structs(h)}
        for sname, _, _ in h.structs:
            size, _, _ = x86_64_layout(h, sname)
            hist = (size_history(h, sname) if sname in versioned else
                    [("0", 0)] * len(ABI_VERSIONS))
            exprs = ", ".join(e for e, _ in hist)
            table = ", ".join(str(x) for _, x in hist)
            out.append(f'    {{"{sname}", sizeof({sname}), {size}, {int(sname in versioned)}, '
                       f"{{{exprs}}}, {{{table}}}}},\n")
    out.append("};\n")
    return "".join(out)


def gen_symbols(h):
    """tests/abi/exported_functions.txt: the functions libgtstorage exports, with their tier."""
    out = ["# " + BANNER.replace("\n", "\n# ") + "\n",
           "# Every function of gtstorage.h and gtstorage_experimental.h (what libgtstorage "
           "exports):\n# <name> <stable|experimental> [deprecated]; read by tests/abi/*.sh and "
           "tools/update-abi-baseline.sh.\n"]
    for name, *_ in sorted(h.functions):
        tier = "experimental" if name in h.experimental else "stable"
        out.append(f"{name} {tier}" + (" deprecated" if name in h.deprecated else "") + "\n")
    return "".join(out)


# ------------------------------------------------------------------------------------------------
# The linker version script of libgtstorage (src/gtstorage.map)

VERSION_SCRIPT_OUT = "src/gtstorage.map"
STABLE_NODE = "GTSTORAGE_1"
EXPERIMENTAL_NODE = "GTSTORAGE_EXPERIMENTAL"


def gen_version_script(h):
    """The two symbol version nodes: the experimental header's functions by name, the stable
    tier (every other gtstorage_ function) by pattern, nothing else exported."""
    out = ["/* " + BANNER.replace("\n", "\n   ") + "\n\n",
           "   Only the public C API is exported; everything else (C++ internals, the static CUDA\n"
           "   runtime) stays local so it cannot clash with the host program's copies.\n\n"
           f"   The experimental tier (gtstorage_experimental.h: no ABI promise) has a node of its\n"
           f"   own, {EXPERIMENTAL_NODE}, so that none of it is bound to the stable {STABLE_NODE} "
           "and the\n   ABI baseline and check leave it out. A name listed here wins over the "
           f"pattern of {STABLE_NODE}. */\n",
           f"{EXPERIMENTAL_NODE} {{\n  global:\n"]
    out += [f"    {name};\n" for name, *_ in h.functions if name in h.experimental]
    out.append(f"}};\n\n{STABLE_NODE} {{\n  global:\n    gtstorage_*;\n  local:\n    *;\n}};\n")
    return "".join(out)


def outputs(h):
    files = {PY_OUT: gen_python(h), F_OUT: gen_fortran(h), ABI_F_OUT: gen_abi_fortran(h),
             ABI_C_OUT: gen_abi_c(h), CPP_ENUMS_OUT: gen_cpp_enums(h),
             F_TYPES_INTERFACES_OUT: gen_fortran_type_interfaces(),
             F_TYPES_PROCEDURES_OUT: gen_fortran_type_procedures(),
             F_TYPES_C_OUT: gen_fortran_type_c(),
             STRUCT_HISTORY_OUT[None]: gen_struct_history(h), SYMBOLS_OUT: gen_symbols(h),
             VERSION_SCRIPT_OUT: gen_version_script(h)}
    with open(h.path, encoding="utf-8") as f:
        files[HEADER_REL] = header_with_size_table(h, f.read(), h.path)
    headers = [h]
    for name, py_out, f_out, module in COMPONENTS:
        c = parse_component(component_path(h.path, name), h)
        headers.append(c)
        if py_out is not None:
            files[py_out] = gen_python(c)
        files[f_out] = gen_fortran(c, module, f"bindings/fortran/{module}.f90")
        files[STRUCT_HISTORY_OUT[name]] = gen_struct_history(c)
    check_history_names(headers)
    files[STRUCT_SIZES_OUT] = gen_struct_sizes(headers)
    return files


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--header", default=os.path.join(ROOT, HEADER_REL),
                        help="the header to read (default: the repository's)")
    parser.add_argument("--output-dir", default=ROOT,
                        help="root under which the files are written (default: the repository)")
    parser.add_argument("--check", action="store_true",
                        help="generate into a temporary directory and compare with the files "
                             "under --output-dir; exit 1 naming each stale file")
    args = parser.parse_args(argv)
    try:
        h = parse_header(args.header)
        files = outputs(h)
    except HeaderError as exc:
        print(exc, file=sys.stderr)
        return 2
    except (ValueError, KeyError) as exc:  # a construct the writers cannot map
        print(f"{args.header}: error: cannot map {exc} to the bindings", file=sys.stderr)
        return 2

    if not args.check:
        for rel, text in files.items():
            path = os.path.join(args.output_dir, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            print(f"wrote {path}")
        return 0

    stale = []
    with tempfile.TemporaryDirectory(prefix="gen_bindings.") as tmp:
        for rel, text in files.items():
            fresh = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(fresh), exist_ok=True)
            with open(fresh, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            with open(fresh, encoding="utf-8") as f:
                new = f.read()
            path = os.path.join(args.output_dir, rel)
            try:
                with open(path, encoding="utf-8") as f:
                    old = f.read()
            except OSError:
                old = ""
            if old != new:
                stale.append(rel)
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(True), new.splitlines(True), rel, rel + " (generated)", n=1))
    if stale:
        for rel in stale:
            print(f"STALE: {rel} differs from what tools/gen_bindings.py generates from "
                  f"{os.path.relpath(args.header, ROOT)}", file=sys.stderr)
        print("Run: python3 tools/gen_bindings.py", file=sys.stderr)
        return 1
    print(f"up to date: {', '.join(files)} ({len(h.functions)} functions, {len(h.structs)} "
          f"structs, {sum(len(m) for _, m in h.enums)} enumerators, {len(h.constants)} macros)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
