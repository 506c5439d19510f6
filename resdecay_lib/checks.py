"""Argument checks shared by the library's public functions, so each kind of bad input gets
one message everywhere. Pure Python: the base layer of the library (every other module may import it), free of torch.

Sizes have documented upper bounds (the ``MAX_*`` constants of the modules that use
them): a size far beyond them would not fail cleanly but hang or run out of memory.

Domains, declared once
----------------------
A public function states the valid values of its parameters once, beside its signature, and
the check reads that declaration::

    @accepts(step=Int(0), cfg=Instance("resdecay_lib.training.plan.TrainConfig", "a TrainConfig"))
    def lr_factor(step, cfg): ...

Before the body runs, every declared argument is checked against its :class:`Domain`
(:class:`Int`, :class:`Real`, :class:`Flag`, :class:`OneOf`, :class:`Text`, :class:`Name`,
:class:`PathArg`, :class:`Instance`, :class:`Callable`, :class:`Array`, :class:`Tensor`); a
bad one raises at once, in one line that names the parameter, says what it must be and
shows what it got. A dataclass declares its fields the same way (``DOMAINS``, read by
:func:`check_fields` in ``__post_init__``). :data:`DECLARED` lists every declaration by
qualified name: ``tests/package/test_fuzz.py`` reads it and draws values outside each domain.

One policy, everywhere in the library: a value of the wrong kind (a str where a number or a
TrainConfig is expected, a bool where an integer is) raises :class:`ArgumentTypeError`, a
``TypeError`` that is also a ``ValueError`` (so a caller catching either sees it), and a value of
the right kind outside its range ``ValueError``; never a bare ``TypeError``
(``tests/checks/test_checks.py`` reads every module for one). Bounds known only at run time use
:func:`check_int`, :func:`check_real` and :func:`check_items`, the same checks as the domains.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import math
import numbers
import os
import stat
from pathlib import Path
from types import MappingProxyType

__all__ = ["check_int", "check_real", "check_items", "cli_int", "ArgumentTypeError", "Domain", "Int",
           "Real", "Flag", "OneOf", "Text", "Name", "PathArg", "Instance", "Callable", "Array",
           "Tensor", "Ints", "DeviceName", "accepts", "check_fields", "declare", "domains_of", "DECLARED", "show",
           "check_out_file", "check_out_dir", "check_in_file", "path_kind", "one_line"]


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong kind. A ``TypeError``, and a ``ValueError`` too: the torch-side
    modules promised their callers one exception type for every bad argument (ValueError),
    and that promise still holds."""


def _is_int(value) -> bool:
    # bool is an Integral, but True as a depth is a bug, not a 1
    return not isinstance(value, bool) and isinstance(value, numbers.Integral)


