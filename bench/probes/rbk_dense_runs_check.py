"""reduce_by_key at 2^26 keys in about 2^24 and 2^26 runs (dense: most tiles take the item-wide scan), tuned
policy against other tiles: do_bench medians and the top kernels.

    PYTHONPATH=. python bench/probes/rbk_dense_runs_check.py
"""
import contextlib, torch, sys
sys.path.insert(0, "bench/probes")
from tritoncub import policy
import tritoncub.device.reduce_by_key as R
from bench.harness import rotating
from _timing import bench_ms, kernel_breakdown
n = 1 << 26
for runs in (1 << 24, 1 << 26):
    g = torch.Generator(device="cuda").manual_seed(1)
    kv = [(torch.sort(torch.randint(0, runs, (n,), device="cuda", generator=g, dtype=torch.int32)).values,
           torch.randn(n, device="cuda", generator=g)) for _ in range(2)]
    for cfg in (None, {"TILE": 1024, "num_warps": 4, "COUNT_TILES": 4}, {"TILE": 512, "num_warps": 4, "COUNT_TILES": 4}):
        with policy.override("reduce_by_key", cfg) if cfg else contextlib.nullcontext():
            fn = rotating(kv, lambda p: R.reduce_by_key(p[0], p[1], "sum"))
            ms = bench_ms(fn)
            kb = kernel_breakdown(fn, reps=5)
        top = ", ".join(f"{nm[:20]} {us:.1f}" for nm, us, _ in sorted(kb, key=lambda e: -e[1])[:3])
        print(f"runs~{runs} cfg={cfg or 'tuned'} {ms:.4f} ms  {top}", flush=True)
