"""DeviceReduce::ReduceByKey: one aggregate per run of equal consecutive keys (CUB's).

``reduce_by_key(keys, values, combine="sum")`` returns ``(unique_keys, aggregates, num_runs)``:
``unique_keys[r]`` is the first key of run ``r``, ``aggregates[r]`` the values of the run combined in
input order, ``num_runs`` a device int64 scalar; outputs have ``n`` slots, the first ``num_runs``
valid. ``combine`` is ``"sum"``, ``"min"``, ``"max"`` or any associative ``@triton.jit`` function
``f(a, b)`` (``a`` the earlier value; it need not be commutative); ``"min"``/``"max"`` of a run
holding a NaN value are NaN (torch's amin/amax rule, on every platform). Keys compare with ``==``
(NaN keys never match). Aggregates have the values' dtype (fp16/bf16 are combined in fp32 and rounded
once at the end; integer sums wrap like CUB's).

Algorithm (deterministic, two passes plus a fix-up):

1. pass 1 marks the run heads of every tile in a bitmask (one bit per key), counts them, and the
   tile scan turns the counts into output offsets (the select engine's bitmask form,
   :mod:`tritoncub.device.select`, reading the keys only);
2. pass 2 reads the values and the bitmask (the keys again only at the heads; with the policy's
   ``WORD_KEYS``, 32-bit keys, pass 1 also stores each word's first head key and pass 2 reads those
   with the bitmask, the keys only at a word's later heads), runs a segmented
   inclusive scan of the values over the tile (a ``(head flag, value)`` pair scan: a head restarts
   the running value), writes each run's first key at its head and the scan value at the run's last
   item (the item before the next head), and records for the tile its trailing partial (the scan
   value at its last item), whether it holds a head, and — when its first run began in an earlier
   tile and ends in this one — that run's output slot. Sums in a sparse tile (few heads per 32-item
   word) skip the item-wide scan: each run sums its items word by word (:func:`_word_sum_runs`);
3. the fix-up (more than one tile), a program per ``_FIXUP_BLOCK`` tiles: each block's aggregate
   (a launch of its own, when there are several blocks), then each block's carry from the earlier
   blocks' aggregates and, from it, the carry each tile receives from runs that began before it (a
   segmented scan of the partials), combined into those slots.

Every association is fixed by the tile size, the fix-up block and, for sums, each tile's keys (which
of the two forms its sums take), so float results are reproducible run to run.
"""
from __future__ import annotations

import functools

import torch
import triton
import triton.language as tl

from .. import policy
from .._launch import launch
from .._utils import (ALL_NUMERIC_DTYPES, InputValueError, cdiv, check_jit_function, check_tensor, maxnreg_kwargs,
                      num_sms)
from ..agent import lookback
from ..agent.launch_chain import chain_kwargs, chain_link
from ..block.reduce import combine_add, combine_max_propagate_nan, combine_min_propagate_nan
from .select import SELECT_HEADS, SELECTABLE_DTYPES, Plan, flat_input, highest_set_bit, lowest_set_bit, popcount32

_NAMED = {"sum": combine_add, "min": combine_min_propagate_nan, "max": combine_max_propagate_nan}


def _segmented_scan_template(f, v):
    return tl.associative_scan((f, v), 0, seg_combine)  # noqa: F821  (bound by bind_jit)


@functools.lru_cache(maxsize=None)
def segmented_scan(combine):
    """``SEG_SCAN(flags, values) -> (flags, scan)``: the inclusive scan of ``values`` restarted at every
    set flag, for ``combine``. The operator is bound into the scanning function (compiled Triton
    cannot pass an operator received as a ``tl.constexpr`` on to ``tl.associative_scan``)."""
    return lookback.bind_jit(_segmented_scan_template, seg_combine=lookback.segmented_combine(combine, 1))


