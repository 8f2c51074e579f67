"""One reduce_by_key (2^26 int32 keys in 2^20 sorted runs, fp32 values, sum), for a profiler to look
at its kernels (run under ncu)."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import torch  # noqa: E402
from tritoncub.device import reduce_by_key as RBK  # noqa: E402
n = 1 << 26
keys = torch.sort(torch.randint(0, 1 << 20, (n,), device="cuda", dtype=torch.int32)).values
vals = torch.randn(n, device="cuda")
for _ in range(2):
    RBK.reduce_by_key(keys, vals, "sum")
torch.cuda.synchronize()
