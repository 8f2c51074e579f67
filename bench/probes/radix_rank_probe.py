"""Tile-ranking probes for one radix-sort digit pass (8-bit digit), 2^28 uint32 keys.

Each candidate either computes, for every key of a tile, its stable rank among the keys of the same
digit in the tile (and scatters the key to precomputed per-tile digit offsets), or a part of that
work, so that the costs can be told apart. Run on a GPU:  python3 bench/probes/radix_rank_probe.py
Results and the reasoning are in RADIX_RANK_NOTES.md.
"""
import os
import sys
import time

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(__file__))
HAVE_GLUON = True
try:
    from _gluon_rank import gluon_pass_kernel, gluon_hist4_kernel
except Exception as e:  # noqa
    print("gluon import failed:", e)
    HAVE_GLUON = False


@triton.jit
def copy_kernel(x_ptr, y_ptr, TILE: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * TILE + tl.arange(0, TILE)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def tl_hist_kernel(x_ptr, h_ptr, shift, TILE: tl.constexpr):
    pid = tl.program_id(0)
    k = tl.load(x_ptr + pid.to(tl.int64) * TILE + tl.arange(0, TILE))
    h = tl.histogram((k >> shift) & 255, 256)
    tl.store(h_ptr + pid.to(tl.int64) * 256 + tl.arange(0, 256), h)


@triton.jit
def lane_kernel(x_ptr, lane_ptr, warp_ptr, TILE: tl.constexpr):
    offs = tl.arange(0, TILE)
    x = tl.load(x_ptr + offs)
    lane = tl.inline_asm_elementwise("mov.u32 $0, %laneid;", "=r,r", [x], dtype=tl.int32, is_pure=False, pack=1)
    warp = tl.inline_asm_elementwise("{.reg .u32 t; mov.u32 t, %tid.x; shr.u32 $0, t, 5;}", "=r,r", [x],
                                     dtype=tl.int32, is_pure=False, pack=1)
    tl.store(lane_ptr + offs, lane)
    tl.store(warp_ptr + offs, warp)


@triton.jit
def packed_rank_kernel(x_ptr, out_ptr, shift, TILE: tl.constexpr, SUB: tl.constexpr):
    """Occurrence index within TILE via packed 8x8-bit counters in int64 ([SUB, 32] cumsum per sub-tile)."""
    pid = tl.program_id(0)
    cols = tl.arange(0, 32)
    run = tl.zeros([256], tl.int32)
    for j in range(TILE // SUB):
        offs = pid.to(tl.int64) * TILE + j * SUB + tl.arange(0, SUB)
        d = (tl.load(x_ptr + offs) >> shift) & 255
        hi = d >> 3
        sh = ((d & 7) * 8).to(tl.int64)
        onehot = tl.where(cols[None, :] == hi[:, None], (tl.full([SUB, 1], 1, tl.int64) << sh[:, None]), 0)
        c = tl.cumsum(onehot, 0)
        own = tl.sum(tl.where(cols[None, :] == hi[:, None], c, 0), 1)
        occ = ((own >> sh) & 255).to(tl.int32) - 1
        occ += tl.gather(run, d, 0)
        run += tl.histogram(d, 256)
        tl.store(out_ptr + offs, occ)


@triton.jit
def dot_rank_kernel(x_ptr, out_ptr, shift, TILE: tl.constexpr):
    """Occurrence index within TILE: prefix of one-hot digits by a lower-triangular tl.dot per 32 rows."""
    pid = tl.program_id(0)
    r = tl.arange(0, 32)
    lower = (r[None, :] < r[:, None]).to(tl.float16)
    cols = tl.arange(0, 256)
    run = tl.zeros([256], tl.int32)
    for j in range(TILE // 32):
        offs = pid.to(tl.int64) * TILE + j * 32 + r
        d = (tl.load(x_ptr + offs) >> shift) & 255
        onehot = (cols[None, :] == d[:, None]).to(tl.float16)
        pre = tl.dot(lower, onehot)
        own = tl.sum(tl.where(cols[None, :] == d[:, None], pre, 0.0), 1).to(tl.int32)
        occ = own + tl.gather(run, d, 0)
        run += tl.sum(onehot.to(tl.int32), 0)
        tl.store(out_ptr + offs, occ)


def tile_offsets(keys, shift, tile):
    d = ((keys.view(torch.int32).long() >> shift) & 255)
    nt = keys.numel() // tile
    cnt = torch.bincount((torch.arange(keys.numel(), device=keys.device) // tile) * 256 + d,
                         minlength=nt * 256).view(nt, 256)
    tot = cnt.sum(0)
    gexcl = torch.cumsum(tot, 0) - tot
    texcl = torch.cumsum(cnt, 0) - cnt
    return (gexcl[None, :] + texcl).to(torch.int32).contiguous(), d


def occurrence_ref(d, tile):
    # occurrence index of each key among equal digits inside its tile
    n = d.numel()
    t = torch.arange(n, device=d.device) // tile
    key = t * 256 + d
    order = torch.argsort(key, stable=True)
    sk = key[order]
    first = torch.searchsorted(sk, sk, right=False)
    occ = torch.empty_like(order)
    occ[order] = torch.arange(n, device=d.device) - first
    return occ.to(torch.int32)


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


def main():
    dev = "cuda"
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__)
    rows = []
    N = 1 << 28
    SHIFT = 8
    keys = torch.randint(-2**31, 2**31 - 1, (N,), device=dev, dtype=torch.int32)
    out = torch.empty_like(keys)
    small = torch.randint(-2**31, 2**31 - 1, (1 << 20,), device=dev, dtype=torch.int32)

    # layout check of a plain tl 1-D tile
    lane = torch.empty(1024, device=dev, dtype=torch.int32)
    warp = torch.empty_like(lane)
    lane_kernel[(1,)](small, lane, warp, TILE=1024, num_warps=4)
    print("tl 1-D tile of 1024, 4 warps: lane of items 0..15:", lane[:16].tolist(), " warp of 0,128,256,512:",
          warp[[0, 128, 256, 512]].tolist(), " lane of 512..519:", lane[512:520].tolist())

    t = bench(lambda: copy_kernel[(N // 4096,)](keys, out, TILE=4096, num_warps=8))
    rows.append(("copy (read+write 4B)", t))
    h = torch.empty((N // 4096) * 256, device=dev, dtype=torch.int32)
    t = bench(lambda: tl_hist_kernel[(N // 4096,)](keys, h, SHIFT, TILE=4096, num_warps=8))
    rows.append(("tl.histogram per 4096 tile", t))

    # packed counters
    for TILE, SUB, nw in ((1024, 128, 4), (2048, 128, 8)):
        try:
            occ = torch.empty_like(small)
            packed_rank_kernel[(small.numel() // TILE,)](small, occ, SHIFT, TILE=TILE, SUB=SUB, num_warps=nw)
            d = (small.long() >> SHIFT) & 255
            ok = torch.equal(occ, occurrence_ref(d, TILE))
            t = bench(lambda: packed_rank_kernel[(N // TILE,)](keys, out, SHIFT, TILE=TILE, SUB=SUB, num_warps=nw))
            rows.append((f"tl packed 8x8bit int64 cumsum rank (no scatter) T={TILE} S={SUB} ok={ok}", t))
        except Exception as e:
            rows.append((f"tl packed T={TILE} failed: {type(e).__name__}: {str(e)[:200]}", float('nan')))
    # tensor-core prefix
    for TILE, nw in ((1024, 4),):
        try:
            occ = torch.empty_like(small)
            dot_rank_kernel[(small.numel() // TILE,)](small, occ, SHIFT, TILE=TILE, num_warps=nw)
            d = (small.long() >> SHIFT) & 255
            ok = torch.equal(occ, occurrence_ref(d, TILE))
            t = bench(lambda: dot_rank_kernel[(N // TILE,)](keys, out, SHIFT, TILE=TILE, num_warps=nw))
            rows.append((f"tl.dot lower-tri one-hot prefix (no scatter) T={TILE} ok={ok}", t))
        except Exception as e:
            rows.append((f"tl.dot rank failed: {type(e).__name__}: {str(e)[:200]}", float('nan')))

    if HAVE_GLUON:
        for W, R in ((8, 16), (8, 8), (16, 8), (8, 24), (16, 16)):
            TILE = W * R * 32
            if N % TILE:
                NN = (N // TILE) * TILE
            else:
                NN = N
            words = W * 256 + 256 + TILE
            words = ((words + 255) // 256) * 256
            words = 1 << (words - 1).bit_length()
            nt_small = small.numel() // TILE
            sm = small[: nt_small * TILE]
            offs_s, d_s = tile_offsets(sm, SHIFT, TILE)
            ref = sm[torch.argsort(d_s, stable=True)]
            offs_big, _ = tile_offsets(keys[:NN], SHIFT, TILE)
            for mode, name in ((0, "rank only, coalesced write"), (1, "rank + direct scatter"),
                               (2, "rank + smem exchange + scatter")):
                try:
                    o = torch.full_like(sm, 7)
                    gluon_pass_kernel[(nt_small,)](sm, o, offs_s, SHIFT, W=W, R=R, MODE=mode, SMEM_WORDS=words,
                                                   num_warps=W)
                    if mode == 0:
                        # o holds destinations; check they give the stable partition
                        chk = torch.empty_like(sm)
                        chk[o.long()] = sm
                        ok = torch.equal(chk, ref)
                    else:
                        ok = torch.equal(o, ref)
                    t = bench(lambda: gluon_pass_kernel[(NN // TILE,)](keys, out, offs_big, SHIFT, W=W, R=R,
                                                                     MODE=mode, SMEM_WORDS=words, num_warps=W))
                    rows.append((f"gluon match.any W={W} R={R} T={TILE}: {name} ok={ok}", t * N / NN))
                except Exception as e:
                    rows.append((f"gluon W={W} R={R} mode {mode} failed: {type(e).__name__}: {str(e)[:300]}",
                                 float('nan')))
        # upfront histogram of all 4 places
        for W, R in ((8, 8), (8, 16)):
            TILE = W * R * 32
            try:
                hist = torch.zeros(4 * 256, device=dev, dtype=torch.int32)
                nsm = torch.cuda.get_device_properties(0).multi_processor_count
                gluon_hist4_kernel[(min(nsm * 4, small.numel() // TILE),)](small, hist, small.numel() // TILE,
                                                                          W=W, R=R, PLACES=4, num_warps=W)
                ref = torch.stack([torch.bincount((small.long() >> (8 * p)) & 255, minlength=256) for p in range(4)])
                ok = torch.equal(hist.view(4, 256).long(), ref)
                def run():
                    hist.zero_()
                    gluon_hist4_kernel[(nsm * 4,)](keys, hist, N // TILE, W=W, R=R, PLACES=4, num_warps=W)
                t = bench(run)
                rows.append((f"gluon upfront histogram, 4 places, red.shared W={W} R={R} ok={ok}", t))
                eq = torch.full_like(keys, 12345)
                def run2():
                    hist.zero_()
                    gluon_hist4_kernel[(nsm * 4,)](eq, hist, N // TILE, W=W, R=R, PLACES=4, num_warps=W)
                rows.append((f"  same, all-equal keys", bench(run2)))
            except Exception as e:
                rows.append((f"gluon hist W={W} R={R} failed: {type(e).__name__}: {str(e)[:300]}", float('nan')))
    # reference: torch.sort and cupy
    try:
        import cupy
        ck = cupy.from_dlpack(keys.view(torch.uint32) if hasattr(torch, 'uint32') else keys)
        t = bench(lambda: cupy.sort(ck))
        rows.append(("cupy.sort uint32 2^28 (CUB radix, 4 passes + copy)", t))
    except Exception as e:
        rows.append((f"cupy failed: {e}", float('nan')))
    rows.append(("torch.sort int32 2^28 (values+indices)", bench(lambda: torch.sort(keys))))
    print()
    print(f"{'candidate':<80} {'ms':>8}")
    for name, t in rows:
        print(f"{name:<80} {t:8.3f}")


if __name__ == "__main__":
    main()
