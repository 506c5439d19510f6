"""nbval compares a glued figure by its data, not its PNG bytes.

myst-nb stores a glued figure as ``application/papermill.record/image/png``, which nbval would
compare byte for byte, and a PNG's bytes move with the last bits of another CPU's arithmetic.
Every chapter glues its figures through ``resdecay_lib.book.plots.glue_figure``, which also glues a
text digest of the plotted data (``<label>-data``); nbval compares that digest and, with this
hook, leaves the images out, as it already leaves out plain ``image/png``.
"""
from nbval.plugin import IPyNbFile

#: the image records myst-nb's glue stores: compared through their data digest instead
GLUED_IMAGES = ("application/papermill.record/image/png", "application/papermill.record/image/jpeg",
                "application/papermill.record/image/svg+xml")

_init = IPyNbFile.__init__


def _init_skipping_glued_images(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self.skip_compare = tuple(self.skip_compare) + GLUED_IMAGES


IPyNbFile.__init__ = _init_skipping_glued_images
