"""The onesweep sort's upfront histogram: per-warp 32-bit counters (shipped) against lane-private
16-bit counters (each lane of a warp owns a bank-aligned column, two digits share a 32-bit word), so a
warp's ``red.shared`` hits 32 different banks instead of ~3.5-way random conflicts.

Times the kernel alone (do_bench median, L2 flushed, as ``python -m bench``) on 2^28 / 2^24 / 2^20
uint32 keys, checks its counts against the shipped kernel's, then a full ``sort_keys`` for scale.

    PYTHONPATH=. python bench/probes/radix_hist_lanes_probe.py
"""
import sys

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

import tritoncub  # noqa: F401
import tritoncub.device.radix_sort as rs
from tritoncub._utils import cdiv, num_sms
from tritoncub.thread.radix_traits import to_ordered_bits

from _timing import bench_ms

_ADD_ASM = gl.constexpr("""{
.reg .b32 ad, tt;
mov.u32 ad, global_smem;
shl.b32 tt, $1, 2;
add.u32 ad, ad, tt;
red.shared.add.u32 [ad], $2;
mov.u32 $0, 0;
}""")


@gluon.jit
def _smem_add(word, val):
    return gl.inline_asm_elementwise(_ADD_ASM, "=r,r,r", [word, val], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit(do_not_specialize=["n_tiles", "begin_bit", "end_bit"])
def _hist_lanes_kernel(keys_ptr, hist_ptr, n, n_tiles, begin_bit, end_bit,
                       NUM_PLACES: gl.constexpr, RADIX_BITS: gl.constexpr, DESCENDING: gl.constexpr,
                       WARPS: gl.constexpr, ITEMS: gl.constexpr, PLACE_ROWS: gl.constexpr):
    RADIX: gl.constexpr = 1 << RADIX_BITS
    HALF: gl.constexpr = RADIX // 2
    TILE: gl.constexpr = WARPS * ITEMS * 32
    LB: gl.constexpr = gl.BlockedLayout([ITEMS], [32], [WARPS], [0])
    LC: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [WARPS, 1], [1, 0])
    smem = gl.allocate_shared_memory(gl.int32, [PLACE_ROWS * HALF, 32], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    for p in gl.static_range(NUM_PLACES):
        smem.slice(p * HALF, HALF, 0).store(gl.zeros([HALF, 32], gl.int32, LC))
    gl.thread_barrier()
    i = gl.arange(0, TILE, layout=LB)
    lane = (i // ITEMS) % 32
    for t in range(gl.program_id(0), n_tiles, gl.num_programs(0)):
        offs = t.to(gl.int64) * TILE + i
        valid = offs < n
        k = gl.load(keys_ptr + offs, mask=valid)
        bits = to_ordered_bits(k, DESCENDING)
        for p in gl.static_range(NUM_PLACES):
            d = gl.where(valid, rs._place_digit(bits, begin_bit, end_bit, p, RADIX_BITS), 0)
            _smem_add(((p * HALF + (d >> 1)) << 5) | lane, 1 << ((d & 1) << 4))
    gl.thread_barrier()
    j = gl.arange(0, HALF, layout=gl.SliceLayout(1, LC))
    pad = gl.where((j == 0) & (gl.program_id(0) == 0), n_tiles.to(gl.int64) * TILE - n, 0)
    for p in gl.static_range(NUM_PLACES):
        w = smem.slice(p * HALF, HALF, 0).load(LC)
        lo = gl.sum(w & 0xFFFF, 1)
        hi = gl.sum((w >> 16) & 0xFFFF, 1)
        gl.atomic_add(hist_ptr + p * RADIX + 2 * j, lo.to(gl.int64) - pad, sem="relaxed")
        gl.atomic_add(hist_ptr + p * RADIX + 2 * j + 1, hi.to(gl.int64), sem="relaxed")


def lanes(x, hist, warps, items, per_sm):
    n = x.numel()
    tile = warps * items * 32
    n_tiles = cdiv(n, tile)
    max_tiles = 65535 // (warps * items)     # 16-bit counters: at most this many tiles per program
    grid = max(min(n_tiles, num_sms(x.device) * per_sm), cdiv(n_tiles, max_tiles))
    _hist_lanes_kernel[(grid,)](x, hist, n, n_tiles, 0, 32, NUM_PLACES=4, RADIX_BITS=8, DESCENDING=False,
                                WARPS=warps, ITEMS=items, PLACE_ROWS=4, num_warps=warps)


def shipped(x, hist, warps=8, items=8, per_sm=4):
    n = x.numel()
    tile = warps * items * 32
    n_tiles = cdiv(n, tile)
    sms = num_sms(x.device)
    grid = min(n_tiles, sms * (per_sm if n_tiles >= 64 * sms else 1))
    rs._histogram_gluon_kernel[(grid, 1)](x, hist, n, n_tiles, 0, 32, NUM_PLACES=4, RADIX_BITS=8, DESCENDING=False,
                                          WARPS=warps, ITEMS=items, SMEM_ROWS=32, COUNT_SPECIAL=False,
                                          num_warps=warps)


def main():
    dev = torch.device("cuda")
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    g = torch.Generator(device=dev).manual_seed(0)
    for lg in (28, 24, 20):
        n = 1 << lg
        copies = max(1, cdiv(2 * 50 * 2**20, 4 * n))
        xs = [torch.randint(0, 2**32, (n,), device=dev, generator=g, dtype=torch.int64).to(torch.uint32)
              for _ in range(copies)]
        equal = torch.full((n,), 7, device=dev, dtype=torch.uint32)
        ref = torch.zeros(4 * 256, device=dev, dtype=torch.int64)
        shipped(xs[0], ref)
        it = [0]

        def rot(f):
            def call():
                it[0] += 1
                f(xs[it[0] % copies])
            return call
        h = torch.zeros(4 * 256 + 256, device=dev, dtype=torch.int64)
        t = bench_ms(rot(lambda x: shipped(x, h)))
        print(f"2^{lg} shipped per-warp counters: {t * 1e3:.1f} us", flush=True)
        for warps, items, per_sm in ((8, 8, 1), (8, 8, 2), (8, 8, 3), (8, 16, 2), (4, 8, 4), (4, 16, 4), (16, 8, 1)):
            try:
                got = torch.zeros(4 * 256, device=dev, dtype=torch.int64)
                lanes(xs[0], got, warps, items, per_sm)
                ok = torch.equal(got, ref)
                ge = torch.zeros(4 * 256, device=dev, dtype=torch.int64)
                lanes(equal, ge, warps, items, per_sm)
                ok_eq = int(ge.view(4, 256)[:, 7].min()) == n and int(ge.sum()) == 4 * n
                t = bench_ms(rot(lambda x: lanes(x, h, warps, items, per_sm)))
                print(f"2^{lg} lanes w={warps} items={items} per_sm={per_sm}: {t * 1e3:.1f} us ok={ok} equal-keys ok={ok_eq}",
                      flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"2^{lg} lanes w={warps} items={items} per_sm={per_sm}: FAILED {type(e).__name__}: {e}"[:300],
                      flush=True)
        if lg == 28:
            t = bench_ms(rot(lambda x: rs.sort_keys(x)))
            print(f"2^{lg} sort_keys uint32: {t:.3f} ms", flush=True)
        del xs


if __name__ == "__main__":
    sys.exit(main())
