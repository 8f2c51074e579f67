"""logcumsumexp of 4096 x 1024 float32 rows (the rows kernel): do_bench and host time per call (200 calls
queued) through the operator, the device function and torch; run once per tree (PYTHONPATH) to compare
two trees in separate processes."""
import time

import torch
import triton
import tritoncub
from tritoncub.device import scan as S
print(tritoncub.__file__)
x = torch.randn(4096, 1024, device="cuda")
op = torch.ops.tritoncub.logcumsumexp
for name, f in (("op", lambda: op(x, -1)), ("device", lambda: S.logcumsumexp(x, -1)), ("torch", lambda: torch.logcumsumexp(x, -1))):
    for _ in range(20): f()
    torch.cuda.synchronize()
    ms = triton.testing.do_bench(f, warmup=25, rep=100, return_mode="median")
    t0 = time.perf_counter()
    for _ in range(200): f()
    host = (time.perf_counter() - t0) / 200 * 1e6
    torch.cuda.synchronize()
    print(f"{name}: do_bench {ms*1e3:.1f} us, host per call (queued) {host:.1f} us")
