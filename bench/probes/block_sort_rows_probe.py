"""Per-row block radix sort in shared memory (CUB's BlockRadixSort), for the batched-row sort of rows
of up to a few thousand keys (issue bar: 4096 x 1024 fp32 >= 3x torch.sort(dim=-1), today's bitonic
tile sort 0.94x).

One program sorts one row of ``row_len <= TILE`` 32-bit keys, ``TILE = WARPS * ITEMS * 32``, kept as a
warp-striped ``[WARPS, ITEMS, 32]`` tile (warp ``w`` holds items ``w*32*ITEMS + s*32 + lane``), with
``ceil(KEY_BITS / RADIX_BITS)`` LSD passes entirely in shared memory. Each pass:

1. every key's digit picks a per-warp counter word ``w * RADIX + digit``; the ballot ranking of
   ``tritoncub.block.radix_rank`` (``warp_ballot_rank``) gives each key its rank among the warp's
   earlier keys of the same digit and leaves the warp's digit counts in the counters;
2. the ``[WARPS, RADIX]`` counters are scanned (over warps, then over digits) into each warp's first
   position per digit (stable: digit, then warp, then slot, then lane = item order);
3. every key writes its ordered bits and its source column at its position in two exchange buffers,
   and reads back the key at its own position for the next pass.

Items past ``row_len`` take the largest digit in every pass, so they stay behind every real key, in
order. Afterwards the row's values are gathered from the input by the carried column (exact bits:
``-0.0`` and NaN payloads kept) and written with int64 indices: ``torch.sort(x, -1, descending,
stable=True)``'s result. Shared memory: ``WARPS * RADIX + 2 * TILE`` words, rounded up to a power of
two of ``RADIX``-word rows.

Checked against torch.sort (values and indices, bit for bit) before timing; timed with do_bench
(L2 flushed, as ``python -m bench``) against torch.sort and ``torch.ops.tritoncub.sort`` (the shipped
bitonic tile sort), all in the same run.

    PYTHONPATH=. python bench/probes/block_sort_rows_probe.py [OUT.json]
"""
import json
import sys

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

import tritoncub  # noqa: F401  (registers torch.ops.tritoncub.*)
from tritoncub.block.radix_rank import smem_load_words, smem_store_words, warp_ballot_rank
from tritoncub.thread.radix_traits import extract_digit, to_ordered_bits


@gluon.jit
def _add(a, b):
    return a + b


