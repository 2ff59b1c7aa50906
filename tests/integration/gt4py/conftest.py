# GT4Py integration test (run by tests/integration/gt4py/run.sh in its Python 3.12 venv with gt4py==1.2.3).
import os


def pytest_report_header(config):
    import gt4py
    import numpy

    import gtstorage

    native = "with" if getattr(gtstorage._capi, "native", None) is not None else "without"
    return [
        f"gt4py {gt4py.__version__}, NumPy {numpy.__version__}",
        f"gtstorage {gtstorage.__version__}: {gtstorage.__file__}, library "
        f"{gtstorage.library_path}, {native} gtstorage._native",
        "stencil backends: " + os.environ.get("GTSTORAGE_GT4PY_BACKENDS", "numpy,debug,gt:cpu_kfirst"),
    ]
