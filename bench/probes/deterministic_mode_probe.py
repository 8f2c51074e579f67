"""What ``torch.use_deterministic_algorithms(True)`` costs the ops that change path under it: top-k
rows that the radix select would take (a stable sort of the rows instead), weighted ``bincount``
(sorted weights and segment sums instead of float atomics) and ``cumsum`` of fp32 (the look-back
that waits for inclusive prefixes). Each deterministic result is checked: bitwise equal over two
calls, and against torch (top-k: a stable sort's first k, indices included). Times are
``python -m bench``'s (do_bench median, L2 flushed), torch timed in the same run in the default mode.
Torch's deterministic mode also fills every new allocation
(``torch.utils.deterministic.fill_uninitialized_memory``): the deterministic times include those fills.

    PYTHONPATH=. python bench/probes/deterministic_mode_probe.py
"""
import os
import sys

import torch

import tritoncub  # noqa: F401
from _timing import bench_ms

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests"))
from helpers import deterministic_algorithms as det  # noqa: E402

ops = torch.ops.tritoncub


def row(name, fn_ours, fn_torch, check):
    with det(False):
        fast = bench_ms(fn_ours)
        ref = bench_ms(fn_torch) if fn_torch else float("nan")
    with det(True):
        a, b = fn_ours(), fn_ours()
        for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            assert torch.equal(u.view(torch.uint8) if u.is_floating_point() else u,
                               v.view(torch.uint8) if v.is_floating_point() else v), f"{name}: two calls differ"
        check(a)
        slow = bench_ms(fn_ours)
    print(f"{name:44} default {fast:8.4f} ms   deterministic {slow:8.4f} ms ({slow / fast:5.2f}x)   torch {ref:8.4f} ms",
          flush=True)


torch.manual_seed(0)
print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
for rows, length, k in ((1, 1 << 26, 10000), (1, 1 << 26, 100000), (64, 1 << 16, 1000), (4, 1 << 20, 5000)):
    x = torch.randint(0, 1000, (rows, length), device="cuda").float()   # (many ties at the k-th value)

    def check(out, x=x, k=k):
        v, i = out
        rv, ri = torch.sort(x, dim=-1, descending=True, stable=True)
        assert torch.equal(v, rv[:, :k]) and torch.equal(i, ri[:, :k]), "topk: not the stable sort's first k"

    row(f"topk fp32 {rows}x{length} k={k}", lambda x=x, k=k: ops.topk(x, k, -1, True, True),
        lambda x=x, k=k: torch.topk(x, k, -1, True, True), check)

for n, bins in ((1 << 26, 256), (1 << 26, 65536), (1 << 20, 1024)):
    x = torch.randint(0, bins, (n,), device="cuda", dtype=torch.int32)
    w = torch.randn(n, device="cuda")

    def check(out, x=x, w=w):
        ref = torch.bincount(x.cpu(), w.double().cpu())
        torch.testing.assert_close(out.double().cpu(), ref, rtol=1e-4, atol=1e-2)

    row(f"bincount weights fp32 n={n} bins={bins}", lambda x=x, w=w: ops.bincount(x, w, 0),
        lambda x=x, w=w: torch.bincount(x, w), check)

for n in (1 << 20, 1 << 26):
    x = torch.randn(n, device="cuda")
    row(f"cumsum fp32 n={n}", lambda x=x: ops.cumsum(x, 0), lambda x=x: torch.cumsum(x, 0),
        lambda out, x=x: torch.testing.assert_close(out.double(), torch.cumsum(x.double(), 0), rtol=1e-3, atol=1e-1))
