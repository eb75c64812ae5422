"""Progress of a long command with its elapsed time and an ETA, on stderr:
a live one-line bar on a terminal, plain lines in a log (CI), where a bar's
carriage returns would pile up as one unreadable line.

The standard library suffices: the bar is one line rewritten with ``\\r``,
cleared before any other line is printed and drawn again after it (what
tqdm's ``write`` does), and redrawn whenever something happens, with no
thread of its own (a thread writing to stderr would race the progress lines).
Its lines are written under :func:`gemmreg.discovery.capture.own_output`:
a device thread's line must not land in another thread's capture of plugin
output.

The ETA is :func:`eta_s`, a pure function of the finished items' work and
durations: tested without a clock. :class:`Meter` takes its clock as an
argument for the same reason.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from gemmreg.discovery.capture import own_output
from gemmreg.timing.run_estimate import duration

MIN_ITEMS_TO_CHOOSE = 3
"""Finished items needed before the two models of :func:`eta_s` are judged
against each other (each predicts the later items from the earlier ones);
before that the caller's ``prefer_work`` decides, or, where it is None, the
geometric mean of the two hedges between them."""
BAR_WIDTH = 24
"""Characters of the live bar's filled part."""


def _per_item(done: Sequence[tuple[float, float]], remaining: Sequence[float]) -> float:
    return sum(s for _, s in done) / len(done) * len(remaining)


def _per_work(done: Sequence[tuple[float, float]], remaining: Sequence[float]) -> float | None:
    work = sum(w for w, _ in done)
    if work <= 0:
        return None
    return sum(s for _, s in done) / work * sum(remaining)


def _model_error(
    model: Callable[[Sequence[tuple[float, float]], Sequence[float]], float | None],
    done: Sequence[tuple[float, float]],
) -> float:
    """How far ``model`` was off predicting each finished item from the ones
    before it: the sum of |log(predicted / actual)|."""
    error = 0.0
    for i in range(1, len(done)):
        predicted = model(done[:i], [done[i][0]])
        actual = done[i][1]
        if predicted is None or predicted <= 0 or actual <= 0:
            return math.inf
        error += abs(math.log(predicted / actual))
    return error


def eta_s(
    done: Sequence[tuple[float, float]],
    remaining: Sequence[float],
    prefer_work: bool | None = False,
) -> float | None:
    """Seconds left, from the finished items' ``(work, seconds)`` and the
    remaining items' work (2MNK of a point, say); None before any finished.

    Two models: every item costs the mean of those finished (a GPU sweep,
    where each point is capped by time), or cost grows with work (the
    interpreter, where a call's time is proportional to 2MNK). With
    :data:`MIN_ITEMS_TO_CHOOSE` items finished, the one that predicted the
    finished items better is used; before, ``prefer_work`` chooses, and
    None takes the geometric mean of the two: a sweep's first point carries
    the workers' start-up, so its seconds per unit of work overstate the
    later points', while its seconds alone understate a larger point's
    (``tests/test_progress.py`` holds recorded sweeps to a factor of 2).
    """
    if not remaining:
        return 0.0
    if not done:
        return None
    by_work = _per_work(done, remaining)
    if by_work is None:
        return _per_item(done, remaining)
    per_item = _per_item(done, remaining)
    if len(done) >= MIN_ITEMS_TO_CHOOSE:
        prefer_work = _model_error(_per_work, done) < _model_error(_per_item, done)
    if prefer_work is None:
        return math.sqrt(by_work * per_item) if by_work > 0 and per_item > 0 else per_item
    return by_work if prefer_work else per_item


PLAIN_EVERY_S = 10.0
"""In a log, items without a line of their own (:meth:`Meter.tick`) give a
``progress:`` line at most this often: a check's hundreds of passing cases
are a handful of lines, not one each."""


