# Sphinx configuration of the gtstorage Python API reference (target `docs-python`, see
# CMakeLists.txt here). The package is imported, so the build needs the library: the target
# runs with GTSTORAGE_LIBRARY=<the built libgtstorage> and PYTHONPATH=<repo>/bindings/python.
import os

try:
    import gtstorage
except ImportError as exc:  # fail at once with the reason, not with one warning per page
    raise RuntimeError(f"docs-python: cannot import gtstorage ({exc}); GTSTORAGE_LIBRARY must "
                       "name the built libgtstorage.so.1 and PYTHONPATH hold "
                       "<repo>/bindings/python") from exc

project = "gtstorage"
author = "the gtstorage developers"
copyright = "the gtstorage developers"
version = release = gtstorage.library_version

extensions = ["sphinx.ext.autodoc", "numpydoc"]

# The docstrings are numpydoc style, rendered by numpydoc (Debian: python3-numpydoc). Members are
# listed by autodoc (storage.rst), not by numpydoc's autosummary tables.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# Checks that make a broken docstring a warning (an error under -W), the same set
# tests/python/test_docstrings.py runs over every public name: PR01 a parameter that is not
# documented, PR02 a documented parameter that the signature lacks (also a stray line in a
# Parameters section), PR03 parameters documented out of order, PR10 "name: type" without the
# space before the colon, GL06 an unknown section name (a misspelt header), GL07 sections out of
# order, GL08 no docstring, SS01 no summary line, RT02 a Returns entry naming a variable.
numpydoc_validation_checks = {"PR01", "PR02", "PR03", "PR10", "GL06", "GL07", "GL08", "SS01",
                              "RT02"}
# The top-level aliases of the GDP-3 functions show a one-line pointer instead of their
# docstring (_alias_docstring below); their docstring is validated as gtstorage.gdp3.<name>.
numpydoc_validation_exclude = {r"^gtstorage\.(as_storage|storage|plan)$"}

# Every cross-reference must resolve (a misspelt :func:`name` is an error), except to NumPy's,
# CuPy's and the standard library's types (collections.abc.Sequence in the annotations): their
# inventories are not fetched (the build runs offline).
nitpicky = True
nitpick_ignore_regex = [("py:class", r"(numpy|cupy)(\..*)?"),
                        ("py:class", r"(collections\.abc|typing|types|ctypes)\..*")]

autodoc_member_order = "groupwise"  # methods, then properties; alphabetical in each
autodoc_preserve_defaults = True  # keyword defaults as written (``_UNSET``, ``np.float64``)
autodoc_typehints = "signature"
autodoc_type_aliases = {"DTypeLike": "numpy.typing.DTypeLike",
                        "Array": "numpy.ndarray | cupy.ndarray"}  # the GT4Py drop-in's result

# The C reference, which the `docs` target builds into <build>/docs/html: relative to the HTML
# here (<build>/docs/python-api/html); GTSTORAGE_C_REFERENCE overrides it (a published copy).
c_reference = os.environ.get("GTSTORAGE_C_REFERENCE", "../../html/index.html")
rst_epilog = f"""
.. _C reference: {c_reference}
"""

html_theme = "alabaster"
html_title = f"gtstorage {release} Python API"
html_theme_options = {"description": "Python binding of libgtstorage", "fixed_sidebar": False}
html_show_sourcelink = False
templates_path = []
exclude_patterns = []

# gtstorage.as_storage / storage / plan are the GDP-3 functions, documented once on the GDP-3
# page: the top-level entries keep their signature and point there.
_ALIASES = {"gtstorage.as_storage", "gtstorage.storage", "gtstorage.plan"}


def _alias_docstring(app, what, name, obj, options, lines):
    if what == "function" and name in _ALIASES:
        short = name.rsplit(".", 1)[1]
        lines[:] = [f"The same function as :func:`gtstorage.gdp3.{short}`, exported at the top "
                    "level."]


def _resolve_in_package(app, env, node, contnode):
    """gtstorage.gdp3 re-exports the package's classes, exceptions and functions, documented
    once as gtstorage.<name>: a reference made in gtstorage.gdp3 resolves there."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"]
    if target.startswith("gtstorage.gdp3."):
        name = target[len("gtstorage.gdp3."):]
    elif node.get("py:module") == "gtstorage.gdp3" and "." not in target:
        name = target
    else:
        return None
    if not hasattr(gtstorage, name):
        return None
    return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder, node["reftype"],
                                             f"gtstorage.{name}", node, contnode)


# gtstorage.mpi needs libgtstorage_mpi, which only builds with an MPI: without it, its page says
# so instead of documenting the module (whose import would fail).
try:
    import gtstorage.mpi  # noqa: F401
    _MPI_MISSING = None
except ImportError as exc:
    _MPI_MISSING = str(exc)


def _mpi_page(app, docname, source):
    if docname == "mpi" and _MPI_MISSING is not None:
        source[0] = ("Halo exchange over MPI\n======================\n\n"
                     "This build has no ``libgtstorage_mpi`` (it is built where an MPI is found), "
                     "so :mod:`gtstorage.mpi` is not documented here.\n")


def setup(app):
    app.connect("source-read", _mpi_page)
    app.connect("autodoc-process-docstring", _alias_docstring)
    app.connect("missing-reference", _resolve_in_package)
