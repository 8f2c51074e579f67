"""The count pass of run heads (sorted int32 keys -> one bit per item and the tile counts) in several
forms of finding each item's predecessor, GPU time per call at 2^26 keys in 2^20 runs over tiles,
programs and warps; every form's bits and counts checked against torch first.

    PYTHONPATH=. python bench/probes/heads_count_forms_probe.py

Forms (``VARIANT``): 0 a second load shifted by one item (the count pass before HEADS_SHIFT);
1 no predecessor at all (wrong heads: the read alone, for scale); 2 quads split from registers, the
tile loaded as [.., 8, 4] (the compiler then gives each thread a whole word: loads uncoalesced
across lanes); 3 ``tl.gather`` across the word's 32 items; 6 quads split from registers, the tile
loaded as [.., 32], each quad's first item by a strided load; 7 the same, each quad's first item by
a gather of the quad before's last across the word's lanes (the shipped ``word_tile_heads``).
Log: ``bench/results/logs/heads_count_forms_probe-h200-20261130.log`` (three runs of this file as it
grew: forms 0-3, then 0/1/6/7, then 0/7 over tiles and warps).
"""
import torch, triton, triton.language as tl
import tritoncub  # noqa: F401  (the sum timed for scale)
from _timing import kernel_breakdown


@triton.jit
def _probe_kernel(x_ptr, bits_ptr, counts_ptr, n, num_tiles, TILE: tl.constexpr, TILES: tl.constexpr,
                  VARIANT: tl.constexpr):
    WORDS: tl.constexpr = TILE // 32
    pid = tl.program_id(0)
    t = pid * TILES + tl.arange(0, TILES)
    base = pid.to(tl.int64) * (TILES * TILE)
    rem = tl.minimum(n - base, TILES * TILE).to(tl.int32)
    w = tl.arange(0, WORDS)
    word = (t - pid * TILES)[:, None] * WORDS + w[None, :]
    if VARIANT <= 1:
        b = tl.arange(0, 32)
        loc = word[:, :, None] * 32 + b[None, None, :]
        inb = loc < rem
        x = tl.load(x_ptr + base + loc, mask=inb)
        if VARIANT == 0:
            prev = tl.load(x_ptr + base + loc - 1, mask=inb & ((loc > 0) | (base > 0)))
            sel = inb & (((loc == 0) & (base == 0)) | (prev != x))
        else:
            sel = inb & (x != 12345)
        words = tl.sum(sel.to(tl.uint32) << b[None, None, :].to(tl.uint32), 2)
        cnt = tl.sum(tl.sum(sel.to(tl.int32), 2), 1)
    elif VARIANT == 2 or VARIANT == 6 or VARIANT == 7:
        # quads of one thread's registers: items 1..3 of a quad compare with the item before in the
        # quad, item 0 (6, 2) with a strided load or (7) the quad before's last item by a gather
        b = tl.arange(0, 32)
        if VARIANT == 2:   # loaded as [.., 8, 4]: the compiler spreads a thread's quads along the word
            j = tl.arange(0, 8)
            q4 = tl.arange(0, 4)
            loc = (word[:, :, None, None] * 32 + j[None, None, :, None] * 4 + q4[None, None, None, :])
            x = tl.load(x_ptr + base + loc, mask=loc < rem)
        else:              # loaded as [.., 32] (lanes along the word), then seen as quads
            loc = word[:, :, None] * 32 + b[None, None, :]
            x = tl.load(x_ptr + base + loc, mask=loc < rem)
        xa, xb = tl.split(tl.reshape(x, (TILES, WORDS, 8, 2, 2)))
        c0, c2 = tl.split(xa)
        c1, c3 = tl.split(xb)
        la, lb = tl.split(tl.reshape(loc, (TILES, WORDS, 8, 2, 2)))
        l0, l2 = tl.split(la)
        if VARIANT != 7:
            p0 = tl.load(x_ptr + base + l0 - 1, mask=(l0 < rem) & ((l0 > 0) | (base > 0)))
        else:   # the quad before's last item by a gather across the word's lanes; a word's first by a load
            q = l0 // 4 % 8
            pc3 = tl.gather(c3, tl.maximum(q - 1, 0), 2)
            lw = word * 32
            pw = tl.load(x_ptr + base + lw - 1, mask=(lw < rem) & ((lw > 0) | (base > 0)))
            p0 = tl.where(q == 0, pw[:, :, None], pc3)
        s0 = (l0 < rem) & (((l0 == 0) & (base == 0)) | (p0 != c0))
        s1 = (l0 + 1 < rem) & (c0 != c1)
        s2 = (l0 + 2 < rem) & (c1 != c2)
        s3 = (l0 + 3 < rem) & (c2 != c3)
        sh = (l0 & 31).to(tl.uint32)
        words = tl.sum((s0.to(tl.uint32) << sh) | (s1.to(tl.uint32) << (sh + 1)) | (s2.to(tl.uint32) << (sh + 2))
                       | (s3.to(tl.uint32) << (sh + 3)), 2)
        cnt = tl.sum(tl.sum(s0.to(tl.int32) + s1.to(tl.int32) + s2.to(tl.int32) + s3.to(tl.int32), 2), 1)
    else:
        # gather along the word's 32 items; the word's first item from a load of the word before
        b = tl.arange(0, 32)
        loc = word[:, :, None] * 32 + b[None, None, :]
        inb = loc < rem
        x = tl.load(x_ptr + base + loc, mask=inb)
        src = tl.maximum(b - 1, 0)
        prev = tl.gather(x, tl.broadcast_to(src[None, None, :], (TILES, WORDS, 32)), 2)
        locw = word * 32
        pw = tl.load(x_ptr + base + locw - 1, mask=(locw < rem) & ((locw > 0) | (base > 0)))
        prev = tl.where(b[None, None, :] == 0, pw[:, :, None], prev)
        sel = inb & (((loc == 0) & (base == 0)) | (prev != x))
        words = tl.sum(sel.to(tl.uint32) << b[None, None, :].to(tl.uint32), 2)
        cnt = tl.sum(tl.sum(sel.to(tl.int32), 2), 1)
    live = t < num_tiles
    tl.store(bits_ptr + base // 32 + word, words.to(tl.int32, bitcast=True), mask=live[:, None])
    tl.store(counts_ptr + t, cnt, mask=live)


print(torch.cuda.get_device_name(), torch.__version__, flush=True)
n = 1 << 26
g = torch.Generator(device="cuda").manual_seed(0)
xs = [torch.sort(torch.randint(0, 1 << 20, (n,), device="cuda", generator=g, dtype=torch.int32)).values
      for _ in range(2)]
def refs(x, TILE):
    nt = triton.cdiv(n, TILE)
    heads = torch.cat([torch.ones(1, dtype=torch.bool, device="cuda"), x[1:] != x[:-1]])
    rc = heads.view(nt, TILE).sum(1).to(torch.int32)
    rb = (heads.view(-1, 32).to(torch.int64) * (1 << torch.arange(32, device="cuda", dtype=torch.int64))).sum(1)
    return rc, torch.where(rb >= 2**31, rb - 2**32, rb).to(torch.int32)


for TILE, TILES, nw in ((2048, 2, 4), (512, 4, 2), (4096, 2, 4), (1024, 4, 4), (2048, 4, 4), (1024, 2, 2),
                        (2048, 2, 8), (4096, 2, 8), (512, 8, 2)):
    nt = triton.cdiv(n, TILE)
    ref_counts, ref_bits = refs(xs[0], TILE)
    for v in ((0, 1, 2, 3, 6, 7) if (TILE, TILES, nw) == (2048, 2, 4) else (0, 7)):
        bits = torch.full((n // 32,), -7, dtype=torch.int32, device="cuda")
        counts = torch.full((nt,), -7, dtype=torch.int32, device="cuda")
        i = [1]
        def fn():
            i[0] ^= 1
            _probe_kernel[(triton.cdiv(nt, TILES),)](xs[i[0]], bits, counts, n, nt, TILE=TILE, TILES=TILES,
                                                    VARIANT=v, num_warps=nw)
        fn()
        ok = torch.equal(counts, ref_counts) and torch.equal(bits, ref_bits)
        us = sum(u for _, u, _ in kernel_breakdown(fn, reps=10))
        us2 = sum(u for _, u, _ in kernel_breakdown(fn, reps=10))
        print(f"TILE {TILE} TILES {TILES} warps {nw} variant {v}: {'ok' if ok else ('(no heads)' if v == 1 else 'WRONG')} gpu {us:.1f} {us2:.1f} us", flush=True)
x = xs[0]
print(f"tritoncub sum: gpu {sum(u for _, u, _ in kernel_breakdown(lambda: torch.ops.tritoncub.sum(x), 10)):.1f} us")
