"""A one-line progress bar on a terminal (redrawn in place), plain periodic lines otherwise."""
from __future__ import annotations

import sys
import time


def fmt_seconds(s: float) -> str:
    s = max(0, int(round(s)))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60:02d}:{s % 60:02d}"


class Progress:
    """``update(...)`` draws: ``[####------] 41% reduce[4B] float32 n=2^24  config 12/96  02:10 left``.

    The bar is the fraction of the time budget used (the search is budget-bound, not count-bound).
    """

    def __init__(self, budget_s: float, stream=None, enabled: bool = True, width: int = 24,
                 min_interval_s: float = 0.1, clock=time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.budget_s, self.width, self.clock = max(budget_s, 1e-9), width, clock
        self.start = clock()
        self.min_interval_s = min_interval_s if self.tty else 5.0
        self._last = -1e9
        self._last_len = 0

    def line(self, op: str, bucket: str, problem: str, i: int, n: int) -> str:
        elapsed = self.clock() - self.start
        frac = min(1.0, elapsed / self.budget_s)
        fill = int(round(frac * self.width))
        left = max(0.0, self.budget_s - elapsed)
        return (f"[{'#' * fill}{'-' * (self.width - fill)}] {frac * 100:3.0f}%  {op}[{bucket}] {problem}  "
                f"config {i}/{n}  {fmt_seconds(elapsed)} elapsed  {fmt_seconds(left)} left")

    def update(self, op: str, bucket: str, problem: str, i: int, n: int, force: bool = False) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if not force and now - self._last < self.min_interval_s:
            return
        self._last = now
        text = self.line(op, bucket, problem, i, n)
        if self.tty:
            pad = max(0, self._last_len - len(text))
            self.stream.write("\r" + text + " " * pad)
            self._last_len = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def message(self, text: str) -> None:
        """A line of its own (the bar is redrawn on the next update); printed even with the bar off."""
        if self.enabled and self.tty and self._last_len:
            self.stream.write("\r" + " " * self._last_len + "\r")
            self._last_len = 0
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty and self._last_len:
            self.stream.write("\n")
            self.stream.flush()
            self._last_len = 0
