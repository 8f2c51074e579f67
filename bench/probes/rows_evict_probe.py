"""Row sums under the benchmark's method (inputs rotated through 8 copies, do_bench's L2 flush): the
loads' L2 eviction hint (EVICTION) and ROWS/BLOCK/warps/stages of segmented_reduce, against a plain
streaming read of the same bytes, torch and the device-wide sum. The source of the hand-set short and
medium buckets of policies/sm_90/segmented_reduce.json.

    PYTHONPATH=. python bench/probes/rows_evict_probe.py
"""
import itertools, torch, triton, triton.language as tl, triton.testing
import tritoncub
from tritoncub import policy
from tritoncub.device import segmented_reduce as S, reduce as R
from bench.harness import rotating

@triton.jit
def _stream_sum(x, part, n, TILE: tl.constexpr, EV: tl.constexpr):
    pid = tl.program_id(0); np_ = tl.num_programs(0)
    acc = tl.zeros([TILE], tl.float32)
    for t in range(pid, tl.cdiv(n, TILE), np_):
        o = t.to(tl.int64) * TILE + tl.arange(0, TILE)
        acc += tl.load(x + o, mask=o < n, other=0., eviction_policy=EV)
    tl.store(part + pid, tl.sum(acc))

def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3

part = torch.empty(132 * 64, device="cuda")
for m, k in ((4096, 1024), (65536, 128)):
    xs = [torch.randn(m, k, device="cuda") for _ in range(8)]
    fl = [x.view(-1) for x in xs]
    n = m * k
    print(m, k, flush=True)
    print(f"  torch sum(-1) {bench(rotating(xs, lambda x: x.sum(-1))):7.2f} us")
    print(f"  op            {bench(rotating(xs, lambda x: torch.ops.tritoncub.sum(x, [-1]))):7.2f} us")
    print(f"  device sum    {bench(rotating(fl, lambda x: R.sum(x))):7.2f} us")
    print(f"  torch clone   {bench(rotating(fl, lambda x: x.clone())):7.2f} us")
    for ev, tile, w, progs in itertools.product(("", "evict_first"), (2048,), (4, 8), (264, 528, 1056)):
        t = bench(rotating(fl, lambda x: _stream_sum[(progs,)](x, part, n, TILE=tile, EV=ev, num_warps=w)))
        print(f"  stream ev={ev or '-':12} tile={tile} w={w} progs={progs}: {t:7.2f} us", flush=True)
    res = []
    space = (((1, 2, 4), (128, 512, 1024), (1, 2, 4, 8), (2,), ("", "evict_first")) if k == 1024 else
             ((4, 8, 16), (64, 128), (2, 4, 8), (2, 3), ("evict_first",)))
    for rows, block, w, s, ev in itertools.product(*space):
        if rows * block > 16384 or rows * block < 8 * w or block > k: continue
        cfg = {"ROWS": rows, "BLOCK": block, "num_warps": w, "num_stages": s, "EVICTION": ev, "SPLIT_CHUNK": 0}
        with policy.override("segmented_reduce", cfg):
            f = rotating(xs, lambda x: torch.ops.tritoncub.sum(x, [-1]))
            t = triton.testing.do_bench(f, warmup=10, rep=60, return_mode="median") * 1e3
        res.append((t, cfg))
    res.sort(key=lambda r: r[0])
    for t, cfg in res[:12]:
        print(f"  op cfg {cfg}: {t:7.2f} us")
    print("  worst", res[-1])