@gluon.jit
def _block_sort_rows_kernel(keys_ptr, vals_out_ptr, idx_out_ptr, row_len,
                            KEY_BITS: gl.constexpr, RADIX_BITS: gl.constexpr, DESCENDING: gl.constexpr,
                            WARPS: gl.constexpr, ITEMS: gl.constexpr, SMEM_ROWS: gl.constexpr):
    RADIX: gl.constexpr = 1 << RADIX_BITS
    TILE: gl.constexpr = WARPS * ITEMS * 32
    PASSES: gl.constexpr = (KEY_BITS + RADIX_BITS - 1) // RADIX_BITS
    XK: gl.constexpr = WARPS * RADIX          # exchange buffer of ordered bits (words)
    XI: gl.constexpr = WARPS * RADIX + TILE   # exchange buffer of source columns
    L3: gl.constexpr = gl.BlockedLayout([1, ITEMS, 1], [1, 1, 32], [WARPS, 1, 1], [2, 1, 0])
    LC: gl.constexpr = gl.BlockedLayout([WARPS, 1], [1, 32], [1, WARPS], [1, 0])
    LD: gl.constexpr = gl.BlockedLayout([1], [32], [WARPS], [0])
    # the kernel's first and only explicit allocation: word i of it is word i of global_smem
    smem = gl.allocate_shared_memory(gl.int32, [SMEM_ROWS, RADIX], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    row = gl.program_id(0).to(gl.int64)
    w = gl.arange(0, WARPS, layout=gl.SliceLayout(1, gl.SliceLayout(2, L3)))
    s = gl.arange(0, ITEMS, layout=gl.SliceLayout(0, gl.SliceLayout(2, L3)))
    ln = gl.arange(0, 32, layout=gl.SliceLayout(0, gl.SliceLayout(1, L3)))
    w3 = gl.expand_dims(gl.expand_dims(w, 1), 2)
    local = w3 * (32 * ITEMS) + gl.expand_dims(gl.expand_dims(s, 0), 2) * 32 + gl.expand_dims(gl.expand_dims(ln, 0), 1)
    valid = local < row_len
    row_ptr = keys_ptr + row * row_len
    k = gl.load(row_ptr + local, mask=valid)
    bits = to_ordered_bits(k, DESCENDING).to(gl.int32, bitcast=True)
    col = local
    for p in gl.static_range(PASSES):
        smem.slice(0, WARPS, 0).store(gl.zeros([WARPS, RADIX], gl.int32, LC))
        gl.thread_barrier()
        d = extract_digit(bits.to(gl.uint32, bitcast=True), p * RADIX_BITS, RADIX_BITS).to(gl.int32)
        word = w3 * RADIX + gl.where(valid, d, RADIX - 1)
        rank = warp_ballot_rank(word, RADIX_BITS)
        gl.thread_barrier()
        # each thread holds one digit's counts of every warp: the scan over warps stays in-thread
        cnt = smem.slice(0, WARPS, 0).load(LC)
        tot = gl.convert_layout(gl.sum(cnt, 0), LD)
        wexcl = gl.associative_scan(cnt, 0, _add) - cnt
        texcl = gl.associative_scan(tot, 0, _add) - tot
        # (each thread rewrites the very columns it read: no barrier before the store)
        smem.slice(0, WARPS, 0).store(wexcl + gl.expand_dims(gl.convert_layout(texcl, gl.SliceLayout(0, LC)), 0))
        gl.thread_barrier()
        pos = smem_load_words(word) + rank
        smem_store_words(XK + pos, bits)
        smem_store_words(XI + pos, col)
        gl.thread_barrier()
        bits = smem_load_words(XK + local)
        col = smem_load_words(XI + local)
        gl.thread_barrier()   # (the next pass zeroes the counters, which this pass's positions read)
    v = gl.load(row_ptr + col, mask=valid)
    gl.store(vals_out_ptr + row * row_len + local, v, mask=valid)
    gl.store(idx_out_ptr + row * row_len + local, col.to(gl.int64), mask=valid)


def block_sort_rows(x: torch.Tensor, descending: bool = False, warps: int = 4, radix_bits: int = 8):
    """Sort every row of a contiguous 2-D tensor of 32-bit keys: (values, int64 indices)."""
    rows, n = x.shape
    items = max(1, triton.next_power_of_2(n) // (32 * warps))
    tile = warps * items * 32
    assert n <= tile
    radix = 1 << radix_bits
    smem_rows = triton.next_power_of_2((warps * radix + 2 * tile + radix - 1) // radix)   # (a power of two)
    vals = torch.empty_like(x)
    idx = torch.empty(x.shape, dtype=torch.int64, device=x.device)
    _block_sort_rows_kernel[(rows,)](x, vals, idx, n, KEY_BITS=32, RADIX_BITS=radix_bits, DESCENDING=descending,
                                     WARPS=warps, ITEMS=items, SMEM_ROWS=smem_rows, num_warps=warps)
    return vals, idx


def _check(x, descending, **kw):
    v, i = block_sort_rows(x, descending, **kw)
    rv, ri = torch.sort(x, dim=-1, descending=descending, stable=True)
    same_v = torch.equal(v.view(torch.int32), rv.view(torch.int32)) if x.dtype == torch.float32 else torch.equal(v, rv)
    assert same_v and torch.equal(i, ri), (tuple(x.shape), x.dtype, descending, kw)


def main():
    from _timing import bench_ms
    g = torch.Generator(device="cuda").manual_seed(0)
    # correctness first: odd lengths, ties, NaN / -0.0, descending, every warp count
    for shape in ((3, 1), (5, 33), (7, 1000), (4, 1024), (9, 129)):
        x = torch.randn(*shape, device="cuda", generator=g)
        x.view(-1)[::7] = float("nan")
        x.view(-1)[1::11] = -0.0
        x.view(-1)[2::13] = 0.0
        for desc in (False, True):
            for warps in (1, 2, 4, 8):
                if shape[1] <= warps * 32 * max(1, triton.next_power_of_2(shape[1]) // (32 * warps)):
                    _check(x, desc, warps=warps)
        xi = torch.randint(-5, 5, shape, device="cuda", dtype=torch.int32, generator=g)
        _check(xi, False, warps=4)
    print("correct", flush=True)
    records = []
    for shape, warps_list in (((4096, 1024), (2, 4, 8)), ((65536, 128), (1, 2, 4))):
        x = torch.randn(*shape, device="cuda", generator=g)
        t_torch = bench_ms(lambda: torch.sort(x, dim=-1, stable=True))
        t_ship = bench_ms(lambda: torch.ops.tritoncub.sort(x, -1, False, True))
        line = [f"torch {t_torch:.4f} ms", f"tritoncub.sort {t_ship:.4f} ms"]
        for warps in warps_list:
            for rb in (8, 6):
                _check(x, False, warps=warps, radix_bits=rb)
                t = bench_ms(lambda: block_sort_rows(x, warps=warps, radix_bits=rb))
                line.append(f"block {warps}w r{rb} {t:.4f} ms ({t_torch / t:.2f}x torch)")
                records.append(dict(shape=list(shape), warps=warps, radix_bits=rb, ms=t, torch_ms=t_torch,
                                    tritoncub_sort_ms=t_ship))
        print(f"{shape[0]}x{shape[1]} fp32: " + ", ".join(line), flush=True)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__,
                           records=records), f, indent=1)


if __name__ == "__main__":
    main()
