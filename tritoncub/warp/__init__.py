"""Warp layer: logical warps of 1..32 threads as the rows of a tile (load, store, exchange, reduce, scan)."""
from .. import _triton_compat  # noqa: F401  (combine functions passed through helpers; see that module)