def check_int(name: str, value, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an ``int`` in [minimum, maximum] (None: no upper bound): the :class:`Int`
    domain's check, for a bound known only at run time (``check_int("k_min", k_min, 1, L - 2)``).
    The one policy: a non-integer (a bool, a float, a str) raises :class:`ArgumentTypeError`,
    an integer outside the range ``ValueError``."""
    return int(Int(minimum, maximum).check(name, value))


def check_real(name: str, value, lo: float = -math.inf, hi: float = math.inf, *,
               lo_open: bool = False, hi_open: bool = False) -> float:
    """``value`` as a finite ``float`` in the interval from lo to hi (ends open or closed): the
    :class:`Real` domain's check, for bounds known only at run time. A non-real (bool, complex,
    str, None, an array) raises :class:`ArgumentTypeError`; NaN, an infinity or a value outside
    the interval ``ValueError``. The message names the parameter."""
    return float(Real(lo, hi, lo_open=lo_open, hi_open=hi_open).check(name, value))


def check_items(name: str, value, types, what: str) -> list:
    """``value`` as a list whose every item is an instance of ``types`` (a class or a tuple):
    any iterable but a str, bytes, a dict or one such item alone; :class:`ArgumentTypeError`
    naming ``name`` (and the first bad item's index) otherwise. ``what`` names one item ("a
    Claim")."""
    if isinstance(value, (str, bytes, dict, types)) or not hasattr(value, "__iter__"):
        raise ArgumentTypeError(f"{name} must be a list of {what.split(' ', 1)[-1]}, got {type(value).__name__} {show(value)}")
    items = list(value)
    for i, item in enumerate(items):
        if not isinstance(item, types):
            raise ArgumentTypeError(f"{name}[{i}] must be {what}, got {type(item).__name__} {show(item)}")
    return items


def cli_int(option: str, text, lo: int, hi: int) -> int:
    """A command-line option's text as an integer in [lo, hi], or ValueError naming the option."""
    try:
        value = int(text, 10)
    except (TypeError, ValueError):
        value = None
    if value is None or not lo <= value <= hi:
        raise ValueError(f"{option} must be an integer from {lo} to {hi}, got {show(text)}")
    return value


def show(value, limit: int = 80) -> str:
    """``repr(value)`` on one line, at most ``limit`` characters (a message stays one line)."""
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the message
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def one_line(exc) -> str:
    """An exception's (or any object's) message on one line: its whitespace runs made one space."""
    return " ".join(str(exc).split())


# ----------------------------------------------------------------------------- domains

class Domain:
    """The valid values of one parameter. ``check(name, value)`` returns ``value`` or raises
    :class:`ArgumentTypeError` (wrong kind) or ``ValueError`` (outside the range), in one line
    naming ``name``; ``none``: None is valid too."""
    none = False

    def describe(self) -> str:
        """What the parameter must be, as a message says it (``"an integer >= 1"``)."""
        return self.text() + (" (or None)" if self.none else "")

    def text(self) -> str:  # pragma: no cover - every domain overrides it
        raise NotImplementedError

    def check(self, name: str, value):
        if value is None and self.none:
            return value
        self._check(name, value)
        return value

    def _check(self, name, value):  # pragma: no cover
        raise NotImplementedError

    def wrong_kind(self, name, value, why: str = ""):
        raise ArgumentTypeError(f"{name} must be {self.describe()}, got {type(value).__name__} "
                                f"{show(value)}{why}")

    def outside(self, name, value, why: str = ""):
        raise ValueError(f"{name} must be {self.describe()}, got {show(value)}{why}")

    def __repr__(self):
        return f"{type(self).__name__}({self.describe()})"


class Int(Domain):
    """An integer (not a bool) in [lo, hi] (None: unbounded)."""

    def __init__(self, lo: int | None = None, hi: int | None = None, *, none: bool = False):
        self.lo, self.hi, self.none = lo, hi, none

    def text(self):
        if self.lo is not None and self.hi is not None:
            return f"an integer in [{self.lo}, {self.hi}]"
        if self.lo is not None:
            return f"an integer >= {self.lo}"
        return "an integer" if self.hi is None else f"an integer <= {self.hi}"

    def _check(self, name, value):
        if not _is_int(value):
            self.wrong_kind(name, value)
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            self.outside(name, value)


class Real(Domain):
    """A real number (not a bool) in the interval from lo to hi, ends open or closed; never NaN.
    ``finite``: no infinity either (an interval's bound may be infinite: ``finite=False``)."""

    def __init__(self, lo: float = -math.inf, hi: float = math.inf, *, lo_open: bool = False,
                 hi_open: bool = False, finite: bool = True, none: bool = False):
        self.lo, self.hi, self.lo_open, self.hi_open = float(lo), float(hi), lo_open, hi_open
        self.finite, self.none = finite, none

    def text(self):
        kind = "a finite real number" if self.finite else "a real number (an infinity allowed, not NaN)"
        if self.lo == -math.inf and self.hi == math.inf:
            return kind
        lo_open = self.lo_open or (self.finite and self.lo == -math.inf)   # an excluded infinity
        hi_open = self.hi_open or (self.finite and self.hi == math.inf)
        return (f"{kind} in {'(' if lo_open else '['}{self.lo:g}, {self.hi:g}"
                f"{')' if hi_open else ']'}")

    def _check(self, name, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            self.wrong_kind(name, value)
        v = float(value)
        if math.isnan(v) or (self.finite and math.isinf(v)):
            self.outside(name, value)
        if not ((v > self.lo if self.lo_open else v >= self.lo) and (v < self.hi if self.hi_open else v <= self.hi)):
            self.outside(name, value)


class Flag(Domain):
    """True or False (a bool, not 1 or "yes")."""

    def __init__(self, *, none: bool = False):
        self.none = none

    def text(self):
        return "True or False"

    def _check(self, name, value):
        if not isinstance(value, bool):
            self.wrong_kind(name, value)


class OneOf(Domain):
    """One of a fixed set of values (shown sorted when they sort)."""

    def __init__(self, values, *, none: bool = False):
        self.values = tuple(values)
        self.none = none

    def text(self):
        try:
            shown = sorted(self.values)
        except TypeError:
            shown = list(self.values)
        return f"one of {shown}"

    def _check(self, name, value):
        kinds = {type(v) for v in self.values}
        if not any(isinstance(value, k) for k in kinds) or isinstance(value, bool) and bool not in kinds:
            self.wrong_kind(name, value)
        if not any(type(value) is type(v) and value == v for v in self.values):
            self.outside(name, value)


class Text(Domain):
    """A str (non-empty unless ``empty``)."""

    def __init__(self, *, empty: bool = False, none: bool = False):
        self.empty, self.none = empty, none

    def text(self):
        return "a string" if self.empty else "a non-empty string"

    def _check(self, name, value):
        if not isinstance(value, str):
            self.wrong_kind(name, value)
        if not self.empty and not value.strip():
            self.outside(name, value)


class Name(Domain):
    """A plain name that stays inside the folder it names a file in: a non-empty str without a
    path separator or NUL, not ``.`` or ``..`` (and without any of ``forbid``)."""

    def __init__(self, forbid: tuple = (), *, none: bool = False):
        self.forbid, self.none = tuple(forbid), none

    def text(self):
        extra = "".join(f", without {f!r}" for f in self.forbid)
        return f"a plain name (a non-empty string without '/', '\\\\' or NUL, not '.' or '..'{extra})"

    def _check(self, name, value):
        if not isinstance(value, str):
            self.wrong_kind(name, value)
        bad = ("/", "\\", "\x00") + self.forbid
        if not value.strip() or value in (".", "..") or any(b in value for b in bad) \
                or (os.sep in value) or (os.altsep and os.altsep in value):
            self.outside(name, value)


class PathArg(Domain):
    """A file-system path: a non-empty str or an ``os.PathLike``."""

    def __init__(self, *, none: bool = False):
        self.none = none

    def text(self):
        return "a path (a non-empty str or os.PathLike)"

    def _check(self, name, value):
        if not isinstance(value, (str, os.PathLike)):
            self.wrong_kind(name, value)
        if isinstance(value, str) and not value.strip():
            self.outside(name, value)


def _resolve(spec):
    if isinstance(spec, str):
        module, _, attr = spec.rpartition(".")
        return getattr(importlib.import_module(module), attr)
    return spec


class Instance(Domain):
    """An instance of one of the library's (or torch's) types. ``types``: a class, a dotted
    name (resolved when first checked, so modules need not import each other), or a tuple of
    them; ``what``: how a message names it ("a TrainConfig")."""

    def __init__(self, types, what: str, *, none: bool = False):
        self.types = types if isinstance(types, tuple) else (types,)
        self.what, self.none = what, none

    def classes(self) -> tuple:
        return tuple(_resolve(t) for t in self.types)

    def text(self):
        return self.what

    def _check(self, name, value):
        if not isinstance(value, self.classes()):
            self.wrong_kind(name, value)


class Callable(Domain):
    """Anything callable."""

    def __init__(self, what: str = "a callable", *, none: bool = False):
        self.what, self.none = what, none

    def text(self):
        return self.what

    def _check(self, name, value):
        if not callable(value):
            self.wrong_kind(name, value)


class Ints(Domain):
    """A list, tuple, set, range or 1-D integer numpy array of integers (not bools), each in
    [lo, hi]; at least ``min_len`` of them."""

    def __init__(self, lo: int | None = None, hi: int | None = None, *, min_len: int = 0,
                 none: bool = False):
        self.item, self.min_len, self.none = Int(lo, hi), min_len, none

    def text(self):
        return (f"a list of {self.item.text().replace('an integer', 'integers')}"
                + (f", at least {self.min_len}" if self.min_len else ""))

    def _check(self, name, value):
        if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 1 \
                and getattr(getattr(value, "dtype", None), "kind", "") in ("i", "u"):
            value = value.tolist()            # a 1-D integer numpy array
        if not isinstance(value, (list, tuple, range, set, frozenset)) or not all(_is_int(v) for v in value):
            self.wrong_kind(name, value)
        if len(value) < self.min_len or not all(
                (self.item.lo is None or v >= self.item.lo) and (self.item.hi is None or v <= self.item.hi)
                for v in value):
            self.outside(name, value)


class DeviceName(Domain):
    """A device by name: 'auto', 'cpu', 'cuda' or 'cuda:N' (whether CUDA is there is checked
    where the device is resolved, :func:`resdecay_lib.nn.device.resolve_device`)."""

    def __init__(self, *, none: bool = False):
        self.none = none

    def text(self):
        return "'auto', 'cpu', 'cuda' or 'cuda:N'"

    def _check(self, name, value):
        if not isinstance(value, str):
            self.wrong_kind(name, value)
        if value not in ("auto", "cpu", "cuda") and not (value.startswith("cuda:") and value[5:].isascii() and value[5:].isdigit()):
            self.outside(name, value)


class Array(Domain):
    """A real array (a list, tuple or numpy array of real numbers): ``ndim`` dimensions (None:
    any), at least ``min_size`` entries along each axis, finite unless ``finite=False``,
    positive if ``positive``."""

    def __init__(self, ndim: int | None = None, min_size: int = 1, *, finite: bool = True,
                 positive: bool = False, what: str | None = None, none: bool = False):
        self.ndim, self.min_size, self.finite, self.positive = ndim, min_size, finite, positive
        self.what, self.none = what, none

    def text(self):
        if self.what:
            return self.what
        shape = "an array" if self.ndim is None else f"a {self.ndim}-D array"
        quality = " and ".join(q for q, on in (("finite", self.finite), ("positive", self.positive)) if on)
        return (f"{shape} of at least {self.min_size} {quality + ' ' if quality else ''}real number"
                f"{'s' if self.min_size != 1 else ''}" + (" per axis" if self.ndim not in (None, 1) else ""))

    def _check(self, name, value):
        import numpy as np
        if isinstance(value, (str, bytes, dict)) or value is None:
            self.wrong_kind(name, value)
        try:
            a = np.asarray(value)
            if a.dtype.kind not in "biuf" or a.dtype.kind == "b":
                raise TypeError
            a = a.astype(np.float64)
        except (TypeError, ValueError):
            self.wrong_kind(name, value)
        if (self.ndim is not None and a.ndim != self.ndim) or a.ndim == 0 and self.ndim != 0 \
                or any(n < self.min_size for n in a.shape):
            self.outside(name, value, f" (shape {a.shape})")
        if self.finite and not np.all(np.isfinite(a)):
            self.outside(name, value, " (it holds NaN or an infinity)")
        if self.positive and not np.all(a > 0):
            self.outside(name, value, " (it holds a value <= 0)")


class Tensor(Domain):
    """A torch tensor: ``dtype`` "float" (floating point) or "int" (int64/int32 token ids),
    ``ndim`` dimensions (an int or a tuple of the valid ones), non-empty, ``min_shape`` at least
    on its leading axes, finite unless ``finite=False``; ``what``: how a message names its
    shape ("a float tensor [L+1, B, T, D]")."""

    def __init__(self, what: str, *, dtype: str = "float", ndim=None, min_shape: tuple = (),
                 finite: bool = True, none: bool = False):
        self.what, self.dtype, self.min_shape, self.finite, self.none = what, dtype, min_shape, finite, none
        self.ndim = (ndim,) if isinstance(ndim, int) else ndim

    def text(self):
        return self.what

    def _check(self, name, value):
        torch = importlib.import_module("torch")
        if not isinstance(value, torch.Tensor):
            self.wrong_kind(name, value)
        ok_dtype = value.is_floating_point() if self.dtype == "float" else value.dtype in (torch.int64, torch.int32)
        if not ok_dtype:
            self.wrong_kind(name, value, f" of dtype {value.dtype}")
        shape = tuple(value.shape)
        if (self.ndim is not None and value.dim() not in self.ndim) or value.numel() == 0 \
                or any(n < m for n, m in zip(shape, self.min_shape)):
            raise ValueError(f"{name} must be {self.describe()} and non-empty, got shape {shape}")
        if self.finite and self.dtype == "float" and not bool(torch.isfinite(value).all()):
            raise ValueError(f"{name} must be {self.describe()}: it holds NaN or an infinity")


# ----------------------------------------------------------------------------- declarations

#: every declaration, by qualified name: a function's wrapper (``.domains``) or a class
#: (``.DOMAINS``); tests/package/test_fuzz.py reads it
DECLARED: dict = {}


def domains_of(obj) -> MappingProxyType:
    """The declared domains of a function made by :func:`accepts` or of a declared class."""
    d = getattr(obj, "domains", None)
    if d is None:
        d = getattr(obj, "DOMAINS", None)
    if d is None:
        raise ValueError(f"{getattr(obj, '__qualname__', obj)!r} declares no domains")
    return MappingProxyType(dict(d))


def accepts(**domains):
    """Decorator: check each named argument against its :class:`Domain` before the function
    runs (defaults are not checked: they are valid by construction). The wrapper keeps the
    function's name, signature and docstring, and is listed in :data:`DECLARED`."""
    def wrap(fn):
        sig = inspect.signature(fn)
        unknown = set(domains) - set(sig.parameters)
        if unknown:
            raise TypeError(f"{fn.__qualname__} has no parameters {sorted(unknown)}")

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"{fn.__name__}(): {exc}") from None
            given = bound.arguments
            for name, domain in domains.items():
                if name in given:
                    domain.check(name, given[name])
            return fn(*args, **kwargs)

        checked.domains = MappingProxyType(dict(domains))
        DECLARED[f"{fn.__module__}.{fn.__qualname__}"] = checked
        return checked
    return wrap


def declare(cls):
    """Class decorator: list a class whose ``DOMAINS`` its ``__post_init__`` checks (with
    :func:`check_fields`) in :data:`DECLARED`."""
    if not isinstance(getattr(cls, "DOMAINS", None), dict):
        raise TypeError(f"{cls.__qualname__} has no DOMAINS table")
    DECLARED[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return cls


def check_fields(obj, domains: dict, error=None) -> None:
    """Check each field of ``obj`` named in ``domains``; ``error`` (e.g. ValueError, for
    configurations read from files whose readers catch ValueError) replaces the exception
    class, not the message."""
    for name, domain in domains.items():
        try:
            domain.check(name, getattr(obj, name))
        except (TypeError, ValueError) as exc:
            if error is None or isinstance(exc, error):
                raise
            raise error(str(exc)) from None


# ----------------------------------------------------------------------------- output paths

def _first_existing(path: Path) -> Path:
    for p in (path, *path.parents):
        if p.exists():
            return p
    return Path(".")


def path_kind(path: Path) -> str | None:
    """What is at ``path`` (symbolic links followed), in words; None when nothing is (or it
    cannot be looked at). Never opens it: opening a FIFO blocks until a writer comes."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    for test, what in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "the folder"),
                       (stat.S_ISFIFO, "the FIFO (named pipe)"), (stat.S_ISSOCK, "the socket"),
                       (stat.S_ISCHR, "the character device"), (stat.S_ISBLK, "the block device")):
        if test(mode):
            return what
    return "the special file"


def check_in_file(name: str, value, *, missing_ok: bool = False) -> Path:
    """A file to be read: a non-empty str or ``os.PathLike`` naming a regular file (symbolic
    links followed) that this process may read. Returns it as a ``Path``.

    Looked at with ``os.stat`` only, never opened: a FIFO given as a path would block the
    reader forever, a device would be read from, an ``int`` would be taken by ``open()`` as an
    open file descriptor (and closed). So an ``int``, a bool, bytes or anything but a str or
    ``os.PathLike`` raises :class:`ArgumentTypeError`; an empty path, a folder, a FIFO, a
    socket, a device, an unreadable file or (unless ``missing_ok``) a missing one raise
    ``ValueError``; each message one line naming ``name``. ``missing_ok``: a path where
    nothing is (or one under a file, where nothing can be) is returned as it is, for a reader
    to whom "absent" is an answer."""
    if isinstance(value, os.PathLike) and not isinstance(value, Path):
        try:
            fs = os.fspath(value)
        except Exception as exc:   # a broken __fspath__
            raise ArgumentTypeError(f"{name} must be a file path (a non-empty str or os.PathLike), got "
                                    f"{type(value).__name__} {show(value)} ({one_line(exc)})") from None
    else:
        fs = value
    if not isinstance(fs, (str, Path)):
        raise ArgumentTypeError(f"{name} must be a file path (a non-empty str or os.PathLike), got "
                                f"{type(value).__name__} {show(value)}")
    if isinstance(fs, str) and (not fs.strip() or "\x00" in fs):
        raise ValueError(f"{name} must be a file path (a non-empty str without NUL), got {show(value)}")
    path = Path(fs)
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        if missing_ok:
            return path
        raise ValueError(f"{name} must be an existing file, got {str(path)!r}: nothing is there") from None
    except OSError as exc:
        raise ValueError(f"{name} cannot be read: {str(path)!r} ({type(exc).__name__}: {one_line(exc.strerror or exc)})") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"{name} must be a regular file to read, got {path_kind(path) or 'something else'} {str(path)!r}")
    if not os.access(path, os.R_OK):
        raise ValueError(f"{name} cannot be read: the file {str(path)!r} is not readable")
    return path


def check_out_file(name: str, value) -> Path:
    """A file to be written: a non-empty path that is not a folder, nor a FIFO, a socket or a
    device (a write would block, or reach the device), whose folder exists or can be created
    (no part of it is a file) and is writable. ``ValueError`` naming ``name`` otherwise;
    nothing is created."""
    if not isinstance(value, (str, os.PathLike)) or isinstance(value, str) and not value.strip():
        raise ValueError(f"{name} must be a file path (a non-empty str or os.PathLike), got {show(value)}")
    path = Path(value)
    if path.is_dir():
        raise ValueError(f"{name} must be a file path, got the folder {str(path)!r}")
    kind = path_kind(path)
    if kind not in (None, "a regular file"):    # writing to a FIFO blocks, to a device reaches the device
        raise ValueError(f"{name} must be a regular file path, got {kind} {str(path)!r}")
    base = _first_existing(path.parent)
    if not base.is_dir():
        raise ValueError(f"{name} cannot be written: {str(base)!r} is a file, not a folder")
    if not os.access(base, os.W_OK | os.X_OK):
        raise ValueError(f"{name} cannot be written: the folder {str(base)!r} is not writable")
    return path


def check_out_dir(name: str, value) -> Path:
    """A folder to write into (created if absent): a non-empty path that is not a file and
    has no file among its parents, writable. ``ValueError`` naming ``name`` otherwise."""
    if not isinstance(value, (str, os.PathLike)) or isinstance(value, str) and not value.strip():
        raise ValueError(f"{name} must be a folder path (a non-empty str or os.PathLike), got {show(value)}")
    path = Path(value)
    base = _first_existing(path)
    if not base.is_dir():
        what = "the file" if base == path else "a path under the file"
        raise ValueError(f"{name} must be a folder (created if absent), got {what} {str(base)!r}")
    if not os.access(base, os.W_OK | os.X_OK):
        raise ValueError(f"{name} cannot be written: the folder {str(base)!r} is not writable")
    return path