@triton.jit
def _take_last(ka, va, kb, vb):
    """Reduce ``(key, value)`` pairs to the value of the largest key (associative, and commutative
    while keys are distinct: Triton's reductions combine lanes in butterfly order, so a "take the
    later operand" rule would not be order-safe). Callers key valid lanes by their lane index and
    masked lanes by -1, so only masked lanes tie, and a valid lane always wins over them."""
    later = kb > ka
    return tl.where(later, kb, ka), tl.where(later, vb, va)


@triton.jit
def _write_head_keys(keys_ptr, out_keys_ptr, words, max_heads, heads_before, base, offset, w, first_items,
                     FIRST_ITEMS: tl.constexpr):
    """Each run head's key to its run's slot, word by word: round ``r`` takes every word's ``r``-th
    set bit (keys are read at the heads only; ``max_heads``: the most heads in one word).
    ``FIRST_ITEMS``: round 0's keys are ``first_items`` (each word's first head key, from pass 1)."""
    rest = words
    r = 0
    if FIRST_ITEMS:
        low, _ = lowest_set_bit(rest)
        m = rest != 0
        tl.store(out_keys_ptr + offset + heads_before, first_items, mask=m)
        rest = rest ^ low
        r = 1
    while r < max_heads:
        low, index = lowest_set_bit(rest)
        m = rest != 0
        key = tl.load(keys_ptr + base + w * 32 + index, mask=m)
        tl.store(out_keys_ptr + offset + heads_before + r, key, mask=m)
        rest = rest ^ low
        r += 1


@triton.jit
def _word_sum_runs(v, words, ends, max_ends, heads_before, offset, w, out_vals_ptr, partial_ptr, pid,
                   SEG_SCAN: tl.constexpr, ACC: tl.constexpr, WORDS: tl.constexpr):
    """Run sums of a sparse tile without an item-wide scan. Each word's items are a row of 32: a run
    ending at bit ``e`` of word ``w`` sums the row from its head (when the head is in the same word)
    or from bit 0 plus the carry into the word: a segmented scan over the tile's words of each
    word's sum (from its last head on, for a word holding a head). Also stores the tile's partial.
    Items outside a sum count as -0.0 (0 for integers), so a run of -0.0 sums to -0.0, as in the
    item scan. (-0.0 made from its bits: ``tl.full`` of -0.0 gives +0.0; row sums by ``tl.reduce``:
    the interpreter's ``tl.sum`` starts from +0.0.)"""
    bit = tl.arange(0, 32)
    v2 = tl.reshape(v, [WORDS, 32])
    none = tl.full([], 0x80000000, tl.uint32).to(tl.float32, bitcast=True).to(ACC)
    last_head = highest_set_bit(words)
    from_last = tl.reduce(tl.where(bit[None, :] >= last_head[:, None], v2, none), 1, combine_add)
    has_head = (words != 0).to(tl.int32)
    _, inclusive = SEG_SCAN(has_head, from_last)        # (a word without heads: its whole row)
    carry = tl.where(w == 0, none, tl.gather(inclusive, tl.maximum(w - 1, 0), 0))
    rest = ends
    r = 0
    while r < max_ends:
        low, index = lowest_set_bit(rest)
        m = rest != 0
        heads_to_end = words & ((low << 1) - 1)          # heads at or below the end
        start = highest_set_bit(heads_to_end)             # (-1: the run began before the word)
        row = (bit[None, :] >= start[:, None]) & (bit[None, :] <= index[:, None])
        val = tl.reduce(tl.where(row, v2, none), 1, combine_add)
        val = tl.where(start < 0, val + carry, val)
        run = heads_before + popcount32(heads_to_end).to(tl.int32) - 1
        tl.store(out_vals_ptr + offset + run, val, mask=m)
        rest = rest ^ low
        r += 1
    tl.store(partial_ptr + pid + w * 0, inclusive, mask=w == WORDS - 1)


