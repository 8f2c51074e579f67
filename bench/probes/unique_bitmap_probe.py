"""unique over 2^26 int32 with 2^20 distinct values (the benchmark case): the dense path with the
shared-memory bitmap marking against global byte marking (forced by disabling the bitmap), whole op
(do_bench, L2 flushed, rotated inputs) and per-kernel GPU time (torch.profiler).

    PYTHONPATH=. python bench/probes/unique_bitmap_probe.py
"""
import torch
import triton.testing

import tritoncub  # noqa: F401
from tritoncub.device import unique as U
from bench.harness import rotating

ops = torch.ops.tritoncub
g = torch.Generator(device="cuda").manual_seed(0)
xs = [torch.randint(0, 1 << 20, (1 << 26,), device="cuda", generator=g, dtype=torch.int32) for _ in range(2)]
ref = torch.unique(xs[0])
real_ok = U._bitmap_ok
for label, ok in (("bitmap", real_ok), ("global bytes", lambda d: False)):
    U._bitmap_ok = ok
    assert torch.equal(ops.unique(xs[0])[0], ref), label
    inv = ops.unique(xs[0], True, True, False)[1]
    assert torch.equal(inv, torch.unique(xs[0], return_inverse=True)[1]), label
    t = triton.testing.do_bench(rotating(xs, lambda x: ops.unique(x)), warmup=25, rep=100, return_mode="median")
    ti = triton.testing.do_bench(rotating(xs, lambda x: ops.unique(x, True, True, False)), warmup=25, rep=100,
                                 return_mode="median")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            ops.unique(xs[0])
        torch.cuda.synchronize()
    ks = [(e.key, e.device_time_total / 5) for e in prof.key_averages() if e.device_time_total > 0]
    print(f"{label}: unique {t:.4f} ms, +inverse {ti:.4f} ms; per call: "
          + ", ".join(f"{k[:32]} {us:.1f}us" for k, us in ks), flush=True)
U._bitmap_ok = real_ok
print(f"torch.unique {triton.testing.do_bench(rotating(xs, torch.unique), warmup=25, rep=100, return_mode='median'):.4f} ms")
