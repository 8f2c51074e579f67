"""BlockLoad / BlockStore (tritoncub.block.load, .store): every algorithm and cache modifier, every
dtype, ragged tails, several programs and unaligned tile starts, against numpy.

One launch checks the four load algorithms and the four store algorithms together."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from helpers import ALL_DTYPES, _np, make_data, poisoned
from tritoncub.block.load import block_load, load_tile
from tritoncub.block.store import block_store, store_tile

# (load cache modifier, load eviction, store cache modifier, store eviction) per algorithm
# (a cache operator and an eviction hint cannot be combined: ptxas rejects e.g. ld.global.cg.L1::evict_first)
MODIFIERS = [("", "", "", ""), (".cg", "", ".cs", ""), (".ca", "", ".wt", ""), ("", "evict_first", "", "evict_last")]

def _adversarial(n, dtype):
    """``make_data("special")``, or random data where this torch lacks ``torch.where`` for the dtype
    (torch 2.11 has none for uint16/uint32/uint64)."""
    try:
        return make_data("special", n, dtype)
    except NotImplementedError:
        return make_data("random", n, dtype)



@triton.jit
def _kernel(x_ptr, raw_ptr, loaded_ptr, stored_ptr, flat_ptr, base0, num_items,
            BT: tl.constexpr, IPT: tl.constexpr, OTHER: tl.constexpr,
            LC0: tl.constexpr, LE0: tl.constexpr, SC0: tl.constexpr, SE0: tl.constexpr,
            LC1: tl.constexpr, LE1: tl.constexpr, SC1: tl.constexpr, SE1: tl.constexpr,
            LC2: tl.constexpr, LE2: tl.constexpr, SC2: tl.constexpr, SE2: tl.constexpr,
            LC3: tl.constexpr, LE3: tl.constexpr, SC3: tl.constexpr, SE3: tl.constexpr):
    TILE: tl.constexpr = BT * IPT
    pid = tl.program_id(0)
    P = tl.num_programs(0)
    base = base0 + pid * TILE
    slot = tl.arange(0, BT)[:, None] * IPT + tl.arange(0, IPT)[None, :]
    tl.store(loaded_ptr + (0 * P + pid) * TILE + slot, block_load(x_ptr, base, num_items, BT, IPT, 0, LC0, LE0, OTHER))
    tl.store(loaded_ptr + (1 * P + pid) * TILE + slot, block_load(x_ptr, base, num_items, BT, IPT, 1, LC1, LE1, OTHER))
    tl.store(loaded_ptr + (2 * P + pid) * TILE + slot, block_load(x_ptr, base, num_items, BT, IPT, 2, LC2, LE2, OTHER))
    tl.store(loaded_ptr + (3 * P + pid) * TILE + slot, block_load(x_ptr, base, num_items, BT, IPT, 3, LC3, LE3, OTHER))
    raw = tl.load(raw_ptr + pid * TILE + slot)
    block_store(stored_ptr + 0 * num_items, base, num_items, raw, BT, IPT, 0, SC0, SE0)
    block_store(stored_ptr + 1 * num_items, base, num_items, raw, BT, IPT, 1, SC1, SE1)
    block_store(stored_ptr + 2 * num_items, base, num_items, raw, BT, IPT, 2, SC2, SE2)
    block_store(stored_ptr + 3 * num_items, base, num_items, raw, BT, IPT, 3, SC3, SE3)
    # the 1-D helpers, plain and vectorised: a copy through load_tile/store_tile
    v = load_tile(x_ptr, base, num_items, TILE, False, "", "", OTHER)
    store_tile(flat_ptr, base, num_items, v, TILE, True)
    w = load_tile(x_ptr, base, num_items, TILE, True, "", "evict_last", OTHER)
    store_tile(flat_ptr + num_items, base, num_items, w, TILE, False, ".cs")


CONFIGS = [  # (BLOCK_THREADS, ITEMS_PER_THREAD, programs, base0, cut)
    (8, 4, 3, 0, 5),    # ragged last tile
    (16, 2, 2, 4, 0),   # exact end, 16-byte-aligned offset base for fp32
    (4, 8, 2, 3, 9),    # unaligned tile starts (VECTORIZE falls back), ragged
    (32, 1, 1, 0, 0),   # one item per thread
]


def _other(dtype):
    return 77.0 if dtype.is_floating_point else 77


def _run(dtype, cfg):
    bt, ipt, programs, base0, cut = cfg
    tile = bt * ipt
    num_items = base0 + programs * tile - cut
    x = _adversarial(num_items + 8, dtype)
    raw = make_data("random", programs * tile, dtype)
    loaded = poisoned(4 * programs * tile, dtype)
    stored = poisoned(4 * num_items, dtype)
    flat = poisoned(2 * num_items, dtype)
    mods = {}
    for a, (lc, le, sc, se) in enumerate(MODIFIERS):
        mods.update({f"LC{a}": lc, f"LE{a}": le, f"SC{a}": sc, f"SE{a}": se})
    _kernel[(programs,)](x, raw, loaded, stored, flat, base0, num_items, BT=bt, IPT=ipt,
                         OTHER=_other(dtype), **mods)
    xn, rawn = _np(x), _np(raw).reshape(programs, bt, ipt)
    p, t, i = np.meshgrid(np.arange(programs), np.arange(bt), np.arange(ipt), indexing="ij")
    pois = _np(poisoned(1, dtype))[0]
    for algo in range(4):
        within = i * bt + t if algo == 1 else t * ipt + i
        pos = base0 + p * tile + within
        ok = pos < num_items
        expect = np.where(ok, xn[np.minimum(pos, num_items - 1)], np.array(_other(dtype)).astype(xn.dtype))
        np.testing.assert_array_equal(_np(loaded).reshape(4, programs, bt, ipt)[algo], expect,
                                      err_msg=f"load algorithm {algo}")
        ref = np.full(num_items, pois)
        ref[base0:] = pois
        ref[pos[ok]] = rawn[ok]
        ref[:base0] = pois
        np.testing.assert_array_equal(_np(stored)[algo * num_items:(algo + 1) * num_items], ref,
                                      err_msg=f"store algorithm {algo}")
    ref = xn[:num_items].copy()
    ref[:base0] = pois
    np.testing.assert_array_equal(_np(flat)[:num_items], ref, err_msg="load_tile/store_tile")
    np.testing.assert_array_equal(_np(flat)[num_items:], ref, err_msg="load_tile/store_tile vectorized")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_block_load_store_dtypes(dtype):
    _run(dtype, CONFIGS[0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int8, torch.float64], ids=str)
@pytest.mark.parametrize("cfg", CONFIGS[1:], ids=lambda c: "t{}x{}p{}b{}c{}".format(*c))
def test_block_load_store_shapes(dtype, cfg):
    _run(dtype, cfg)


def _ptx_rows(layer):
    """Run bench/ptx_check.py (compiles for sm_90 on the CPU) in a fresh process without the
    interpreter; returns ({case: row}, failures)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": str(root)}
    res = subprocess.run([sys.executable, str(root / "bench" / "ptx_check.py"), "--json", "--layer", layer],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    data = json.loads(res.stdout.strip().splitlines()[-1])
    return {r["case"]: r for r in data["rows"]}, data["failures"]


def test_vectorize_emits_16_byte_loads_in_ptx():
    """VECTORIZE gives ld.global.v4.b32 / st.global.v4.b32 for fp32 with an arbitrary item count, where
    DIRECT with the same count issues one 4-byte access per item; cache modifiers reach the PTX."""
    rows, failures = _ptx_rows("block")
    assert failures == []
    vec = rows["vectorize fp32 BT=128 IPT=4 n%16!=0"]["ops"]
    direct = rows["direct fp32 BT=128 IPT=4 n%16!=0"]["ops"]
    assert vec.get("ld.global.v4.b32", 0) >= 1 and vec.get("st.global.v4.b32", 0) >= 1, vec
    assert not any(".v" in op for op in direct), direct
    assert rows["vectorize fp64 BT=128 IPT=4 n%16!=0"]["ld_bytes"] == 16
    assert "ld.global.cg.v4.b32" in rows["vectorize fp32 load.cg store.cg"]["ops"]
    assert "st.global.cs.v4.b32" in rows["vectorize fp32 load/evict_first store.cs"]["ops"]


@triton.jit
def _literal_base_kernel(x_ptr, out_ptr, n, BT: tl.constexpr, IPT: tl.constexpr):
    slot = tl.arange(0, BT)[:, None] * IPT + tl.arange(0, IPT)[None, :]
    t = block_load(x_ptr, 0, n, BT, IPT, 0, "", "", -1)     # a literal tile base
    block_store(out_ptr, 0, n, t, BT, IPT, 0, "", "")
    tl.store(out_ptr + 100 + slot, t)


def test_literal_tile_base():
    """A tile base given as a Python literal (it used to fail: an int has no .to())."""
    x = make_data("random", 6, torch.float32)
    out = poisoned(108, torch.float32)
    _literal_base_kernel[(1,)](x, out, 6, BT=4, IPT=2)
    got = _np(out)
    np.testing.assert_array_equal(got[:6], _np(x))
    np.testing.assert_array_equal(got[100:106], _np(x))
    np.testing.assert_array_equal(got[106:108], [-1, -1])
