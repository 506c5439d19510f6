"""nbval's two adjustments for this book: glued figures compared by their data, and kernels that
start again when a start loses a race for a port.

**Figures by their data.** myst-nb stores a glued figure as
``application/papermill.record/image/png``, which nbval would compare byte for byte, and a PNG's
bytes move with the last bits of another CPU's arithmetic. Every chapter glues its figures through
``resdecay_lib.book.plots.glue_figure``, which also glues a text digest of the plotted data
(``<label>-data``); nbval compares that digest and, with this hook, leaves the images out, as it
already leaves out plain ``image/png``.

**Kernel starts.** ``make test`` runs nbval on two xdist workers, so two kernels can start at the
same moment. jupyter_client picks a kernel's five TCP ports as free ones and writes them to the
connection file; the kernel binds them a moment later, and when the other worker's kernel took one
in between, the kernel exits ("Kernel died before replying to kernel_info", with zmq's "Address
already in use" on the kernel's stderr, which nbval sends to /dev/null). A fresh CI run lost every
cell of Chapter 5 to it. A start that fails is shut down and tried again with new ports, up to
``KERNEL_STARTS`` times, with a warning each time; a kernel that dies that often fails as before.
"""
import warnings

from nbval import plugin as nbval_plugin
from nbval.kernel import RunningKernel
from nbval.plugin import IPyNbFile

#: the image records myst-nb's glue stores: compared through their data digest instead
GLUED_IMAGES = ("application/papermill.record/image/png", "application/papermill.record/image/jpeg",
                "application/papermill.record/image/svg+xml")

#: how many times a notebook's kernel is started before its start counts as failed
KERNEL_STARTS = 3

_init = IPyNbFile.__init__


def _init_skipping_glued_images(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self.skip_compare = tuple(self.skip_compare) + GLUED_IMAGES


IPyNbFile.__init__ = _init_skipping_glued_images


class RestartingKernel(RunningKernel):
    """nbval's kernel, started again (new ports) when a start fails, at most ``KERNEL_STARTS`` times."""

    def __init__(self, *args, **kwargs):
        for attempt in range(1, KERNEL_STARTS + 1):
            try:
                super().__init__(*args, **kwargs)
                return
            except RuntimeError as error:
                # start_new_kernel shuts down a kernel that never answered; one that answered but
                # whose IOPub channel did not come up is still running and must go before a retry
                if getattr(self, "km", None) is not None:
                    self.kc.stop_channels()
                    self.km.shutdown_kernel(now=True)
                    del self.km, self.kc
                if attempt == KERNEL_STARTS:
                    raise
                warnings.warn(f"kernel start {attempt} of {KERNEL_STARTS} failed ({error}); starting again",
                              RuntimeWarning, stacklevel=2)


# plugin.py imported the name RunningKernel, so the name there is the one to replace
nbval_plugin.RunningKernel = RestartingKernel
