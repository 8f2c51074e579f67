"""masked_select 1% / 50% of 2^26 fp32 (two-pass form) taken apart, each timed as ``python -m bench``
times (do_bench median, L2 flushed) together with the host time of one call inside that loop: the
op, its implementation without the dispatcher, the implementation's steps alone (pass 1 and the count
to the host; both passes without any sync; both passes then ``.item()``), and torch.

    PYTHONPATH=. python bench/probes/select_sync_variants.py

(The log select_sync_variants-20261124.log was taken when the count went to the host by a copy into
pinned memory and an event; the probe now reads it from the pass-1 scan's mailbox, as the op does.)
"""
import time

import torch
import triton

import tritoncub  # noqa: F401
from tritoncub.device import select as S

ops = torch.ops.tritoncub
n = 1 << 26
gen = torch.Generator(device="cuda").manual_seed(9)
x = torch.randn(n, device="cuda", generator=gen)
host_us = []


def timed(fn):
    def run():
        t = time.perf_counter()
        fn()
        host_us.append((time.perf_counter() - t) * 1e6)
    return run


def count_only(m):
    plan = S.Plan(x, m, S.SELECT_FLAGGED, load_x=False, two_pass=True, count_to_host=True)
    return plan.host_count()


def no_sync(m):
    plan = S.Plan(x, m, S.SELECT_FLAGGED, load_x=False, two_pass=True)
    buf = torch.empty(n, device="cuda")
    plan.scatter(out=buf)
    return buf


def item_after(m):
    plan = S.Plan(x, m, S.SELECT_FLAGGED, load_x=False, two_pass=True)
    buf = torch.empty(n, device="cuda")
    plan.scatter(out=buf)
    return buf[:int(plan.num_selected.item())]


for d in (0.01, 0.5):
    m = torch.rand(n, device="cuda", generator=gen) < d
    for name, fn in (("torch.masked_select", lambda: torch.masked_select(x, m)),
                     ("ops.masked_select", lambda: ops.masked_select(x, m)),
                     ("_masked_select_impl", lambda: S._masked_select_impl(x, m, True)),
                     ("pass 1 + count to host", lambda: count_only(m)),
                     ("both passes, no sync", lambda: no_sync(m)),
                     ("both passes, then .item()", lambda: item_after(m))):
        res = []
        for _ in range(3):
            host_us.clear()
            ms = triton.testing.do_bench(timed(fn), warmup=25, rep=100, return_mode="median")
            res.append(f"{ms * 1e3:6.1f} us (host {sorted(host_us)[len(host_us) // 2]:5.1f})")
        print(f"{d:<5} {name:28s} {'  '.join(res)}", flush=True)
