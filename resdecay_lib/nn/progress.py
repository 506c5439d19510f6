"""Progress of a long loop, shown where it is read: a tqdm bar on a terminal, a ``tqdm.auto``
bar in Jupyter (only when asked for, so an executed notebook's stored outputs carry no
timings), one line every :data:`PROGRESS_EVERY_S` seconds in a log, or nothing.

:func:`progress_bar` is the one way the library reports progress: in
:func:`resdecay_lib.nn.probe.measure`, the training loop (:func:`resdecay_lib.training.train.train`)
and the record measurements (:mod:`resdecay_lib.analysis.pruning`).
"""
from __future__ import annotations

import sys
import time

from ..checks import Flag, Int, Text, accepts

__all__ = ["PROGRESS_EVERY_S", "progress_bar"]


#: seconds between two progress lines when the output is a log (not a terminal, not Jupyter)
PROGRESS_EVERY_S = 30.0


def _in_jupyter() -> bool:
    """Inside a Jupyter kernel (IPython's ZMQ shell)."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return type(shell).__name__ == "ZMQInteractiveShell"


def _is_tty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _LogLines:
    """A progress "bar" for a log: the items of ``it``, and one line on ``file`` every
    ``every_s`` seconds (done/total, elapsed, time left, the last ``set_postfix``), and one at
    the end when the loop took longer than ``every_s``. The tqdm calls the library makes
    (``set_postfix``, ``close``) do the same here."""

    def __init__(self, it, total, desc, initial=0, every_s=None, file=None):
        self.it, self.total, self.desc, self.n0 = it, total, desc, initial
        self.every = PROGRESS_EVERY_S if every_s is None else every_s
        self.file, self.postfix, self.n = file, "", initial
        self.t0 = self.last = time.monotonic()
        self.printed_at, self.closed = None, False

    def __iter__(self):
        for item in self.it:
            yield item
            self.n += 1
            if time.monotonic() - self.last >= self.every:
                self.line()
        self.close()

    def __len__(self):
        return self.total if self.total is not None else len(self.it)

    def set_postfix(self, **kw):
        self.postfix = ", ".join(f"{k} {v}" for k, v in kw.items())

    def line(self):
        t = time.monotonic() - self.t0
        done = self.n - self.n0
        total = f"/{self.total}" if self.total else ""
        pct = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        left = (f", about {(self.total - self.n) * t / done:.0f} s left"
                if self.total and done and self.n < self.total else "")
        print(f"{self.desc}: {self.n}{total}{pct}, {t:.0f} s{left}" + (f", {self.postfix}" if self.postfix else ""),
              file=self.file or sys.stderr, flush=True)
        self.last, self.printed_at = time.monotonic(), self.n

    def close(self):
        """A last line when the loop lasted ``every_s`` or more and its end is not printed yet."""
        if not self.closed and time.monotonic() - self.t0 >= self.every and self.n != self.printed_at:
            self.line()
        self.closed = True


@accepts(total=Int(0, none=True), desc=Text(empty=True), progress=Flag(none=True))
def progress_bar(it, total, desc, progress, initial: int = 0, file=None):
    """``it`` with progress shown where it is read:

    * on a terminal, a tqdm bar (``progress`` True or None);
    * in Jupyter, a ``tqdm.auto`` bar (a widget where ipywidgets is installed), only with
      ``progress=True``: None shows nothing there, so an executed notebook's stored outputs
      carry no timings;
    * in a log (output to a file or a pipe), one line every :data:`PROGRESS_EVERY_S` seconds
      (``progress`` True or None);
    * nothing with ``progress=False``.

    ``initial``: items already done (a resumed run); ``file``: where the bar or lines go
    (default stderr). The result iterates like ``it`` and has tqdm's ``set_postfix`` and ``close``.
    """
    file = file or sys.stderr
    if progress is False or (progress is None and _in_jupyter()):
        from tqdm import tqdm
        return tqdm(it, total=total, desc=desc, initial=initial, disable=True)
    if _in_jupyter():
        import warnings
        from tqdm import TqdmWarning
        with warnings.catch_warnings():      # without ipywidgets tqdm.auto warns, then draws text
            warnings.simplefilter("ignore", TqdmWarning)
            from tqdm.auto import tqdm       # a widget where ipywidgets is installed
        return tqdm(it, total=total, desc=desc, initial=initial, leave=False)
    if _is_tty(file):
        from tqdm import tqdm
        return tqdm(it, total=total, desc=desc, initial=initial, leave=False, file=file)
    return _LogLines(it, total, desc, initial=initial, file=file)