@triton.jit
def _rbk_tile(tile, v, words, wnext, first_items, offset, first_word, keys_ptr, out_keys_ptr, out_vals_ptr,
              partial_ptr, has_head_ptr, fix_ptr, n, SEG_SCAN: tl.constexpr, ACC: tl.constexpr, TILE: tl.constexpr,
              SPARSE_ROUNDS: tl.constexpr, WORD_SUMS: tl.constexpr, FIRST_ITEMS: tl.constexpr):
    """Pass 2 over tile ``tile``, its reads done (:func:`_rbk_loads`). Run heads come from pass 1's bitmask
    (bit ``i % 32`` of word ``i // 32``); an item ends its run when the next item is a head, so the run
    ends are the head words shifted by one bit. Bit work is done on the tile's ``TILE / 32`` words, then
    spread to the items; the keys are read again only at the heads. A tile whose words hold at most
    ``SPARSE_ROUNDS`` heads and ends each writes its keys and run values word by word (a round per set
    bit), else item by item. ``WORD_SUMS`` (sums): a sparse tile sums its runs word by word
    (:func:`_word_sum_runs`) instead of scanning its items. ``FIRST_ITEMS``: pass 1 stored each word's
    first head key (the select engine's ``WORD_KEYS``, in ``first_items``); sparse tiles write those
    without reading them at the heads."""
    WORDS: tl.constexpr = TILE // 32
    lane = tl.arange(0, TILE)
    w = tl.arange(0, WORDS)
    bit = tl.arange(0, 32).to(tl.uint32)
    base = tile.to(tl.int64) * TILE
    rem = tl.minimum(n - base, TILE).to(tl.int32)
    # run ends: the item before each head, and the input's last item; only items below rem
    last_w = (rem - 1) // 32
    last_b = ((rem - 1) % 32).to(tl.uint32)
    ends = (words >> 1) | (wnext << 31)
    ends = tl.where((w == last_w) & (n - base <= TILE), ends | (tl.full([], 1, tl.uint32) << last_b), ends)
    ones = tl.full([], 0xFFFFFFFF, tl.uint32)
    below_last = ((tl.full([], 2, tl.uint32) << last_b) - tl.full([], 1, tl.uint32))   # bits 0 .. last_b
    ends = ends & tl.where(w < last_w, ones, tl.where(w == last_w, below_last, tl.zeros_like(ones)))
    head_count = popcount32(words).to(tl.int32)
    end_count = popcount32(ends).to(tl.int32)
    heads_before = tl.cumsum(head_count, 0) - head_count
    max_heads = tl.max(head_count, 0)   # (the most heads, and ends, in one word of the tile)
    max_ends = tl.max(end_count, 0)
    sparse = tl.maximum(max_heads, max_ends) <= SPARSE_ROUNDS
    # (each branch stores the tile's partial for the fix-up: the scan value at its last item)
    if sparse & WORD_SUMS:
        _write_head_keys(keys_ptr, out_keys_ptr, words, max_heads, heads_before, base, offset, w, first_items,
                         FIRST_ITEMS)
        _word_sum_runs(v, words, ends, max_ends, heads_before, offset, w, out_vals_ptr, partial_ptr, tile,
                       SEG_SCAN, ACC, WORDS)
    else:
        heads = tl.reshape(((words[:, None] >> bit[None, :]) & 1) != 0, [TILE])
        h32 = heads.to(tl.int32)
        _, s = SEG_SCAN(h32 | (lane == 0).to(tl.int32), v)
        if sparse:
            # few heads and ends per word: written word by word, round r taking each word's r-th set bit
            # (keys read at the heads; scan values gathered from the tile at the ends)
            _write_head_keys(keys_ptr, out_keys_ptr, words, max_heads, heads_before, base, offset, w, first_items,
                             FIRST_ITEMS)
            rest = ends
            r = 0
            while r < max_ends:
                low, index = lowest_set_bit(rest)
                m = rest != 0
                run = heads_before + popcount32(words & ((low << 1) - 1)).to(tl.int32) - 1   # heads up to the end
                val = tl.gather(s, tl.where(m, w * 32 + index, 0), 0)
                tl.store(out_vals_ptr + offset + run, val, mask=m)
                rest = rest ^ low
                r += 1
        else:
            tails = tl.reshape(((ends[:, None] >> bit[None, :]) & 1) != 0, [TILE])
            tile_keys = tl.load(keys_ptr + base + lane, mask=heads)
            item_run = tl.cumsum(h32, 0) - 1                  # (int32, from the tile's offset)
            tl.store(out_keys_ptr + offset + item_run, tile_keys, mask=heads)
            tl.store(out_vals_ptr + offset + item_run, s, mask=tails)
        tl.store(partial_ptr + tile + lane * 0, s, mask=lane == rem - 1)
    # tile summary for the fix-up: whether the tile holds a head, and the slot of the run that began
    # before it (its first item is no head) and ends in it (the tile holds a run end)
    tl.store(has_head_ptr + tile, (max_heads > 0).to(tl.int32))
    fix = tl.where(((first_word & 1) == 0) & (max_ends > 0), offset - 1, -1)
    tl.store(fix_ptr + tile, fix)


