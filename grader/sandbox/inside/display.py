"""Display libraries in the worker: the libraries a task lists as display-only (task.yaml
``imports: display``; matplotlib and seaborn unless it says otherwise), which draw pictures
nobody here looks at.

- Installed, a display library runs as it is, headless: matplotlib's backend is the
  grader's own (Agg, drawing only when asked to save; ``plt.show()`` and ``fig.show()``
  return at once, with no window and no warning; a backend the code asks for, TkAgg say, is
  this one too), its configuration and font cache go to the worker's private folder, and
  fontconfig reads an empty configuration of ours (no "cannot load config" line on stderr;
  matplotlib still finds the system's fonts by their folders). What would let it fetch a
  module or a function by a name the scan cannot read is closed: figure hooks (the rcParam
  ``figure.hooks``, ``module:function`` names called with every new figure) are looked up
  in nothing, and the backend registry loads only this backend. Its own log lines below
  errors (the font cache being built) are not printed.
- Not installed, it is a stand-in (``StandIn``): ``import matplotlib.pyplot as plt`` and any
  submodule import, and every attribute, call, item, operator and ``with`` of what they give,
  do nothing and give the stand-in again; unpacking gives as many stand-ins as the code
  unpacks (``fig, (a, b) = plt.subplots(1, 2)``), a loop over one runs no time. It never
  calls, evaluates, imports or keeps anything it is given. The worker says which stand-ins
  were imported, so that the report can say the plots were not drawn.

Either way, the import statement runs as any other, and the evidence of it is the same;
the imports check lets it pass unless the functions under test reach the library
(checks/imports.py). Each of these is decided once per
worker, before any student code runs (``prepare``), from the folders the runtime has: a
file the submission writes cannot make a library present or absent, and nothing a
submission names itself makes its frames a library's (``library_frame`` goes by the
folder the library was found in).
"""

from __future__ import annotations

import dis
import importlib.machinery
import logging
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from importlib.abc import Loader
from types import BuiltinFunctionType, FrameType, FunctionType, MethodType, ModuleType
from typing import Any, cast

BACKEND = "_grader_headless"  # the module matplotlib loads as its backend (module://)
UNPACKS = ("UNPACK_SEQUENCE", "UNPACK_EX")
_UNPACK_CACHE_CAP = 4096

_names: tuple[str, ...] = ()  # the task's display libraries (top-level names)
_present: dict[str, tuple[str, ...]] = {}  # installed ones: the folders their code is in
_absent: frozenset[str] = frozenset()  # listed and not installed: served by stand-ins
_served: set[str] = set()  # stand-ins imported so far
_folders: tuple[str, ...] = ()  # every installed display library's folders (+ sep)
_unpacked_at: dict = {}  # (code, offset) -> how many values are unpacked there
_OWN_FILE = __file__


def prepare(names: Iterable[object]) -> None:
    """Decide, for this worker and before any student code, which display libraries are
    installed (found by the runtime's own path finder, from the folders of ``sys.path`` as
    the worker started) and put the finder that makes them headless or stands in for them
    first in ``sys.meta_path``. Called once per worker; later calls change nothing."""
    global _names, _present, _absent, _folders
    if _names or not names:
        return
    _names = tuple(n for n in names if type(n) is str and n.isidentifier())[:32]
    present: dict[str, tuple[str, ...]] = {}
    absent = set()
    for name in _names:
        try:
            spec = importlib.machinery.PathFinder.find_spec(name)
        except (ImportError, ValueError, OSError):
            spec = None
        if spec is None:
            absent.add(name)
            continue
        places = list(spec.submodule_search_locations or ()) or (
            [os.path.dirname(spec.origin)] if spec.origin else []
        )
        if not spec.submodule_search_locations and spec.origin:  # a single-file module
            places = [spec.origin]
        found = []
        for place in places:
            for form in (place, os.path.realpath(place)):
                if form and form not in found:
                    found.append(form)
        present[name] = tuple(found)
    _present, _absent = present, frozenset(absent)
    _folders = tuple(f if f.endswith(".py") else f + os.sep for fs in present.values() for f in fs)
    sys.meta_path.insert(0, _Finder())
    if "matplotlib" in present:
        _headless_already_imported()


