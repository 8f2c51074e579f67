"""Host time per call of the syncing selections at 2^20 items and of unique at 1024 and 2^20 items
(GPU time a few us: the host is the limit), for A/B runs of two trees whose host time moves between processes: each process times its
cases and torch's in alternating blocks (GPU idle before each call) and prints, per case, the lowest
block median and its ratio to torch's in the same process. Every result is checked against torch.

    PYTHONPATH=TREE:. python bench/probes/select_host_ab_probe.py
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: E402
from _timing import host_idle_us  # noqa: E402
from tritoncub.device import run_length_encode as RLE  # noqa: E402

ops = torch.ops.tritoncub
n = 1 << 20
g = torch.Generator(device="cuda").manual_seed(0)
runs = torch.sort(torch.randint(0, n >> 6, (n,), device="cuda", generator=g, dtype=torch.int32)).values
x = torch.randn(n, device="cuda", generator=g)
m = torch.rand(n, device="cuda", generator=g) < 0.01
u, _, c = ops.unique_consecutive(runs, False, True)
ru, rc = torch.unique_consecutive(runs, return_counts=True)
assert torch.equal(u, ru) and torch.equal(c, rc)
assert torch.equal(ops.unique_consecutive(runs)[0], ru)
assert torch.equal(ops.masked_select(x, m), torch.masked_select(x, m))
assert torch.equal(ops.nonzero(m), torch.nonzero(m))
small = torch.randint(0, 100, (1024,), device="cuda", generator=g, dtype=torch.int32)
labels = torch.randint(0, 1000, (n,), device="cuda", generator=g, dtype=torch.int32)
for v in (small, labels):
    got, ref = ops.unique(v, True, True, True), torch.unique(v, return_inverse=True, return_counts=True)
    assert all(torch.equal(a, b) for a, b in zip(got, ref))
e = RLE.encode(runs)
assert int(e[2]) == ru.numel() and torch.equal(e[0][:ru.numel()], ru)
cases = {
    "unique_consecutive": (lambda: ops.unique_consecutive(runs), lambda: torch.unique_consecutive(runs)),
    "unique_consecutive+counts": (lambda: ops.unique_consecutive(runs, False, True),
                                  lambda: torch.unique_consecutive(runs, return_counts=True)),
    "masked_select 1%": (lambda: ops.masked_select(x, m), lambda: torch.masked_select(x, m)),
    "nonzero 1%": (lambda: ops.nonzero(m), lambda: torch.nonzero(m)),
    "unique 1024 in [0, 100)": (lambda: ops.unique(small), lambda: torch.unique(small)),
    "unique 2^20 in [0, 1000) +all": (lambda: ops.unique(labels, True, True, True),
                                       lambda: torch.unique(labels, return_inverse=True, return_counts=True)),
    "rle encode (no sync)": (lambda: RLE.encode(runs), lambda: torch.unique_consecutive(runs, return_counts=True)),
}


print(f"{torch.cuda.get_device_name()} tritoncub from {tritoncub.__file__}", flush=True)
for name, (fn, tfn) in cases.items():
    for _ in range(20):
        fn()
        tfn()
    ours, theirs = [], []
    for _ in range(6):
        ours.append(host_idle_us(fn))
        theirs.append(host_idle_us(tfn))
    print(f"{name:28s} host {min(ours):7.1f} us (blocks {' '.join(f'{v:.0f}' for v in ours)})  torch "
          f"{min(theirs):6.1f}  ratio {min(ours) / min(theirs):5.2f}", flush=True)
