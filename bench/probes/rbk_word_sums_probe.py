"""reduce_by_key pass 2: sparse tiles summing their runs word by word (``WORD_SUMS``) against the
item-wide segmented scan, over a few tiles and warps, at 2^26 int32 keys in 2^20 sorted runs with
fp32 values: correctness against torch, do_bench medians and the kernels' GPU time.

    PYTHONPATH=. python bench/probes/rbk_word_sums_probe.py
"""
import contextlib

import torch

import tritoncub.device.reduce_by_key as R
from bench.harness import rotating
from tritoncub import policy
from _timing import bench_ms, kernel_breakdown

n = 1 << 26
g = torch.Generator(device="cuda").manual_seed(0)
keys = [torch.sort(torch.randint(0, 1 << 20, (n,), device="cuda", generator=g, dtype=torch.int32)).values
        for _ in range(2)]
vals = [torch.randn(n, device="cuda", generator=g) for _ in range(2)]
kv = list(zip(keys, vals))
uk, cnt = torch.unique_consecutive(keys[0], return_counts=True)
ref = torch.segment_reduce(vals[0], "sum", lengths=cnt)
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
CONFIGS = [(False, None), (True, None)] + [
    (True, {"TILE": t, "num_warps": w, "COUNT_TILES": c})
    for t, w, c in ((1024, 4, 4), (512, 2, 4), (512, 2, 8), (512, 1, 8), (256, 1, 16), (256, 1, 8), (1024, 2, 4),
                    (1024, 1, 4), (2048, 2, 4), (2048, 4, 4))]
for word_sums, cfg in CONFIGS:
    R.WORD_SUMS = word_sums
    # (None: the tuned policy; a dict: merged over the fallback, COUNT_TILES included)
    with policy.override("reduce_by_key", cfg) if cfg else contextlib.nullcontext():
        k, v, nr = R.reduce_by_key(keys[0], vals[0], "sum")
        ok = int(nr) == uk.numel() and torch.equal(k[:uk.numel()], uk) and torch.allclose(v[:uk.numel()], ref,
                                                                                             rtol=1e-4, atol=1e-3)
        fn = rotating(kv, lambda p: R.reduce_by_key(p[0], p[1], "sum"))
        ms = [bench_ms(fn) for _ in range(3)]
        kb = kernel_breakdown(fn, reps=5)
    top = ", ".join(f"{name[:24]} {us:.1f}" for name, us, _ in sorted(kb, key=lambda e: -e[1])[:4])
    print(f"WORD_SUMS={int(word_sums)} cfg={cfg or 'tuned'} {'ok' if ok else 'WRONG'} "
          f"{' '.join(f'{m:.4f}' for m in ms)} ms  gpu {sum(u for _, u, _ in kb):.1f} us: {top}", flush=True)
