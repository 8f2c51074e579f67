"""Host time of each step of a syncing run-head selection (``unique_consecutive`` of 2^20 sorted
int32 keys in ~16k runs, the bitmask two-pass form), each step timed alone: median of 500 calls, the
GPU idle before each (a sync outside the timed region). The steps add up to more than the op when
they wait for the GPU; they say which Python and torch calls the host time goes to.

    PYTHONPATH=. python bench/probes/select_host_steps_probe.py
"""
import sys
import time

import torch

import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub._utils import Mailbox, check_tensor, refuse_capture
from tritoncub.device import select as S
from tritoncub.device import unique as U

ops = torch.ops.tritoncub
n = 1 << int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20
x = torch.sort(torch.randint(0, max(1, n >> 6), (n,), device="cuda", dtype=torch.int32)).values
dev = x.device
ref = torch.unique_consecutive(x)
assert torch.equal(ops.unique_consecutive(x)[0], ref)
k = ref.numel()
small = torch.empty(k, dtype=torch.int32, device=dev)


def med_us(fn, reps=500, after=None):
    """Median host time of ``fn()``; ``after(result)`` runs untimed after each call."""
    for _ in range(20):
        r = fn()
        if after is not None:
            after(r)
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter_ns()
        r = fn()
        ts.append(time.perf_counter_ns() - t)
        if after is not None:
            after(r)
    torch.cuda.synchronize()
    ts.sort()
    return ts[len(ts) // 2] / 1e3


def plan():
    return S.Plan(x, None, S.SELECT_HEADS, two_pass=True, count_to_host=True,
                  pol=policy.select("select", dev, "heads"))


def plan_and_read():
    p = S.Plan(x, None, S.SELECT_HEADS, two_pass=True, count_to_host=True, pol=policy.select("select", dev, "heads"))
    p.host_count()


def plan_scatter_read():
    p = S.Plan(x, None, S.SELECT_HEADS, two_pass=True, count_to_host=True, pol=policy.select("select", dev, "heads"))
    kk = p.host_count_if_ready()
    v = torch.empty(n if kk is None else kk, dtype=x.dtype, device=dev)
    p.scatter(out=v, count=kk)
    if kk is None:
        p.host_count()


def mailbox():
    b = Mailbox.take(dev)
    b.set(0)
    b.read()


steps = {
    "op: ops.unique_consecutive": lambda: ops.unique_consecutive(x),
    "op: torch.unique_consecutive": lambda: torch.unique_consecutive(x),
    "impl (no dispatch)": lambda: U._unique_consecutive_impl(x, False, False, None),
    "_heads": lambda: U._heads(x, False, False),
    "Plan + host_count (pass 1, wait)": plan_and_read,
    "Plan alone (its two launches queued, no wait)": (plan, lambda p: p.host_count()),
    "Plan + poll + scatter + host_count": plan_scatter_read,
    "check_tensor + refuse_capture + flat_input": lambda: (check_tensor(x, "x", S.SELECTABLE_DTYPES),
                                                            refuse_capture(dev, "u"), S.flat_input(x)),
    "policy.select": lambda: policy.select("select", dev, "heads"),
    "Mailbox take/set/read": mailbox,
    "torch.empty(n)": lambda: torch.empty(n, dtype=torch.int32, device=dev),
    "torch.empty(0, int64)": lambda: torch.empty(0, dtype=torch.int64, device=dev),
    "torch.empty(m).split(6 parts)": lambda: torch.empty(4096, dtype=torch.int64, device=dev).split(
        [1024, 4, 4, 512, 0, 2552]),
    "tensor.view(int32)": lambda: small.view(torch.int32),
    "tensor[:k]": lambda: small[:k],
    "shrink clone (k items)": lambda: small[:k].clone(),
    "torch.empty_like": lambda: torch.empty_like(small),
}
print(f"{torch.cuda.get_device_name()} torch {torch.__version__} n={n} runs={k}", flush=True)
for name, fn in steps.items():
    fn, after = fn if isinstance(fn, tuple) else (fn, None)
    print(f"{name:45s} {med_us(fn, after=after):8.1f} us", flush=True)

# where the constructor's time goes: its callees wrapped by accumulating timers (each wrapper adds
# ~0.3 us); the rest is the constructor's own lines
spent: dict = {}


def timed(name, fn):
    def wrapper(*a, **k):
        t = time.perf_counter_ns()
        try:
            return fn(*a, **k)
        finally:
            spent[name] = spent.get(name, 0) + time.perf_counter_ns() - t
    return wrapper


S.torch = type("T", (), {})()   # a stand-in module for select's torch: its empty and zeros are timed
for attr in dir(torch):
    if not attr.startswith("__"):
        try:
            setattr(S.torch, attr, getattr(torch, attr))
        except Exception:
            pass
S.torch.empty = timed("torch.empty", torch.empty)
S.torch.zeros = timed("torch.zeros", torch.zeros)
torch.Tensor.split = timed("Tensor.split", torch.Tensor.split)
S.LaunchPlan = type("LP", (S.LaunchPlan,), {"__slots__": ()})
S.LaunchPlan.__init__ = timed("LaunchPlan(...)", S.LaunchPlan.__init__)
S.LaunchPlan.__call__ = timed("LaunchPlan launch", S.LaunchPlan.__call__)
S.LaunchPlan.done = timed("LaunchPlan.done", S.LaunchPlan.done)
S.Mailbox = type("MB", (S.Mailbox,), {"__slots__": ()})
S.Mailbox.take = staticmethod(timed("Mailbox.take", Mailbox.take))
S.refuse_capture = timed("refuse_capture", S.refuse_capture)
S.chain_kwargs = timed("chain_kwargs", S.chain_kwargs)
S.chain_memo_key = timed("chain_memo_key", S.chain_memo_key)
S.policy = type("P", (), {"select": staticmethod(timed("policy.select", policy.select))})()
reps = 500
for _ in range(20):
    plan().host_count()
torch.cuda.synchronize()
spent.clear()
total = 0
for _ in range(reps):
    torch.cuda.synchronize()
    t = time.perf_counter_ns()
    p = plan()
    total += time.perf_counter_ns() - t
    p.host_count()
print(f"\nPlan constructor, mean of {reps}: {total / reps / 1e3:.1f} us; callees (us per call):", flush=True)
for name, ns in sorted(spent.items(), key=lambda e: -e[1]):
    print(f"    {name:30s} {ns / reps / 1e3:7.1f}", flush=True)
print(f"    {'(own lines and wrappers)':30s} {(total - sum(spent.values())) / reps / 1e3:7.1f}")