def _headless_already_imported() -> None:
    """A framework the worker imported before any student code (preload.py) may have
    imported matplotlib itself, before the finder was in place (Keras 3 does, for its
    plotting helpers): what the finder does to matplotlib on import is done now to what is
    imported, so that its backend registry loads only the headless backend and fontconfig
    reads our configuration (else it says "Fontconfig error" in the student's output)."""
    if "matplotlib" not in sys.modules:
        return
    _headless_environment()
    for name, made_headless in _HEADLESS.items():
        module = sys.modules.get(name)
        if module is not None:
            made_headless(module)
    params: Any = getattr(sys.modules["matplotlib"], "rcParams", None)
    try:
        params["backend"] = f"module://{BACKEND}"  # (read when pyplot picks its backend)
    except Exception:
        pass  # (a matplotlib without rcParams: nothing imported picks a backend)


def library_frame(frame: FrameType) -> bool:
    """Whether ``frame`` runs code of an installed display library (by the folder its code
    was loaded from), or this module's code that stands between the submission and one (a
    wrapper of pyplot's, a stand-in)."""
    if not _names:
        return False
    name = frame.f_code.co_filename
    return name == _OWN_FILE or (bool(_folders) and name.startswith(_folders))


def stand_ins() -> list[str]:
    """The display libraries whose stand-in the submission imported."""
    return sorted(_served)


