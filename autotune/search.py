"""The search over one op's config space: which config to time next.

Configs are plain dicts (the op's meta-parameters plus ``num_warps``/``num_stages``); their identity
is :func:`config_key`, a canonical JSON string (so a resumed run recognises what it timed before).

Order of a bucket's search (:class:`Search`):

1. the *priority* configs, always timed: the built-in fallback (the baseline every speed-up is
   measured against), the config the policy chain selects today (an inherited lower-architecture
   file, say), and the target file's current tuned value and shortlist (so a merge compares like
   with like);
2. then, alternately, a *neighbour* of the best config so far (one value of one parameter changed:
   a local search) and a config drawn at random from the rest of the space (exploration), until the
   space is exhausted or the time share of the bucket runs out. Spaces too large to list are
   sampled, not enumerated, and their search runs until the time share is spent (see :class:`Search`).

A config's score over a bucket's problems is the geometric mean of its time relative to the
fallback's on each problem (:func:`score`); lower is better, the fallback scores 1.0.
"""
from __future__ import annotations

import json
import math
import random
from typing import Iterable


def config_key(cfg: dict) -> str:
    return json.dumps(cfg, sort_keys=True, separators=(",", ":"))


def score(times: dict[str, float | None], baseline: dict[str, float | None]) -> float:
    """Geometric mean of ``times[p] / baseline[p]`` over the problems; ``inf`` if any is missing."""
    logs = []
    for p, t in times.items():
        b = baseline.get(p)
        if t is None or not math.isfinite(t) or t <= 0:
            return math.inf
        logs.append(math.log(t / b) if b and math.isfinite(b) and b > 0 else math.log(t))
    if not logs:
        return math.inf
    return math.exp(sum(logs) / len(logs))


def hamming(a: dict, b: dict, keys: Iterable[str]) -> int:
    return sum(1 for k in keys if a.get(k) != b.get(k))


class Search:
    """Yields the configs of one (op, bucket) in the order described in the module docstring.

    ``space`` is either a list of configs (searched exhaustively: each is handed out once) or an op's
    :class:`tritoncub.policy.OpPolicy`, whose configs are merged over ``base`` (the bucket's
    fallback). A space small enough to list is listed; a larger one (radix sort's has ~10^8
    combinations) is never listed: random configs are drawn from it (``OpPolicy.draw``) and the
    neighbours of the best are built from it (``OpPolicy.neighbours``). Its size (``len``) is then an
    estimate (``OpPolicy.estimate_size``), shown by the progress line and written as the bucket's
    ``space`` in the state file, the policy file's log and the summary; such a search ends when the
    time share runs out (or the draws stop finding new configs), not when the space is used up."""

    def __init__(self, space, priority: list[dict], keys: Iterable[str], seed: int = 0,
                 base: dict | None = None):
        self.keys = list(keys)
        rng = random.Random(seed)
        self.all: dict[str, dict] = {}
        self.priority = []
        for c in priority:
            k = config_key(c)
            self.all.setdefault(k, c)
            if k not in self.priority:
                self.priority.append(k)
        listed = list(space) if isinstance(space, (list, tuple)) else (
            space.enumerate(base) if space.raw_size() <= space.ENUMERATE_LIMIT else None)
        if listed is not None:
            for c in listed:
                self.all.setdefault(config_key(c), c)
            rest = [k for k in self.all if k not in self.priority]
            rng.shuffle(rest)
            self._stream = iter([self.all[k] for k in rest])
            self._listed = list(self.all.values())
            self.size = len(self.all)
        else:
            self._stream = space.draw(rng, base)
            self._listed = None
            self._policy = space
            self.size = max(space.estimate_size(seed=seed), len(self.all))
        self.done: set[str] = set()
        self._flip = False

    def __len__(self) -> int:
        return self.size

    def remaining(self) -> int:
        return max(0, self.size - len(self.done))

    def next(self, best: dict | None) -> dict | None:
        """The next config to time given the best so far (``None``: nothing left)."""
        for k in self.priority:
            if k not in self.done:
                return self._take(k)
        self._flip = not self._flip
        if self._flip and best is not None:
            nb = self._neighbour(best)
            if nb is not None:
                return nb
        for c in self._stream:
            k = config_key(c)
            if k not in self.done:
                self.all.setdefault(k, c)
                return self._take(k)
        if best is not None:  # random pool empty: finish the neighbourhood
            nb = self._neighbour(best)
            if nb is not None:
                return nb
        for k in self.all:
            if k not in self.done:
                return self._take(k)
        return None

    def mark_done(self, cfg: dict) -> None:
        self.done.add(config_key(cfg))

    def _take(self, k: str) -> dict:
        self.done.add(k)
        return self.all[k]

    def _neighbour(self, best: dict) -> dict | None:
        if self._listed is not None:
            cands = (c for c in self._listed if hamming(c, best, self.keys) == 1)
        else:
            cands = iter(self._policy.neighbours(best))
        for c in cands:
            k = config_key(c)
            if k not in self.done:
                self.all.setdefault(k, c)
                return self._take(k)
        return None
