"""Differential fuzzing of the torch operators against CPU torch (``tests/fuzz.py``), a few cases per
run from a fresh seed: every operator family, random dtypes, shapes near tile edges, transposed and
strided inputs, adversarial data. A failure names its seed; ``python tests/fuzz.py --seed S --cases 1``
replays it (with ``--repeat`` where the failure says so; ``TRITONCUB_FUZZ_SEED`` fixes the run's first
seed)."""
from __future__ import annotations

import os
import random

import pytest

import fuzz
from tritoncub._utils import interpreter_active

# (the interpreter runs a few tile programs a second: small problems, and every check twice per chunk)
CHUNKS, CASES, MAX_N = (2, 2 * len(fuzz.CHECKS), 1024) if interpreter_active() else (8, 3 * len(fuzz.CHECKS), 1 << 16)
BASE = int(os.environ.get("TRITONCUB_FUZZ_SEED", random.randrange(1 << 40)))


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_operators_against_torch(chunk):
    seed = BASE + chunk * CASES
    lines = []
    # (on a GPU every other chunk runs each case twice, the second time on other data: remembered launches)
    repeat = not interpreter_active() and chunk % 2 == 1
    failures = fuzz.run(CASES, float("inf"), MAX_N, seed, out=lines.append, repeat=repeat)
    assert lines[-1].startswith(f"{CASES} cases, "), lines[-1]
    assert not failures, "\n".join(f"seed {s} ({name}{', --repeat' if repeat else ''}): {err}"
                                    for s, name, err in failures[:5])