def made_by_display(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` belongs to a display library: one of its modules, functions or
    classes, or an object of one of its classes (a Figure, Axes, a stand-in), or a numpy
    array of such objects (``plt.subplots(2, 2)``'s axes). Reads types and module names
    only; a value that will not say is not the library's."""
    if not _names or depth > 4:
        return False
    try:
        kind = type(value)
        if issubclass(kind, ModuleType):
            owner = value.__name__
        elif kind in _CALLABLES or isinstance(value, type):
            owner = getattr(value, "__module__", None)
        elif kind.__name__ == "ndarray" and value.dtype.kind == "O" and value.size:
            return made_by_display(value.flat[0], depth + 1)
        else:
            owner = getattr(kind, "__module__", None)
        return type(owner) is str and owner.partition(".")[0] in _names
    except Exception:
        return False


_CALLABLES = (FunctionType, BuiltinFunctionType, MethodType)


# --------------------------------------------------------------------------- the finder


class _Finder:
    """First on ``sys.meta_path``: serves stand-ins for absent display libraries, the
    grader's backend for matplotlib, and wraps the loaders of matplotlib and its pyplot to
    make them headless. Every other name is left to the finders after it."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        top = fullname.partition(".")[0]
        if top in _absent:
            # (the loaders here are loaders by what they do, not by class: cast for the type only)
            return importlib.machinery.ModuleSpec(
                fullname, cast(Loader, _StandInLoader(top)), is_package=True
            )
        if fullname == BACKEND and "matplotlib" in _present:
            return importlib.machinery.ModuleSpec(fullname, cast(Loader, _BackendLoader()))
        if fullname in _HEADLESS and top in _present:
            if fullname == "matplotlib":
                _headless_environment()
            spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = cast(Loader, _Then(spec.loader, _HEADLESS[fullname]))
            return spec
        return None

    def invalidate_caches(self) -> None:
        pass


class _Then:
    """A loader that runs another and then makes the module headless."""

    def __init__(self, loader: Loader, then: Callable[[ModuleType], None]) -> None:
        self._loader, self._then = loader, then

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._then(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename, is_package, resource readers
        return getattr(self._loader, name)


def _headless_environment() -> None:
    """Before matplotlib is imported: its backend, its folder, fontconfig's configuration."""
    home = os.environ.get("HOME") or os.getcwd()
    folder = os.path.join(home, ".matplotlib")
    try:
        import fonts  # (a module beside this one: the worker put their folder on the path)

        os.makedirs(folder, exist_ok=True)
        fonts.quiet_fonts_in(folder)
    except OSError:
        pass  # (no folder: matplotlib makes a temporary one, and says so on stderr)
    os.environ["MPLCONFIGDIR"] = folder
    os.environ["MPLBACKEND"] = f"module://{BACKEND}"


class _Nothing:
    """What a figure hook is looked up in here: every name is this again, and calling it
    does nothing."""

    __slots__ = ()

    def __getattr__(self, name: str) -> _Nothing:
        return self

    def __call__(self, *args: object, **kwargs: object) -> _Nothing:
        return self


_NOTHING = _Nothing()


def _matplotlib_loaded(module: ModuleType) -> None:
    logging.getLogger("matplotlib").setLevel(logging.ERROR)  # (the font cache being built)


def _registry_loaded(module: ModuleType) -> None:
    """The backend registry loads any module named ``module://NAME`` and gives it to whoever
    asks (``backend_registry.load_backend_module``): here it loads the headless backend,
    whatever it is asked for."""
    registry = getattr(module, "BackendRegistry", None)
    if registry is None or not callable(getattr(registry, "load_backend_module", None)):
        return

    load = importlib.import_module

    def load_backend_module(self: object, backend: str) -> ModuleType:
        return load(BACKEND)

    registry.load_backend_module = load_backend_module


def _pyplot_loaded(module: Any) -> None:  # (pyplot, whose functions are replaced)
    """Every backend asked for is the headless one, and figure hooks are looked up in
    nothing: pyplot finds a hook's module with its global ``importlib``, which each call of
    ``figure`` sets to ``_NOTHING`` again before it runs (code that runs during the call
    can rebind it only to what it already holds)."""
    switch, figure = getattr(module, "switch_backend", None), getattr(module, "figure", None)
    if not callable(switch) or not callable(figure):
        return
    namespace = vars(module)

    def switch_backend(newbackend: str) -> Any:
        return switch(f"module://{BACKEND}")

    def figure_without_hooks(*args: Any, **kwargs: Any) -> Any:
        namespace["importlib"] = _NOTHING
        return figure(*args, **kwargs)

    for made, like in ((switch_backend, switch), (figure_without_hooks, figure)):
        made.__doc__, made.__name__, made.__qualname__ = like.__doc__, like.__name__, like.__qualname__
        made.__module__ = like.__module__
    namespace["importlib"] = _NOTHING
    module.switch_backend, module.figure = switch_backend, figure_without_hooks


_HEADLESS = {
    "matplotlib": _matplotlib_loaded,
    "matplotlib.backends.registry": _registry_loaded,
    "matplotlib.pyplot": _pyplot_loaded,
}


class _BackendLoader:
    """matplotlib's backend here: Agg, whose figures are shown to nobody."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: Any) -> None:  # (the backend module, filled in here)
        from matplotlib.backend_bases import FigureManagerBase
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        class FigureManager(FigureManagerBase):
            def show(self) -> None:  # fig.show(): no window, and nothing to warn about
                pass

            @classmethod
            def pyplot_show(cls, *args: object, **kwargs: object) -> None:  # plt.show()
                pass

        class FigureCanvas(FigureCanvasAgg):
            manager_class = FigureManager

        def show(*args: object, **kwargs: object) -> None:
            pass

        module.FigureCanvas, module.FigureManager, module.show = FigureCanvas, FigureManager, show
        module.backend_version = "agg (grader, headless)"


# --------------------------------------------------------------------------- stand-ins


class _StandInLoader:
    def __init__(self, library: str) -> None:
        self.library = library

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return _stand_in_module(self.library, spec.name)

    def exec_module(self, module: ModuleType) -> None:
        _served.add(self.library)


_classes: dict[str, tuple] = {}


def _kinds(library: str) -> tuple:
    """One library's stand-in (its one value), the base it gives a class that subclasses it,
    and the class of its modules: classes named as the library's own, so that a value of
    one is known as the library's wherever a value's type is asked."""
    if library not in _classes:
        own = {"__module__": library, "_library": library}
        base = type("NotInstalledBase", (_StandInBase,), dict(own))
        thing = type("NotInstalled", (StandIn,), dict(own, _base=base, __slots__=()))
        module = type("NotInstalledModule", (_StandInModule,), dict(own))
        _classes[library] = (object.__new__(thing), base, module)
    return _classes[library]


def _stand_in(library: str) -> StandIn:
    return _kinds(library)[0]


def _stand_in_module(library: str, name: str) -> ModuleType:
    module = _kinds(library)[2](name)
    module.__all__ = []  # a star import gets no names (the library's are not known here)
    return module


def _said(library: str) -> str:
    return f"<{library} is not installed here: nothing was drawn>"


class _StandInModule(ModuleType):
    """A module of a display library that is not installed: its every attribute is the
    library's stand-in."""

    _library: str

    def __getattr__(self, name: str) -> StandIn:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stand_in(self._library)

    def __repr__(self) -> str:
        return _said(self._library)


class StandIn:
    """A value of a display library that is not installed: whatever is done with it does
    nothing and gives it again. It is false, empty and zero, so that no loop waits on it
    (``while plt.get_fignums(): ...``)."""

    __slots__ = ()
    _base: type
    _library: str

    def __getattr__(self, name: str) -> StandIn:
        if name.startswith("__") and name.endswith("__"):  # protocols it does not have
            raise AttributeError(name)
        return self

    def __setattr__(self, name: str, value: object) -> None:
        pass

    def __delattr__(self, name: str) -> None:
        pass

    def __call__(self, *args: object, **kwargs: object) -> StandIn:
        return self

    def __getitem__(self, key: object) -> StandIn:
        return self

    def __setitem__(self, key: object, value: object) -> None:
        pass

    def __delitem__(self, key: object) -> None:
        pass

    def __iter__(self) -> Iterator[StandIn]:
        return iter((self,) * _unpacked(sys._getframe(1)))

    def __len__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return False

    def __contains__(self, item: object) -> bool:
        return False

    def __enter__(self) -> StandIn:
        return self

    def __exit__(self, *exc: object) -> None:  # (an exception inside goes on)
        return None

    def __int__(self) -> int:
        return 0

    __index__ = __int__

    def __float__(self) -> float:
        return 0.0

    def __complex__(self) -> complex:
        return 0j

    def __repr__(self) -> str:
        return _said(self._library)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __mro_entries__(self, bases: tuple[type, ...]) -> tuple[type]:
        """``class Mine(colors.Normalize): ...``: a class of the student's, on a base that
        does nothing."""
        return (type(self)._base,)

    def _same(self, *args: object) -> StandIn:
        return self

    def _no(self, other: object) -> bool:
        return False

    __lt__ = __le__ = __gt__ = __ge__ = _no

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __matmul__ = __rmatmul__ = _same
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _same
    __pow__ = __rpow__ = __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _same
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __neg__ = __pos__ = __abs__ = _same
    __invert__ = __round__ = _same


class _StandInBase:
    """The base of a student's class that subclasses a stand-in: it takes any arguments and
    its missing attributes are the stand-in."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    _library: str

    def __getattr__(self, name: str) -> StandIn:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stand_in(self._library)

    def __call__(self, *args: object, **kwargs: object) -> StandIn:
        return _stand_in(self._library)


def _unpacked(frame: FrameType) -> int:
    """How many values the code that asks to iterate a stand-in unpacks there: ``a, b =``
    two, ``a, *rest, b =`` two (the starred name gets none); a loop or anything else none."""
    try:
        code, offset = frame.f_code, frame.f_lasti
        key = (code, offset)
        if key not in _unpacked_at:
            count = 0
            for instruction in dis.get_instructions(code):
                if instruction.offset == offset:
                    if instruction.opname == "UNPACK_SEQUENCE":
                        count = int(instruction.arg or 0)
                    elif instruction.opname == "UNPACK_EX":
                        arg = int(instruction.arg or 0)
                        count = (arg & 0xFF) + (arg >> 8)
                    break
            if len(_unpacked_at) >= _UNPACK_CACHE_CAP:
                _unpacked_at.clear()
            _unpacked_at[key] = min(count, 1 << 16)
        return _unpacked_at[key]
    except Exception:
        return 0