@triton.jit
def _rbk_loads(t, vals_ptr, bits_ptr, offsets_ptr, first_items_ptr, n, num_words, num_tiles, ACC: tl.constexpr,
               TILE: tl.constexpr, FIRST_ITEMS: tl.constexpr):
    """What pass 2 reads of tile ``t`` (nothing past the last tile: a persistent program prefetches the
    next tile before it knows whether there is one): its values, head words, the words after them,
    first head keys (``FIRST_ITEMS``) and output offset."""
    WORDS: tl.constexpr = TILE // 32
    lane = tl.arange(0, TILE)
    w = tl.arange(0, WORDS)
    live = t < num_tiles
    base = t.to(tl.int64) * TILE
    wbase = t.to(tl.int64) * WORDS
    v = tl.load(vals_ptr + base + lane, mask=live & (lane < n - base), other=0).to(ACC)
    words = tl.load(bits_ptr + wbase + w, mask=live, other=0).to(tl.uint32, bitcast=True)   # (bits past n are 0)
    wnext = tl.load(bits_ptr + wbase + w + 1, mask=live & (wbase + w + 1 < num_words), other=0).to(tl.uint32,
                                                                                                  bitcast=True)
    first_items = words   # (unused without FIRST_ITEMS)
    if FIRST_ITEMS:
        first_items = tl.load(first_items_ptr + wbase + w, mask=live)
    offset = tl.load(offsets_ptr + t, mask=live, other=0)
    first_word = tl.load(bits_ptr + wbase, mask=live, other=0)    # (its bit 0: the tile's first item is a head)
    return v, words, wnext, first_items, offset, first_word


@triton.jit
def _rbk_kernel(keys_ptr, vals_ptr, bits_ptr, offsets_ptr, out_keys_ptr, out_vals_ptr, partial_ptr, has_head_ptr,
                fix_ptr, first_items_ptr, n, num_words, num_tiles, SEG_SCAN: tl.constexpr, ACC: tl.constexpr,
                TILE: tl.constexpr, SPARSE_ROUNDS: tl.constexpr, WORD_SUMS: tl.constexpr, PDL: tl.constexpr = 0,
                FIRST_ITEMS: tl.constexpr = 0, PERSISTENT: tl.constexpr = 0):
    """Pass 2: a tile per program, or (``PERSISTENT``: the policy's ``PERSIST`` > 0) a grid of fewer
    programs, each taking tiles ``pid, pid + grid, ...`` and loading the next one's values and words
    before it works on the current one, so a load is in flight while the tile's chain of dependent steps
    runs (:func:`_rbk_tile`). ``PDL``: this and the fix-up kernels form a launch chain after the count scan
    (:mod:`tritoncub.agent.launch_chain`)."""
    chain_link(PDL)
    pid = tl.program_id(0)
    if PERSISTENT:
        step = tl.num_programs(0)
        v, words, wnext, first_items, offset, first_word = _rbk_loads(
            pid, vals_ptr, bits_ptr, offsets_ptr, first_items_ptr, n, num_words, num_tiles, ACC, TILE, FIRST_ITEMS)
        t = pid
        while t < num_tiles:
            nv, nwords, nwnext, nfirst, noffset, nfirst_word = _rbk_loads(
                t + step, vals_ptr, bits_ptr, offsets_ptr, first_items_ptr, n, num_words, num_tiles, ACC, TILE,
                FIRST_ITEMS)
            _rbk_tile(t, v, words, wnext, first_items, offset, first_word, keys_ptr, out_keys_ptr, out_vals_ptr,
                      partial_ptr, has_head_ptr, fix_ptr, n, SEG_SCAN, ACC, TILE, SPARSE_ROUNDS, WORD_SUMS,
                      FIRST_ITEMS)
            v, words, wnext, first_items, offset, first_word = nv, nwords, nwnext, nfirst, noffset, nfirst_word
            t += step
    else:
        v, words, wnext, first_items, offset, first_word = _rbk_loads(
            pid, vals_ptr, bits_ptr, offsets_ptr, first_items_ptr, n, num_words, num_tiles, ACC, TILE, FIRST_ITEMS)
        _rbk_tile(pid, v, words, wnext, first_items, offset, first_word, keys_ptr, out_keys_ptr, out_vals_ptr,
                  partial_ptr, has_head_ptr, fix_ptr, n, SEG_SCAN, ACC, TILE, SPARSE_ROUNDS, WORD_SUMS, FIRST_ITEMS)


