# gtstorage Python binding: argument checking shared by every public function.
#
# ctypes converts Python integers to C integers by truncation (2**64 + 5 becomes 5), so every
# integer is range-checked here, before it reaches a ctypes field or array, and every error names
# the public function and the argument.
"""Checks and conversions of public arguments (types, integer ranges, error messages)."""

from __future__ import annotations

import functools
import inspect
import numbers
import operator
import types
from typing import Any, Callable, TypeVar

import numpy as np

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

# "Not given" (None is a meaningful value for device and managed): the preset's, the template's
# or the buffer's value is used.
UNSET: Any = type("_Default", (), {"__repr__": lambda self: "<default>"})()


def is_int(value: object) -> bool:
    """An integer that is not a bool (NumPy integers included)."""
    if type(value) is int:
        return True
    return (isinstance(value, (numbers.Integral, np.integer))
            and not isinstance(value, (bool, np.bool_)))


def int_scalar(name: str, value: Any, low: int = INT64_MIN, high: int = INT64_MAX) -> int:
    """@p value as a Python int in [low, high]; TypeError for non-integers, OverflowError for
    integers out of range."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int, got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {value!r}") from None
    if not low <= v <= high:
        raise OverflowError(f"{name} = {v} is out of range [{low}, {high}]")
    return v


def int_sequence(name: str, values: Any, *, allow_scalar: bool = False, low: int = INT64_MIN,
                 high: int = INT64_MAX) -> list[int]:
    """@p values (a sequence of ints, or one int with @p allow_scalar) as a list of ints in
    [low, high]."""
    if type(values) in (tuple, list) and all(type(v) is int for v in values):
        if values and not (low <= min(values) and max(values) <= high):
            bad = next(v for v in values if not low <= v <= high)
            raise OverflowError(f"{name}: {bad} is out of range [{low}, {high}]")
        return list(values)
    if allow_scalar and is_int(values):
        values = (values,)
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of ints, got {values!r}")
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise TypeError(f"{name} must be a sequence of ints, got an array of shape {values.shape}")
    out: list[int] = []
    for v in values:
        if not is_int(v):
            raise TypeError(f"{name} must be a sequence of ints, got {values!r}")
        v = operator.index(v)
        if not low <= v <= high:
            raise OverflowError(f"{name}: {v} is out of range [{low}, {high}]")
        out.append(v)
    return out


def dtype(value: Any, name: str = "dtype") -> np.dtype[Any]:
    """``numpy.dtype(value)``; NumPy's TypeError/ValueError keep their type and gain the
    argument's name, anything else its parser raises (SyntaxError for ``"01"``, …) becomes a
    TypeError."""
    try:
        result: np.dtype[Any] = np.dtype(value)
        return result
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name} {value!r} is not a NumPy dtype: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - NumPy's dtype parser
        raise TypeError(f"{name} {value!r} is not a NumPy dtype ({type(exc).__name__}: "
                        f"{exc})") from None


def array_source(name: str, value: T) -> T:
    """@p value, refused with a TypeError naming @p name (``"data"``, or ``"fill: value"`` in a
    method) if it is a PyTorch tensor that requires grad: PyTorch exports such a tensor through
    no array protocol (``__array__``, DLPack and the CUDA Array Interface all raise RuntimeError),
    and detaching it from autograd is the caller's decision."""
    if (type(value).__module__.startswith("torch")
            and getattr(value, "requires_grad", False) is True):
        argument = name.rpartition(": ")[2]
        raise TypeError(f"{name} is a torch.Tensor that requires grad, which PyTorch shares "
                        f"through no array protocol; pass {argument}.detach() (the same memory, "
                        "outside autograd)")
    return value


def c_string(name: str, value: str, encoding: str = "ascii") -> bytes:
    """@p value encoded for a C string argument: ValueError naming @p name when it cannot be
    encoded or holds a NUL (ctypes would silently cut the string there)."""
    if "\0" in value:
        raise ValueError(f"{name} must not contain a NUL character, got {value!r}")
    try:
        return value.encode(encoding)
    except UnicodeEncodeError:
        raise ValueError(f"{name} must be {encoding.upper()} text, got {value!r}") from None


def prefix(message: str, context: str) -> str:
    if message.startswith((context + ":", context + "(")):
        return message
    return f"{context}: {message}"


def public(name: str | None = None) -> Callable[[F], F]:
    """Decorator: errors raised by the decorated public function (and what it calls) name it.

    The exception object keeps its class (GT4Py's exception types are part of the drop-in
    contract); only its message gains the prefix ``"<name>: "``. The wrapper costs one try block.
    """

    def decorate(fn: F) -> F:
        context = name or fn.__name__

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except UnicodeError as exc:  # its args are not a message; say it as a ValueError
                raise ValueError(prefix(str(exc), context)) from exc
            except (TypeError, ValueError, OverflowError, IndexError, MemoryError) as exc:
                if exc.args and isinstance(exc.args[0], str):
                    exc.args = (prefix(exc.args[0], context),) + exc.args[1:]
                    if hasattr(exc, "message"):
                        exc.message = exc.args[0]
                raise

        return wrapper  # type: ignore[return-value]

    return decorate



def variant(template: F, name: str, doc: str | None, **hidden: Any) -> F:
    """The function ``name`` of a family (empty, zeros, ones …) written once as ``template``.

    ``template`` takes what tells the members apart (the init, the name its errors carry) as
    keyword-only parameters with defaults; ``hidden`` gives them this member's values. The
    member is ``template``'s code under another name (no layer in between: a fast path that
    wraps it, gtstorage._native.allocator, reads its parameters), and ``help()``,
    ``inspect.signature`` and ``__annotations__`` show it without the hidden parameters.
    """
    fn: Any = template
    code = fn.__code__.replace(co_name=name)  # (Python's own errors name the code: zeros() …)
    if hasattr(code, "co_qualname"):  # Python 3.11+
        code = code.replace(co_qualname=name)
    member = types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    member.__kwdefaults__ = {**fn.__kwdefaults__, **hidden}
    member.__annotations__ = {k: v for k, v in fn.__annotations__.items() if k not in hidden}
    signature = inspect.signature(fn)
    member.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p for p in signature.parameters.values() if p.name not in hidden])
    member.__qualname__ = name
    member.__module__ = fn.__module__
    member.__doc__ = doc
    return member  # type: ignore[return-value]
