"""n-gram baselines: what a trained character model must beat.

:func:`ngram_loss` fits an order-n character model with add-alpha smoothing on a training
token array and returns its mean next-character cross-entropy (nats/char) on a validation
array:

    p(c | h) = (N(h, c) + alpha) / (N(h) + alpha V),

h the n - 1 preceding characters, N counts over the training array, V the vocabulary size.
The first n - 1 validation characters have no full context and are not scored; the
validation array is scored with its own preceding characters as context (it is one
contiguous text). Unigram: n = 1 (h empty).
"""
from __future__ import annotations

import numpy as np

from ..checks import Instance, Int, Ints, Real, accepts

#: the smoothing constant: from 1e-12 to 1e12 (beyond them an unseen n-gram's probability, or
#: alpha V, leaves float64's range and the loss is infinite)
_ALPHA = Real(1e-12, 1e12)

__all__ = ["ALPHA", "ngram_loss", "ngram_losses"]

#: the add-alpha smoothing constant of the book's baselines
ALPHA = 0.1


def _codes(tokens: np.ndarray, n: int, V: int) -> np.ndarray:
    """Index of each n-gram ending at positions n-1 .. len-1, base V: int64 [len - n + 1]."""
    t = tokens.astype(np.int64)
    code = np.zeros(len(t) - n + 1, dtype=np.int64)
    for j in range(n):
        code = code * V + t[j:len(t) - n + 1 + j]
    return code


@accepts(n=Int(1, 4), vocab_size=Int(1), alpha=_ALPHA)
def ngram_loss(train: np.ndarray, val: np.ndarray, n: int, vocab_size: int,
               alpha: float = ALPHA) -> float:
    """Mean cross-entropy (nats/char) on ``val`` of the add-alpha order-``n`` model of ``train``.

    >>> t = np.array([0, 1] * 50)
    >>> round(ngram_loss(t, t, 2, 2, alpha=1e-9), 6)   # a bigram predicts an alternation exactly
    0.0
    >>> round(ngram_loss(t, t, 1, 2, alpha=1.0), 4)    # a unigram of two equal characters: log 2
    0.6931
    """
    train, val = np.asarray(train), np.asarray(val)
    for name, a in (("train", train), ("val", val)):
        if a.ndim != 1 or len(a) < n or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"{name} must be a 1-D integer array of at least n={n} tokens")
        if a.min() < 0 or a.max() >= vocab_size:
            raise ValueError(f"{name} holds tokens outside [0, vocab_size={vocab_size})")
    V = int(vocab_size)
    if V ** n > 2 ** 28:
        raise ValueError(f"vocab_size**n = {V ** n} counts are too many for a dense table")
    full = np.bincount(_codes(train, n, V), minlength=V ** n).astype(np.float64)
    ctx = full.reshape(-1, V).sum(1)                     # N(h), [V^(n-1)]
    codes = _codes(val, n, V)
    p = (full[codes] + alpha) / (ctx[codes // V] + alpha * V)
    return float(-np.log(p).mean())


@accepts(corpus=Instance("resdecay_lib.training.data.Corpus", "a Corpus (data.load_corpus's)"),
         orders=Ints(1, 4, min_len=1), alpha=_ALPHA)
def ngram_losses(corpus, orders=(1, 2, 3), alpha: float = ALPHA) -> dict:
    """``{n: loss}`` on ``corpus.val`` of the order-n models of ``corpus.train`` (a
    :class:`resdecay_lib.training.data.Corpus`: the split the book's models train and validate on)."""
    return {int(n): ngram_loss(corpus.train, corpus.val, n, corpus.vocab.size, alpha) for n in orders}