@triton.jit
def _seg_last(partial_ptr, has_head_ptr, start, count, carry, COMBINE: tl.constexpr, SEG_SCAN: tl.constexpr,
              BLOCK: tl.constexpr):
    """Over items ``start .. start + count`` (at most BLOCK) of the (partial, has head) arrays: their
    segmented inclusive scan with ``carry`` entering the items before the first head, ``(scan, valid,
    the scan's last valid value)``."""
    lane = tl.arange(0, BLOCK)
    m = lane < count
    p = tl.load(partial_ptr + start + lane, mask=m, other=0)
    f = tl.load(has_head_ptr + start + lane, mask=m, other=1)
    _, s = SEG_SCAN(f, p)
    seen = tl.cumsum(f, 0) > 0
    s = tl.where(seen, s, COMBINE(carry, s))
    _, last = tl.reduce((tl.where(m, lane, -1), s), 0, _take_last)
    return s, m, last


@triton.jit
def _rbk_block_kernel(partial_ptr, has_head_ptr, block_agg_ptr, block_flag_ptr, num_tiles, SEG_SCAN: tl.constexpr,
                      BLOCK: tl.constexpr, PDL: tl.constexpr = 0):
    """Fix-up, step 1 (a program per BLOCK tiles): the block's aggregate (the tiles' partials combined
    from the block's last head on) and whether the block holds a head."""
    chain_link(PDL)
    b = tl.program_id(0)
    lane = tl.arange(0, BLOCK)
    start = b.to(tl.int64) * BLOCK
    count = tl.minimum(num_tiles - start, BLOCK).to(tl.int32)
    m = lane < count
    p = tl.load(partial_ptr + start + lane, mask=m, other=0)
    f = tl.load(has_head_ptr + start + lane, mask=m, other=0)
    _, s = SEG_SCAN(f, p)
    _, last = tl.reduce((tl.where(m, lane, -1), s), 0, _take_last)
    tl.store(block_agg_ptr + b, last)
    tl.store(block_flag_ptr + b, tl.max(f, 0))