class Meter:
    """Counts finished items of a command, with their work, and says where
    it stands. ``live``: a redrawn bar (a terminal) or plain lines (a log).

    ``estimate_s``: the run's estimate before it started, the ETA until an
    item finishes. ``keys``: what the caller names each item by when it
    finishes (a point's 2MNK, say), where its work is another figure (the
    point's estimated seconds); by default an item's key is its work."""

    def __init__(
        self,
        works: Sequence[float],
        unit: str,
        *,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        live: bool | None = None,
        prefer_work: bool | None = False,
        estimate_s: float | None = None,
        keys: Sequence[float] | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.live = _is_terminal(self.stream) if live is None else live
        self.unit = unit
        self.total = len(works)
        named = list(works) if keys is None else list(keys)
        if len(named) != len(works):
            raise ValueError("a key for each item, or none")
        self.remaining: list[tuple[float, float]] = list(zip(named, works, strict=True))
        """Each item not finished yet: (its key, its work)."""
        self.done: list[tuple[float, float]] = []
        self.prefer_work = prefer_work
        self.estimate_s = estimate_s
        self.started = self.last = clock()
        self.done_counting = False
        """Set once the counted items are over: later lines are lines only."""
        self._drawn = False
        self._last_plain = self.started

    def status(self) -> str:
        """``3/20 points, elapsed 1m23s, ETA ~4m05s``."""
        now = self.clock()
        eta = eta_s(self.done, [work for _, work in self.remaining], self.prefer_work)
        if eta is None and self.estimate_s is not None and now - self.started < self.estimate_s:
            eta = self.estimate_s - (now - self.started)  # past it, the estimate says nothing
        left = "" if eta is None else f", ETA ~{duration(eta)}"
        return f"{len(self.done)}/{self.total} {self.unit}, elapsed {duration(now - self.started)}{left}"

    def more(self, works: Sequence[float]) -> None:
        """Items found to be needed after the start (a sequential run's next batch)."""
        self.total += len(works)
        self.remaining += [(work, work) for work in works]

    def line(self, text: str) -> None:
        """A progress line; on a terminal the bar is cleared and drawn again below it."""
        with own_output():
            self._clear()
            print(text, file=self.stream, flush=True)
            self._draw()

    def advance(self, key: float = 1.0, text: str | None = None) -> None:
        """One item finished (``key``, matched among the remaining items);
        ``text``, its line, gets the status appended in a log."""
        self.advance_silently(key)
        with own_output():
            if self.live:
                if text is not None:
                    self.line(text)
                else:
                    self._clear()
                    self._draw()
            elif text is not None:
                print(f"{text}  [{self.status()}]", file=self.stream, flush=True)
            else:
                print(f"progress: {self.status()}", file=self.stream, flush=True)

    def tick(self, key: float = 1.0) -> None:
        """One item finished that needs no line of its own (a passing check
        case): the bar is redrawn on a terminal; in a log, a ``progress:``
        line at most every :data:`PLAIN_EVERY_S`, and at the last item."""
        if self.live:
            self.advance(key)
            return
        self.advance_silently(key)
        now = self.clock()
        if now - self._last_plain >= PLAIN_EVERY_S or not self.remaining:
            self._last_plain = now
            with own_output():
                print(f"progress: {self.status()}", file=self.stream, flush=True)

    def advance_silently(self, key: float) -> None:
        """Count an item without printing anything: the first remaining one
        named ``key`` (else the first remaining), with its own work."""
        now = self.clock()
        found = next((i for i, (k, _) in enumerate(self.remaining) if k == key), 0)
        work = self.remaining.pop(found)[1] if self.remaining else key
        self.done.append((work, now - self.last))
        self.last = now

    def close(self) -> None:
        """The bar's last state stays on screen, ended by a newline."""
        with own_output():
            if self.live and self._drawn:
                print(file=self.stream, flush=True)
                self._drawn = False

    def _bar(self) -> str:
        filled = BAR_WIDTH * len(self.done) // max(1, self.total)
        return f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {self.status()}"

    def _clear(self) -> None:
        if self.live and self._drawn:
            self.stream.write("\r\033[K")
            self._drawn = False

    def _draw(self) -> None:
        if self.live:
            self.stream.write(self._bar())
            self.stream.flush()
            self._drawn = True


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
