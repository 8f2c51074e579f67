"""Grid mapping: which tiles each program consumes (CUB's ``GridMappingStrategy``, seed 002).

``GRID_MAPPING_RAKE``        each program takes one contiguous run of ``tiles_per_program`` tiles
                             (CUB's even-share: program ``p`` owns tiles ``[p*k, (p+1)*k)``).
``GRID_MAPPING_STRIP_MINE``  program ``p`` takes tiles ``p, p+P, p+2P, ...`` (``P`` programs).
``GRID_MAPPING_DYNAMIC``     tiles are dealt from an atomic queue (an int32 counter in global memory,
                             zero before the launch) to whichever program asks next.

Use in an agent loop::

    step = 0
    tile = grid_tile(pid, step, num_programs, num_tiles, tiles_per_program, MAPPING, queue_ptr)
    while tile < num_tiles:
        ...consume tile...
        step += 1
        tile = grid_tile(pid, step, num_programs, num_tiles, tiles_per_program, MAPPING, queue_ptr)

``grid_tile`` returns ``num_tiles`` once a program has no more work. Under DYNAMIC the set of tiles a
program sees depends on timing; agents that must be deterministic keep one partial per *tile*, not
per program, and combine them in tile order. Every program of a DYNAMIC launch takes one ticket past
the end (its stop signal), so the counter ends at ``num_tiles + programs``; a fresh zeroed counter
(:func:`grid_queue`) is needed for every launch. The tile index is int32: tiles, not items, so the
``tile * TILE`` item offset is formed in int64 by the caller (``tile.to(tl.int64) * TILE``).

Launch with :func:`grid_size`: RAKE launches ``ceil(num_tiles / ceil(num_tiles / max_programs))``
programs so no program is empty (CUB's even share), the others ``min(num_tiles, max_programs)``.
"""
import torch
import triton
import triton.language as tl

GRID_MAPPING_RAKE = tl.constexpr(0)
GRID_MAPPING_STRIP_MINE = tl.constexpr(1)
GRID_MAPPING_DYNAMIC = tl.constexpr(2)
GRID_MAPPINGS = {"rake": 0, "strip_mine": 1, "dynamic": 2}


@triton.jit
def grid_tile(pid, step, num_programs, num_tiles, tiles_per_program, MAPPING: tl.constexpr, queue_ptr):
    """The tile a program consumes at its ``step``-th iteration, or ``num_tiles`` when it is done."""
    if MAPPING == GRID_MAPPING_DYNAMIC:
        tile = tl.atomic_add(queue_ptr, 1, sem="relaxed")
    elif MAPPING == GRID_MAPPING_STRIP_MINE:
        tile = pid + step * num_programs
    else:
        # (one expression: a branch that assigned num_tiles failed to compile for an int64 num_tiles)
        tile = tl.where(step >= tiles_per_program, num_tiles, pid * tiles_per_program + step)
    return tl.minimum(tile, num_tiles)


def grid_queue(device) -> torch.Tensor:
    """A zeroed int32 tile counter for one GRID_MAPPING_DYNAMIC launch (the ``queue_ptr``)."""
    return torch.zeros(1, dtype=torch.int32, device=device)


def grid_size(num_tiles: int, max_programs: int, mapping: int) -> tuple[int, int]:
    """(programs to launch, tiles_per_program) for ``num_tiles`` tiles and at most ``max_programs``.

    RAKE splits the tiles into even contiguous runs; STRIP_MINE and DYNAMIC launch
    ``min(num_tiles, max_programs)`` programs (``tiles_per_program`` is then an upper bound)."""
    num_tiles = max(int(num_tiles), 0)
    programs = max(1, min(num_tiles, int(max_programs)))
    tiles_per_program = -(-num_tiles // programs) if num_tiles else 0
    if mapping == 0:
        programs = max(1, -(-num_tiles // tiles_per_program)) if tiles_per_program else 1
    return programs, tiles_per_program
