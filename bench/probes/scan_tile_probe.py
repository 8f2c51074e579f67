"""The portable single-pass scan's tile shape for the operators that use it today (sums have their
own kernel): buckets 4B (logcumsumexp, cumprod and a running max of float32) and 8B (cummax,
float64 logcumsumexp, the float32 linear recurrence pair) on one long row. Each config is forced
through ``policy.override``, every result checked against torch first, then timed (do_bench
median, GPU us per call, two rounds); torch timed alongside."""
import contextlib
import sys
import torch
import triton
import triton.language as tl
sys.path.insert(0, ".")   # run from the repository root: python bench/probes/scan_tile_probe.py
import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import scan as S


@triton.jit
def running_max(a, b):
    return tl.maximum(a, b)


def lin_ref(a, b):
    out = torch.empty_like(b, dtype=torch.float64)
    acc = torch.zeros((), dtype=torch.float64, device=b.device)
    # the recurrence's exact reference is sequential; the probe compares on a short prefix only
    for i in range(64):
        acc = a[i].double() * acc + b[i].double()
        out[i] = acc
    return out[:64]


print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)
configs = [None] + [{"TILE_ITEMS": t, "num_warps": w, "LOOKBACK_WINDOW": lb}
                    for t in (2048, 4096, 8192) for w in (4, 8) for lb in (32, 128)]
for n in (1 << 20, 1 << 24, 1 << 26):
    g = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(n, device="cuda", generator=g) * 4
    xd = x.double()
    p = 1 + torch.randn(n, device="cuda", generator=g) * 1e-4     # products that stay finite
    a = torch.rand(n, device="cuda", generator=g) * 0.5 + 0.5
    ops = {  # name: (bucket, ours, torch or None, check)
        "logcumsumexp f32": ("4B", lambda: S.logcumsumexp(x, 0), lambda: torch.logcumsumexp(x, 0), "close"),
        "cumprod f32": ("4B", lambda: S.cumprod(p, 0), lambda: torch.cumprod(p, 0), "close"),
        "running max f32": ("4B", lambda: S.inclusive_scan(x, running_max, dim=0), lambda: torch.cummax(x, 0)[0],
                            "equal"),
        "cummax f32": ("8B", lambda: S.cummax(x, 0), lambda: torch.cummax(x, 0), "pair"),
        "logcumsumexp f64": ("8B", lambda: S.logcumsumexp(xd, 0), lambda: torch.logcumsumexp(xd, 0), "close"),
        "linear recurrence f32": ("8B", lambda: S.inclusive_scan((a, x), S.combine_linear_recurrence, dim=0)[1],
                                  None, "lin"),
    }
    for name, (bucket, ours, theirs, check) in ops.items():
        ref = theirs() if theirs is not None else lin_ref(a, x)
        t_torch = triton.testing.do_bench(theirs, warmup=10, rep=100, return_mode="median") * 1e3 if theirs else None
        rounds = [[], []]
        for cfg in configs:
            label = "tuned" if cfg is None else f"{cfg['TILE_ITEMS']}/{cfg['num_warps']}w/lb{cfg['LOOKBACK_WINDOW']}"
            try:
                with (policy.override("scan", cfg, bucket=bucket) if cfg else contextlib.nullcontext()):
                    got = ours()
                    if check == "pair":
                        assert torch.equal(got[0], ref[0]) and torch.equal(got[1], ref[1])
                    elif check == "equal":
                        assert torch.equal(got, ref)
                    elif check == "lin":
                        torch.testing.assert_close(got[:64].double(), ref, rtol=1e-4, atol=1e-4)
                    else:   # (float32 products over 2^26 items drift apart by ~sqrt(n) ulps)
                        torch.testing.assert_close(got, ref, rtol=1e-2, atol=1e-3)
                    for r in range(2):
                        us = triton.testing.do_bench(ours, warmup=10, rep=100, return_mode="median") * 1e3
                        rounds[r].append(f"{label} {us:.1f}")
            except Exception as e:  # reported, not fatal
                rounds[0].append(f"{label} failed: {type(e).__name__}: {str(e)[:80]}")
        tt = f"torch {t_torch:.1f} us" if t_torch else "torch -"
        for r in range(2):
            print(f"{name} n=2^{n.bit_length() - 1} [{bucket}] round {r}: {tt} | " + " | ".join(rounds[r]), flush=True)
