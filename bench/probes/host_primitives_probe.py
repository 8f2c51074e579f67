"""Host time of the pieces a sync-bound selection is made of, on this GPU's host: each timed over a
loop of calls (perf_counter; GPU work they queue is tiny), so the launcher's costs can be attacked
where they are.

    PYTHONPATH=. python bench/probes/host_primitives_probe.py

(The log host_primitives_probe-20261124.log has a row for the copy-and-event helper the mailbox
replaced; the probe now times a mailbox round trip instead.)
"""
import time

import torch

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub._utils import Mailbox, check_tensor
from tritoncub.device import select as S

n = 1 << 26
x = torch.randn(n, device="cuda")
m = torch.rand(n, device="cuda") < 0.01
ws = torch.empty(1 << 20, dtype=torch.int64, device="cuda")
plan = S.Plan(x, m, S.SELECT_FLAGGED, load_x=False, two_pass=True)
buf = torch.empty(n, device="cuda")
t0d = plan.num_selected
pinned = torch.empty((), dtype=torch.int64, pin_memory=True)
ev = torch.cuda.Event()
stream = torch.cuda.current_stream()


def mailbox_round_trip():
    box = Mailbox.take(x.device)
    box.set(1)
    box.read()


cases = {
    "torch.empty(2^26 f32)": lambda: torch.empty(n, device="cuda"),
    "torch.empty(1000 i64)": lambda: torch.empty(1000, dtype=torch.int64, device="cuda"),
    "torch.zeros(3)": lambda: torch.zeros(3, dtype=torch.int64, device="cuda"),
    "ws[:1000]": lambda: ws[:1000],
    "ws[10:20].view(int32)": lambda: ws[10:20].view(torch.int32),
    "ws[0] (0-d view)": lambda: ws[0],
    "x.data_ptr() & 15": lambda: x.data_ptr() & 15,
    "check_tensor(x)": lambda: check_tensor(x, "x", S.SELECTABLE_DTYPES),
    "flat_input(x)": lambda: S.flat_input(x),
    "policy.select": lambda: policy.select("select", x.device, "two_pass"),
    "torch.cuda.current_stream(dev)": lambda: torch.cuda.current_stream(x.device),
    "torch.cuda.current_stream()": lambda: torch.cuda.current_stream(),
    "Event()": lambda: torch.cuda.Event(),
    "ev.record()": lambda: ev.record(),
    "ev.record(stream)": lambda: ev.record(stream),
    "pinned.copy_(t0d, non_blocking)": lambda: pinned.copy_(t0d, non_blocking=True),
    "torch.empty((), pin_memory)": lambda: torch.empty((), dtype=torch.int64, pin_memory=True),
    "plan.num_selected": lambda: plan.num_selected,
    "Mailbox take + set + read": mailbox_round_trip,
    "Plan(two_pass) (launches 2)": lambda: S.Plan(x, m, S.SELECT_FLAGGED, load_x=False, two_pass=True),
    "plan.scatter(out=buf)": lambda: plan.scatter(out=buf),
    "shrink(buf, 671088) (clone)": lambda: S.shrink(buf, 671088),
    "buf[:k] (view)": lambda: buf[:1 << 25],
    "buf[:k].clone() 2.7MB": lambda: buf[:671088].clone(),
    ".item()": lambda: t0d.item(),
}
print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}")
for name, fn in cases.items():
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    best = []
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(300):
            fn()
        best.append((time.perf_counter() - t) / 300 * 1e6)
        torch.cuda.synchronize()
    print(f"{name:34s} {min(best):7.2f} us/call (median of 3 loops {sorted(best)[1]:7.2f})", flush=True)
