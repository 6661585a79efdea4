"""Small calls of kernels run by the Python interpreter: no compiling for milliseconds of work.

On a fresh install numba's cache is empty, and compiling the kernels that building and
reading one small table touch took about 9 s (the first ``irscale.scale("AP@10", rb=5)``)
for work of a few milliseconds. A kernel module lists in ``INTERPRETABLE`` the kernels
whose own Python source (numba's ``py_func``) gives the same results when the interpreter
runs it; :func:`tiered` gives such a module with those kernels wrapped in :class:`Tiered`:
a call whose arrays are all small (:data:`SMALL_ITEMS` elements at most) runs the Python
source, with every numba function it calls replaced by its Python source too (what
``NUMBA_DISABLE_JIT`` does for a whole process, here for one call), until the kernel has
spent :data:`BUDGET_SECONDS` interpreted in this process; a bigger call, and every call
after that, runs the compiled kernel (compiled once and cached on disk, as before). A
kernel already compiled in this process is always called compiled.

Same code, same results: the interpreted kernels compute on numpy scalars, which wrap on
integer overflow as numba's integers do (overflow and invalid-value warnings are
silenced: numba wraps and makes NaN silently), and record arrays are passed as
:class:`numpy.recarray` views, whose elements read and write their fields as attributes,
as in numba. An index outside an array, which no sound call makes, raises IndexError
interpreted where the compiled kernel reads whatever lies there. A kernel qualifies for
``INTERPRETABLE`` when it mixes no signed with unsigned integers where numpy's and
numba's promotions differ, is cheap when its arrays are small (a few passes over them, or
a search and a short scan per query), and calls only such kernels;
``tests/test_interpreted.py`` runs every listed kernel both ways on the inputs of the
kernel tests and on edge cases, and requires identical outputs.
"""
from __future__ import annotations

import contextlib
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

#: Calls whose array arguments have at most this many elements each may run interpreted
#: (an interpreted kernel takes about a microsecond per element and loop step).
SMALL_ITEMS = 1 << 13
#: Seconds a kernel may spend interpreted in a process before its calls go compiled
#: (about what compiling a kernel costs).
BUDGET_SECONDS = 0.3

_lock = threading.RLock()
# keyed by id, holding the keys too (so that an id is never reused for another object)
_python: dict[int, tuple[Any, Callable]] = {}        # id(numba function) -> (it, its interpreted twin)
_namespaces: dict[int, tuple[dict, dict]] = {}       # id(module globals) -> (them, their interpreted copy)


def _is_jitted(obj: object) -> bool:
    return hasattr(obj, "py_func") and hasattr(obj, "overloads")


def _twin(py: types.FunctionType, ns: dict) -> types.FunctionType:
    """``py`` with the globals ``ns``."""
    fn = types.FunctionType(py.__code__, ns, py.__name__, py.__defaults__, py.__closure__)
    fn.__doc__, fn.__qualname__ = py.__doc__, py.__qualname__
    return fn


def _namespace(globals_: dict) -> dict:
    """A copy of a module's globals in which every numba function is its interpreted twin
    (the twins of the module's own functions have this copy as their globals)."""
    known = _namespaces.get(id(globals_))
    if known is not None:
        return known[1]
    ns = dict(globals_)
    _namespaces[id(globals_)] = (globals_, ns)
    for name, value in globals_.items():
        if _is_jitted(value) and value.py_func.__globals__ is globals_:
            ns[name] = _twin(value.py_func, ns)
            _python[id(value)] = (value, ns[name])
    for name, value in globals_.items():          # numba functions imported from other modules
        if _is_jitted(value) and value.py_func.__globals__ is not globals_:
            ns[name] = python_of(value)
    return ns


def python_of(kernel: Any) -> Callable:
    """The Python source of a numba function, run by the interpreter, with the numba
    functions it calls replaced in the same way."""
    known = _python.get(id(kernel))
    if known is None:
        with _lock:
            ns = _namespace(kernel.py_func.__globals__)
            known = _python.get(id(kernel))
            if known is None:                      # not a module global (defined in a function)
                known = _python[id(kernel)] = (kernel, _twin(kernel.py_func, ns))
    return known[1]


def _largest(args: tuple) -> int:
    return max((a.size for a in args if isinstance(a, np.ndarray)), default=0)


def _as_numba_sees_it(a: object) -> object:
    """Record arrays as recarray views (fields as attributes of their elements)."""
    if isinstance(a, np.ndarray) and a.dtype.names is not None and not isinstance(a, np.recarray):
        return a.view(np.recarray)
    return a


def _boxed(x: object) -> object:
    """Return values as numba boxes them: Python scalars, tuples of them, arrays as they are."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, tuple):
        return tuple(_boxed(v) for v in x)
    return x


_here = threading.local()


@contextlib.contextmanager
def compiled() -> Iterator[None]:
    """Within this block (in this thread) tiered kernels run compiled, whatever the size
    of their calls: to compile (or load from numba's cache) the kernels that worker
    processes are about to use, once, before fanning out."""
    before = getattr(_here, "compiling", False)
    _here.compiling = True
    try:
        yield
    finally:
        _here.compiling = before


class Tiered:
    """A kernel called interpreted while its calls are small and cheap (see the module
    docstring), compiled otherwise. ``interpret``: None decides by size and budget, True
    or False forces one form (tests)."""

    interpret: bool | None = None

    def __init__(self, kernel: Any):
        self.kernel = kernel
        self.spent = 0.0
        self.__doc__ = kernel.__doc__
        self.__name__ = getattr(kernel, "__name__", "kernel")

    def interpreted_now(self, args: tuple) -> bool:
        """Whether a call with ``args`` runs interpreted."""
        if self.interpret is not None:
            return self.interpret
        if getattr(_here, "compiling", False):
            return False
        return not self.kernel.overloads and self.spent < BUDGET_SECONDS and _largest(args) <= SMALL_ITEMS

    def __call__(self, *args: object) -> object:
        if not self.interpreted_now(args):
            return self.kernel(*args)
        t0 = time.perf_counter()
        with np.errstate(over="ignore", invalid="ignore"):     # numba wraps and makes NaN silently
            out = python_of(self.kernel)(*(_as_numba_sees_it(a) for a in args))
        self.spent += time.perf_counter() - t0
        return _boxed(out)


class TieredModule(types.ModuleType):
    """A kernel module whose ``INTERPRETABLE`` kernels are :class:`Tiered` (the module may be
    a :func:`~irscale.enumerate.lazy.lazy_module`: it is imported on first use)."""

    def __init__(self, module: types.ModuleType):
        super().__init__("tiered kernels")
        self._module = module
        self._tiered: dict[str, Tiered] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._module, name)
        if name in getattr(self._module, "INTERPRETABLE", ()):
            tiered_kernel = self._tiered.get(name)
            if tiered_kernel is None:
                tiered_kernel = self._tiered.setdefault(name, Tiered(value))
            return tiered_kernel
        return value


_modules: dict[int, tuple[types.ModuleType, TieredModule]] = {}     # id(module) -> (it, its tiered view)


def tiered(module: types.ModuleType) -> TieredModule:
    """The kernel module ``module`` (``tiered(lazy_module("irscale.enumerate.kernels"))``) with
    its ``INTERPRETABLE`` kernels tiered: one object per module and process, so that
    budgets are per kernel."""
    with _lock:
        known = _modules.get(id(module))
        if known is None:
            known = _modules[id(module)] = (module, TieredModule(module))
    return known[1]
