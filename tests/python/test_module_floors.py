# The modules of the Python package stand on floors (issue 26, point 7): a module imports only
# from floors below its own, so that there is no import cycle, and it imports at module level
# only (a function-local import hides a dependency, usually a cycle), optional dependencies
# aside. This reads the source of every module with ast, so it needs neither the library nor an
# import of the package, and a new module must be given its floor here.
import ast
import os

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings",
                       "python", "gtstorage")

# Lowest first. A module may import the modules of the floors before its own.
FLOORS = [
    ("_args", "_capi_generated", "_version", "_xarray"),  # no imports from the package
    ("_capi",),  # the library, loaded; the generated declarations
    ("_mpi_capi_generated", "_dlpack", "_library"),
    ("_handle", "_dlpack_import"),  # handles, their geometry, sync state and wrapping
    ("_core",),  # the core of Storage: handle, geometry, views, host access
    ("_indexing", "_sync"),  # Storage mixins: indexing; host/device synchronization
    ("_duck_array", "_protocols"),  # Storage mixins: the NumPy duck array; the buffer protocols
    ("_storage",),  # the Storage class, composed
    ("_allocation",),  # allocation records (of arrays and storages)
    ("_request",),  # the one options pipeline and cache, the allocators both faces share
    ("_wrap",),  # as_storage
    ("_creation", "_gt4py"),  # the two faces: GDP-3 (Storage) and GT4Py's drop-in (arrays)
    ("_shared_api",),  # what the two faces export alike
    ("gdp3",),
    ("__init__",),
    ("next", "mpi"),  # public submodules over the package
    ("bridge",),
]
FLOOR = {module: level for level, modules in enumerate(FLOORS) for module in modules}

# Optional dependencies: imported where they are used, so that the package imports without them.
OPTIONAL = {"cupy", "torch", "mpi4py", "xarray", "gt4py", "dace"}


def package_modules():
    return sorted(name[:-3] for name in os.listdir(PACKAGE) if name.endswith(".py"))


def package_imports(tree, module):
    """(line, imported package module) of every import of the package by @p module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module is None:  # from . import a, b
                yield from ((node.lineno, alias.name) for alias in node.names)
            elif node.level == 1:  # from .a import b
                yield node.lineno, node.module.split(".")[0]
            elif node.level == 0 and node.module and node.module.split(".")[0] == "gtstorage":
                parts = node.module.split(".")
                yield node.lineno, parts[1] if len(parts) > 1 else "__init__"
            elif node.level > 1:
                raise AssertionError(f"{module}:{node.lineno}: an import from above the package")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "gtstorage":
                    yield node.lineno, parts[1] if len(parts) > 1 else "__init__"


def local_imports(tree):
    """(line, top-level module name) of every import inside a function."""
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    yield from ((node.lineno, a.name.split(".")[0]) for a in node.names)
                elif isinstance(node, ast.ImportFrom):
                    name = "." * node.level + (node.module or "")
                    yield node.lineno, name.split(".")[0] if node.level == 0 else name


def parse(module):
    with open(os.path.join(PACKAGE, module + ".py"), encoding="utf-8") as f:
        return ast.parse(f.read(), filename=module + ".py")


def test_every_module_has_a_floor():
    missing = [m for m in package_modules() if m not in FLOOR]
    assert not missing, f"modules without a floor in {__file__}: {missing}"


def test_the_issue_order_of_the_floors():
    order = ["_capi", "_handle", "_core", "_storage", "_request", "_wrap", "_creation", "__init__"]
    assert [FLOOR[m] for m in order] == sorted(FLOOR[m] for m in order)
    assert len({FLOOR[m] for m in order}) == len(order)
    assert FLOOR["_gt4py"] == FLOOR["_creation"]


@pytest.mark.parametrize("module", package_modules())
def test_imports_only_from_floors_below(module):
    upward = [f"{module}.py:{line}: imports {target} (floor {FLOOR.get(target)})"
              for line, target in package_imports(parse(module), module)
              if FLOOR.get(target, len(FLOORS)) >= FLOOR[module]]
    assert not upward, "\n".join(upward)


@pytest.mark.parametrize("module", package_modules())
def test_no_function_local_imports(module):
    local = [f"{module}.py:{line}: imports {name} in a function"
             for line, name in local_imports(parse(module)) if name not in OPTIONAL]
    assert not local, "\n".join(local)


def test_no_file_over_800_lines_and_no_class_over_500():
    # Issue 26 point 2: the giant rooms of the Python binding stay cut (the package and its native
    # extension; the generated declarations excepted).
    bindings = os.path.join(PACKAGE, "..")
    too_long = []
    for folder, _, names in os.walk(bindings):
        for name in names:
            if name.endswith((".py", ".c", ".h")) and "_generated" not in name:
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    lines = f.read().count("\n")
                if lines > 800:
                    too_long.append(f"{name}: {lines} lines")
    for module in package_modules():
        for node in ast.walk(parse(module)):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno >= 500:
                too_long.append(f"{module}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert not too_long, too_long


def test_the_checks_see_an_upward_and_a_local_import():
    # The checks themselves: an upward import and a function-local one are found.
    tree = ast.parse("from ._creation import storage\n"
                     "def f():\n    from ._request import plan\n    import cupy\n")
    assert [t for _, t in package_imports(tree, "_storage")] == ["_creation", "_request"]
    assert [n for _, n in local_imports(tree)] == ["._request", "cupy"]
