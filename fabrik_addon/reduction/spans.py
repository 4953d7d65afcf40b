"""Every actor's keys at once (``KeySpans``): its keyed values on every frame as rows of one array, the frames it
keeps, each segment's control values, and how far each segment's error comes to its share of the bound
(``KeySpans.weigh``): only the segments asked about are fitted, so a pass that changes a few keys costs a few
segments."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from numpy.typing import NDArray

from ..solver import FloatArray
from .actors import Pose
from .curves import fit_spans

#: Flat rows (an index array): actor ``a``'s frame ``f`` is row ``a * F + f``.
Flat = NDArray[np.int64]
#: How many frames inside segments (or rows) a fit works on at once: arrays of a few thousand numbers stay in
#: the processor's cache and in memory the allocator keeps, where larger ones are mapped and zeroed anew.
_BATCH = 4096


@dataclass
class Weighed:
    """Segments fitted and weighed (``KeySpans.weigh``): each one's keys (flat rows), its worst row (flat, or -1
    where no frame lies inside) and that row's error over its share, squared, and its control values."""

    first: Flat
    last: Flat
    worst: Flat
    ratio: FloatArray
    controls: FloatArray  # (2, W, S)


@dataclass
class KeySpans:
    """Every actor's keys at once, as flat rows (actor after actor, frame after frame).

    Attributes
    ----------
    times : ndarray, shape (F,)
    values, slopes : ndarray, shape (W, A F)
        Each actor's keyed values and their slopes, padded to the widest actor's W.
    forms : ndarray, shape (W, W, A F)
        How far an error of the values moves the points (``Pose.weights``), squared.
    share : ndarray, shape (A F,)
        How far each actor's error may move them on each frame, squared.
    kept : ndarray of bool, shape (A F,)
        The frames each actor keys; the first and last always.
    controls : ndarray, shape (2, W, A F)
        The control values of the segment each key starts (the last frame's: none).
    """

    times: FloatArray
    values: FloatArray
    slopes: FloatArray
    forms: FloatArray
    share: FloatArray
    kept: NDArray[np.bool_]
    controls: FloatArray
    ratio: FloatArray

    @classmethod
    def of(cls, pose: Pose, share: FloatArray) -> KeySpans:
        """Every keyed property of ``pose`` keyed on every frame, each actor's error within ``share`` (A, F)."""
        widths = [actor.width for actor in pose.actors]
        frames, width = len(pose.times), max(widths, default=1)
        values = np.zeros((width, len(widths), frames))
        for i, actor in enumerate(pose.actors):
            values[: widths[i], i] = np.asarray(actor.channels.keyed).T
        slopes = np.zeros_like(values)
        if frames > 1:
            step = np.diff(pose.times)
            slopes[..., 1:-1] = (values[..., 2:] - values[..., :-2]) / (step[1:] + step[:-1])
            slopes[..., 0] = (values[..., 1] - values[..., 0]) / step[0]
            slopes[..., -1] = (values[..., -1] - values[..., -2]) / step[-1]
        rows = len(widths) * frames
        return cls(
            pose.times,
            values.reshape(width, rows),
            slopes.reshape(width, rows),
            pose.weights(width).reshape(width, width, rows),
            (share * share).ravel(),
            np.ones(rows, dtype=bool),
            np.zeros((2, width, rows)),
            np.zeros(rows),
        )

    @property
    def frames(self) -> int:
        return len(self.times)

    def segments(self, kept: NDArray[np.bool_] | None = None) -> tuple[Flat, Flat]:
        """The keys (flat rows) that start and end each segment of ``kept`` (the keys kept, by default)."""
        keyed = np.flatnonzero(self.kept if kept is None else kept)
        opens = np.flatnonzero(keyed % self.frames != self.frames - 1)
        return keyed[opens], keyed[opens + 1]

    def moves(self, played: FloatArray, rows: Flat) -> FloatArray:
        """How far (squared) the error of ``played`` (W, L) on ``rows`` (L,) moves the points, to first order."""
        error = played - np.take(self.values, rows, axis=1)
        forms = np.take(self.forms.reshape(-1, self.forms.shape[-1]), rows, axis=1).reshape(*self.forms.shape[:2], -1)
        return np.asarray(np.einsum("il,jl,ijl->l", error, error, forms), dtype=np.float64)

    def weigh(self, first: Flat, last: Flat) -> Weighed:
        """Fit the segments from ``first`` to ``last`` (flat rows) and find each one's worst row: where its error
        moves the points most for its share (any row out of its share is worse than every row within)."""
        worst = np.full(len(first), -1)
        ratio = np.zeros(len(first))
        controls = np.empty((2, len(self.values), len(first)))
        for part in _batches(first, last):
            played, rows, segment, controls[:, :, part] = fit_spans(
                self.times, self.values, self.slopes, first[part], last[part]
            )
            if not rows.size:
                continue
            moves = self.moves(played, rows)
            share = np.take(self.share, rows)
            out = moves / np.where(share > 0.0, share, 1.0)
            out[(share <= 0.0) & (moves > 0.0)] = np.inf
            inside = last[part] - first[part] - 1
            owners = np.flatnonzero(inside)  # the segments with frames inside, and where their rows start
            ratio[owners + part.start] = np.maximum.reduceat(out, (np.cumsum(inside) - inside)[owners])
            top = np.flatnonzero(out == np.take(ratio[part], segment))
            at = segment[top]
            once = np.ones(len(top), dtype=bool)
            once[1:] = at[1:] != at[:-1]  # each segment's first row at its worst
            worst[at[once] + part.start] = rows[top[once]]
        return Weighed(first, last, worst, ratio, controls)

    def keep(self, weighed: Weighed) -> None:
        """Keep the segments ``weighed`` (their keys kept, nothing between them) with their control values."""
        self.controls[:, :, weighed.first] = weighed.controls
        self.ratio[weighed.first] = weighed.ratio

    def played(self) -> FloatArray:
        """What the kept keys play on every row (W, A F), each segment with its control values."""
        first, last = self.segments()
        played = self.values.copy()
        for part in _batches(first, last):
            inner, rows, _, _ = fit_spans(
                self.times, self.values, self.slopes, first[part], last[part], self.controls[:, :, first[part]]
            )
            played[:, rows] = inner
        return played

    def moves_everywhere(self, played: FloatArray) -> FloatArray:
        """``moves`` on every row (A F,), a batch of rows at a time."""
        moves = np.empty(played.shape[1])
        for start in range(0, len(moves), _BATCH):
            part = slice(start, start + _BATCH)
            error = played[:, part] - self.values[:, part]
            moves[part] = np.einsum("il,jl,ijl->l", error, error, self.forms[:, :, part])
        return moves


def _batches(first: Flat, last: Flat) -> list[slice]:
    """The segments from ``first`` to ``last`` in runs of about ``_BATCH`` frames inside them (a longer segment
    alone)."""
    ends = np.cumsum(last - first - 1)
    if len(ends) and ends[-1] < _BATCH:  # one batch
        return [slice(0, len(first))]
    cuts = np.flatnonzero(np.diff(ends // _BATCH)) + 1
    bounds = [0, *cuts.tolist(), len(first)]
    return [slice(a, b) for a, b in pairwise(bounds) if b > a]
