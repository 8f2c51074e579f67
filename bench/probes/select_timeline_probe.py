"""masked_select's two-pass form (count to a host mailbox) step by step inside do_bench's loop (256 MB L2 flush, start event,
the call, end event): host timestamps of each step (perf_counter, from the call's start) next to GPU
timestamps (events queued at the same points, from the start event: when the GPU reached them), as
medians over the loop. Tells whether the GPU waits for the host (a launch queued after the GPU
became idle) or the host waits for the GPU.

    PYTHONPATH=. python bench/probes/select_timeline_probe.py
"""
import time

import torch

import tritoncub  # noqa: F401
from tritoncub._utils import check_same_device, check_tensor
from tritoncub.device import select as S

n = 1 << 26
gen = torch.Generator(device="cuda").manual_seed(13)
x = torch.randn(n, device="cuda", generator=gen)
cache = torch.empty(int(256e6 // 4), dtype=torch.int, device="cuda")
stream = torch.cuda.current_stream()
STEPS = ("checks", "Plan (pass 1 + scan queued)", "event recorded (probe only)", "buffer", "pass 2 queued", "count read",
         "shrink", "returned")


def call(m, host, events):
    t0 = time.perf_counter()
    mark = lambda: host.append((time.perf_counter() - t0) * 1e6)  # noqa: E731
    check_tensor(x, "x", S.SELECTABLE_DTYPES)
    check_tensor(m, "mask", (torch.bool,))
    check_same_device(("x", x), ("mask", m))
    xf, mf = S.flat_input(x), S.flat_input(m)
    mark()
    plan = S.Plan(xf, mf, S.SELECT_FLAGGED, load_x=False, two_pass=True, count_to_host=True)
    mark()
    events[0].record(stream)
    mark()
    buf = torch.empty(n, device="cuda")
    mark()
    plan.scatter(out=buf)
    events[1].record(stream)
    mark()
    k = plan.host_count()
    mark()
    out = S.shrink(buf, k)
    events[2].record(stream)
    mark()
    return out, t0


for d in (0.01, 0.5):
    m = torch.rand(n, device="cuda", generator=gen) < d
    ev = [[torch.cuda.Event(enable_timing=True) for _ in range(5)] for _ in range(60)]
    hosts = []
    for i in range(60):
        cache.zero_()
        ev[i][3].record(stream)     # start
        host = []
        _, t0 = call(m, host, ev[i])
        host.append((time.perf_counter() - t0) * 1e6)
        ev[i][4].record(stream)     # end
        hosts.append(host)
    torch.cuda.synchronize()
    med = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
    rows = hosts[10:]
    print(f"== masked_select {d}: start->end {med([ev[i][3].elapsed_time(ev[i][4]) * 1e3 for i in range(10, 60)]):.1f} us")
    for j, name in enumerate(STEPS):
        print(f"  host {med([r[j] for r in rows]):7.1f} us  {name}")
    for j, name in enumerate(("GPU reached: after scan", "GPU reached: after pass 2", "GPU reached: after shrink")):
        print(f"  gpu  {med([ev[i][3].elapsed_time(ev[i][j]) * 1e3 for i in range(10, 60)]):7.1f} us  {name}")