@triton.jit
def _rbk_fixup_kernel(partial_ptr, has_head_ptr, fix_ptr, block_agg_ptr, block_flag_ptr, out_vals_ptr, num_tiles,
                      COMBINE: tl.constexpr, SEG_SCAN: tl.constexpr, BLOCK: tl.constexpr, PDL: tl.constexpr = 0):
    """Fix-up, step 2 (a program per BLOCK tiles): the carry into the block (a segmented scan of the
    earlier blocks' aggregates; block 0 starts with a head, so it is always defined), then the carry
    into each tile (segmented exclusive scan of the partials), combined into the slot of the run that
    crosses into the tile."""
    chain_link(PDL)
    b = tl.program_id(0)
    lane = tl.arange(0, BLOCK)
    carry = tl.load(partial_ptr)                 # (a placeholder: block 0 holds a head)
    j = 0
    while j < b:
        _, _, carry = _seg_last(block_agg_ptr, block_flag_ptr, j, tl.minimum(b - j, BLOCK), carry, COMBINE,
                                SEG_SCAN, BLOCK)
        j += BLOCK
    start = b.to(tl.int64) * BLOCK
    count = tl.minimum(num_tiles - start, BLOCK).to(tl.int32)
    s, m, _ = _seg_last(partial_ptr, has_head_ptr, start, count, carry, COMBINE, SEG_SCAN, BLOCK)
    cin = tl.gather(s, tl.maximum(lane - 1, 0), 0)
    cin = tl.where(lane == 0, carry, cin)
    fx = tl.load(fix_ptr + start + lane, mask=m, other=-1)
    need = m & (fx >= 0)
    o = tl.load(out_vals_ptr + fx, mask=need, other=0)
    tl.store(out_vals_ptr + fx, COMBINE(cin, o.to(s.dtype)), mask=need)


_POLICY = policy.register(
    "reduce_by_key",
    space={"TILE": [256, 512, 1024, 2048, 4096, 8192], "COUNT_TILES": [1, 2, 4, 8, 16], "num_warps": [1, 2, 4, 8, 16],
           "num_stages": [1, 2], "MAXNREG": [0, 48, 56, 64], "WORD_KEYS": [0, 1], "PERSIST": [0, 4, 8, 12, 16, 24]},
    fallback={"TILE": 2048, "COUNT_TILES": 2, "num_warps": 8, "num_stages": 1, "MAXNREG": 0, "WORD_KEYS": 0,
              "PERSIST": 0},
    valid=lambda v: v["TILE"] * v["COUNT_TILES"] <= 32768,   # (the count pass's items per program)
    doc="TILE items per program in pass 2; pass 1 (the select engine's bitmask count) runs on the same tiles, "
        "COUNT_TILES of them per program. MAXNREG: pass 2's register cap per thread (0: none; NVIDIA only): "
        "a sparse tile's work is a chain of dependent steps, so more resident tiles per SM pay. WORD_KEYS 1 "
        "(32-bit keys): pass 1 also stores each word's first head key, and pass 2's first round of key "
        "writes takes it, loaded with the words, instead of reading the keys at the heads after them. PERSIST p "
        "> 0: pass 2 runs p programs per SM (when there are more tiles), each loading its next tile while it "
        "works on the current one.")

_VALUE_DTYPES = ALL_NUMERIC_DTYPES


def _acc_dtype(dtype: torch.dtype):
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    return dtype


_TL = {torch.float32: tl.float32, torch.float64: tl.float64, torch.int8: tl.int8, torch.int16: tl.int16,
       torch.int32: tl.int32, torch.int64: tl.int64, torch.uint8: tl.uint8}
for _name, _tl in (("uint16", tl.uint16), ("uint32", tl.uint32), ("uint64", tl.uint64)):
    if getattr(torch, _name, None) is not None:
        _TL[getattr(torch, _name)] = _tl


#: pass 2 writes a tile word by word when no word holds more heads or run ends than this (0: only tiles
#: with nothing to write; 32: always); a module constant so tests can force either form
_SPARSE_ROUNDS = 4
#: tiles per program of the fix-up (a module constant so tests can make runs and carries cross blocks)
_FIXUP_BLOCK = 1024
#: sums of sparse tiles word by word (_word_sum_runs) rather than by an item-wide segmented scan; a
#: module constant so tests run both
WORD_SUMS = True


_COUNT_POLICIES: dict = {}


def _count_policy(pol, select_pol):
    """The select policy of pass 1 (reduce_by_key's tile, COUNT_TILES and warps), one object per pair of
    policies: the select engine remembers its launches per policy object."""
    key = (id(pol), id(select_pol))
    hit = _COUNT_POLICIES.get(key)
    if hit is not None and hit[0] is pol and hit[1] is select_pol:
        return hit[2]
    made = policy.Policy("select", {**select_pol.values, "TILE": pol["TILE"], "COUNT_TILES": pol["COUNT_TILES"],
                                    "WORD_KEYS": pol["WORD_KEYS"]},
                         pol.num_warps, pol.num_stages, pol.source)
    if len(_COUNT_POLICIES) > 64:
        _COUNT_POLICIES.clear()
    _COUNT_POLICIES[key] = (pol, select_pol, made)
    return made


