"""Built-in TuneSpecs for ops whose modules define no ``AUTOTUNE`` (see ``autotune/__init__.py``).

Each spec imports its op lazily and is skipped when the op (or the policy name it registers) is not
there, so this file never breaks ``python -m autotune`` while the ops change.
"""
from __future__ import annotations


def builtin_specs() -> list:
    return []
