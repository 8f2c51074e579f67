"""Grid mapping (tritoncub.agent.grid_mapping): every mapping visits every tile exactly once,
the ragged last tile included, and RAKE / STRIP_MINE hand out the tiles they document."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import DEVICE, _np
from tritoncub.agent.grid_mapping import GRID_MAPPINGS, grid_queue, grid_size, grid_tile


@triton.jit
def _visit_kernel(visits_ptr, owner_ptr, step_ptr, items_ptr, queue_ptr, n, num_tiles, tiles_per_program,
                  TILE: tl.constexpr, MAPPING: tl.constexpr, WIDE: tl.constexpr = False):
    pid = tl.program_id(0)
    P = tl.num_programs(0)
    if WIDE:   # (a tile count past 2^31 comes as int64)
        num_tiles = tl.full((), num_tiles, tl.int64)
    step = 0
    tile = grid_tile(pid, step, P, num_tiles, tiles_per_program, MAPPING, queue_ptr)
    while tile < num_tiles:
        tl.atomic_add(visits_ptr + tile, 1)
        tl.store(owner_ptr + tile, pid)
        tl.store(step_ptr + tile, step)
        offs = tile.to(tl.int64) * TILE + tl.arange(0, TILE)
        tl.atomic_add(items_ptr, tl.sum((offs < n).to(tl.int32), 0))
        step += 1
        tile = grid_tile(pid, step, P, num_tiles, tiles_per_program, MAPPING, queue_ptr)


CASES = [  # (items, TILE, max_programs)
    (0, 16, 4), (1, 16, 4), (16, 16, 4), (17, 16, 4), (10 * 16 + 5, 16, 4), (7 * 16 - 1, 16, 3),
    (5 * 16, 16, 8), (3 * 16 + 1, 16, 1),
]


@pytest.mark.parametrize("wide", [False, True], ids=["int32", "int64"])
@pytest.mark.parametrize("mapping", list(GRID_MAPPINGS))
@pytest.mark.parametrize("case", CASES, ids=lambda c: "n{}t{}p{}".format(*c))
def test_every_tile_once(mapping, case, wide):
    n, tile, max_programs = case
    num_tiles = -(-n // tile)
    m = GRID_MAPPINGS[mapping]
    programs, tpp = grid_size(num_tiles, max_programs, m)
    assert 1 <= programs <= max(1, max_programs)
    visits = torch.zeros(max(num_tiles, 1), dtype=torch.int32, device=DEVICE)
    owner = torch.full((max(num_tiles, 1),), -1, dtype=torch.int32, device=DEVICE)
    steps = torch.full((max(num_tiles, 1),), -1, dtype=torch.int32, device=DEVICE)
    items = torch.zeros(1, dtype=torch.int32, device=DEVICE)
    queue = grid_queue(DEVICE)
    _visit_kernel[(programs,)](visits, owner, steps, items, queue, n, num_tiles, tpp, TILE=tile, MAPPING=m, WIDE=wide)
    v = _np(visits)[:num_tiles]
    np.testing.assert_array_equal(v, np.ones(num_tiles), f"{mapping}: visits per tile")
    assert int(items[0]) == n, f"{mapping}: items covered {int(items[0])} != {n}"
    own = _np(owner)[:num_tiles]
    st = _np(steps)[:num_tiles]
    t = np.arange(num_tiles)
    if m == GRID_MAPPINGS["rake"]:
        np.testing.assert_array_equal(own, t // max(tpp, 1), "rake: contiguous runs")
        np.testing.assert_array_equal(st, t % max(tpp, 1), "rake: in order within a run")
        if num_tiles:
            assert len(np.unique(own)) == programs, "rake: no empty program"
    elif m == GRID_MAPPINGS["strip_mine"]:
        np.testing.assert_array_equal(own, t % programs, "strip mine: stride = grid size")
        np.testing.assert_array_equal(st, t // programs, "strip mine: steps")
    else:
        # each program's tiles come from the queue in increasing order; the counter ends past the end
        for p in np.unique(own):
            mine = t[own == p]
            np.testing.assert_array_equal(st[own == p], np.arange(len(mine)), "dynamic: steps")
        assert int(queue[0]) == num_tiles + programs


@pytest.mark.gpu
@pytest.mark.parametrize("mapping", list(GRID_MAPPINGS))
def test_every_tile_once_many_programs(mapping):
    """On the GPU, with programs really running at once (DYNAMIC races on its counter)."""
    n, tile = 1_000_003, 256
    num_tiles = -(-n // tile)
    m = GRID_MAPPINGS[mapping]
    programs, tpp = grid_size(num_tiles, 528, m)
    visits = torch.zeros(num_tiles, dtype=torch.int32, device=DEVICE)
    owner = torch.full((num_tiles,), -1, dtype=torch.int32, device=DEVICE)
    steps = torch.full((num_tiles,), -1, dtype=torch.int32, device=DEVICE)
    items = torch.zeros(1, dtype=torch.int32, device=DEVICE)
    _visit_kernel[(programs,)](visits, owner, steps, items, grid_queue(DEVICE), n, num_tiles, tpp,
                               TILE=tile, MAPPING=m)
    assert bool((visits == 1).all()), f"{mapping}: {int((visits != 1).sum())} tiles not visited exactly once"
    assert int(items[0]) == n


def test_grid_size():
    assert grid_size(0, 8, 0) == (1, 0)
    assert grid_size(10, 4, 0) == (4, 3)      # runs of 3,3,3,1
    assert grid_size(9, 4, 0) == (3, 3)       # RAKE drops the empty fourth program
    assert grid_size(10, 4, 1) == (4, 3)
    assert grid_size(3, 8, 2) == (3, 1)