def reduce_by_key(keys: torch.Tensor, values: torch.Tensor, combine="sum"):
    """Aggregate of every run of equal consecutive keys. Returns ``(unique_keys, aggregates,
    num_runs)`` (outputs of ``n`` slots, the first ``num_runs`` valid; ``num_runs`` on the device)."""
    check_tensor(keys, "keys", SELECTABLE_DTYPES)
    check_tensor(values, "values", _VALUE_DTYPES, device=keys.device)
    if values.shape != keys.shape:
        raise InputValueError(f"keys and values must have one shape (item i of one pairs with item i of the other), "
                              f"got {tuple(keys.shape)} and {tuple(values.shape)}")
    if isinstance(combine, str):
        if combine not in _NAMED:
            raise InputValueError(f"combine must be one of {sorted(_NAMED)} or a @triton.jit function, got {combine!r}")
        combine = _NAMED[combine]
    else:
        check_jit_function(combine, "combine", 2, "the earlier value, then the later")
    kf, vf = flat_input(keys), flat_input(values)
    n = kf.numel()
    dev = kf.device
    acc = _acc_dtype(vf.dtype)
    pol = policy.select("reduce_by_key", dev)
    sel_pol = _count_policy(pol, policy.select("select", dev))
    plan = Plan(kf, None, SELECT_HEADS, pol=sel_pol, two_pass=True)
    out_k = torch.empty_like(kf)
    out_v = torch.empty(n, dtype=vf.dtype, device=dev)
    if n == 0:
        return out_k, out_v, plan.num_selected
    nt = plan.num_tiles
    nb = cdiv(nt, _FIXUP_BLOCK)
    partial = torch.empty(nt + nb, dtype=acc, device=dev)           # tile partials, then block aggregates
    has_head = torch.empty(nt + nb, dtype=torch.int32, device=dev)  # the same for "holds a head"
    fix = torch.empty(nt, dtype=torch.int64, device=dev)
    seg = segmented_scan(combine)
    # aggregates are scanned in the accumulator type; a separate buffer when it differs
    out_acc = out_v if acc == vf.dtype else torch.empty(n, dtype=acc, device=dev)
    persist = pol["PERSIST"]
    grid = min(nt, persist * num_sms(dev)) if persist else nt
    launch(_rbk_kernel, (grid,), kf, vf, plan.bits, plan.offsets, out_k, out_acc, partial, has_head, fix,
           plan.first_items if plan.word_keys else fix, n, plan.bits.numel(), nt, SEG_SCAN=seg, ACC=_TL[acc],
           TILE=pol["TILE"], SPARSE_ROUNDS=_SPARSE_ROUNDS, FIRST_ITEMS=int(plan.word_keys), PERSISTENT=int(persist > 0),
           WORD_SUMS=WORD_SUMS and combine is combine_add, num_warps=pol.num_warps, num_stages=pol.num_stages,
           **maxnreg_kwargs(pol["MAXNREG"]), **chain_kwargs(dev, True))
    if nt > 1:
        if nb > 1:
            launch(_rbk_block_kernel, (nb,), partial, has_head, partial[nt:], has_head[nt:], nt, SEG_SCAN=seg,
                   BLOCK=_FIXUP_BLOCK, num_warps=8, **chain_kwargs(dev, True))
        launch(_rbk_fixup_kernel, (nb,), partial, has_head, fix, partial[nt:], has_head[nt:], out_acc, nt,
               COMBINE=combine, SEG_SCAN=seg, BLOCK=_FIXUP_BLOCK, num_warps=8, **chain_kwargs(dev, True))
    if out_acc is not out_v:
        out_v.copy_(out_acc)
    return out_k, out_v, plan.num_selected
