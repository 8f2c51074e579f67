"""logcumsumexp as a scan of (running max, scaled sum) pairs against the one-value log-add-exp scan.

``combine_logsumexp_pair`` carries ``(m, t)`` standing for ``m + log1p(t)``: one exp a combine and one
log1p an item at the store, where ``combine_logaddexp`` takes an exp and a log1p a combine. Each variant
is checked against a float64 reference first (largest absolute error printed, torch's beside it), then
timed: do_bench medians (GPU us per call, L2 flushed, as ``python -m bench``), two interleaved rounds,
torch alongside. Variants: ``one`` (the one-value scan), ``pairs`` (the pairs at the policy's tiles),
and ``pairs`` under policy overrides of the single-pass tile (1-D) or the rows kernel's tile (rows).
``--det``: the reproducible mode's tiles instead (each result also checked to repeat bit for bit).
Written for the portable kernel: on NVIDIA GPUs logcumsumexp's pairs now take their warp-synchronous
kernel (buckets lse32 / lse64, ``lse_warp_sync_probe.py``), which this probe's overrides of the
``*_costly`` buckets do not reach."""
import contextlib
import sys
import torch
import triton
sys.path.insert(0, ".")   # run from the repository root: python bench/probes/logcumsumexp_pairs_probe.py
import tritoncub  # noqa: F401
from tritoncub import policy
from tritoncub.device import scan as S

print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)


def run(x, dim, mode, det=False, over=None):
    """``(fn, override)``: a call of logcumsumexp on the pairs (``mode`` "pairs") or the one-value scan,
    and the policy override (bucket, values) to hold while timing it (entered once, outside the timed
    calls: a fresh override per call would defeat the remembered launches)."""
    pairs_acc = (torch.float32, torch.float64) if mode == "pairs" else ()

    def f():
        S._LSE_PAIRS_ACC = pairs_acc
        try:
            return S.logcumsumexp(x, dim, deterministic=det)
        finally:
            S._LSE_PAIRS_ACC = (torch.float32, torch.float64)
    return f, over


def held(over):
    return contextlib.nullcontext() if over is None else policy.override("scan", over[1], bucket=over[0])


def us(f):
    return triton.testing.do_bench(f, warmup=20, rep=200, return_mode="median") * 1e3


if "--det" in sys.argv:
    # the reproducible mode's tiles for the pairs: a tile waits for the inclusive prefix exactly WINDOW tiles back, so smaller
    # tiles (more in flight) need wider windows
    for shape, dtype in (((1 << 24,), torch.float32), ((1 << 20,), torch.float32), ((1 << 24,), torch.float64),
                         ((1 << 20,), torch.float64)):
        torch.manual_seed(0)
        x = (torch.randn(shape, device="cuda", dtype=torch.float32) * 4).to(dtype)
        ref = torch.logcumsumexp(x.double(), 0)
        # (the buckets the pairs take in the reproducible mode; logs/logcumsumexp_pairs_probe-det-h200-20261129.log
        # was run when they took the plain 8B_det / 16B_det, whose names this line then held)
        b = "16B_costly_det" if dtype == torch.float64 else "8B_costly_det"
        variants = {"fast": run(x, 0, "pairs"), "det": run(x, 0, "pairs", det=True)}
        for tile, warps, win in ((1024, 4, 1024), (2048, 4, 512), (2048, 4, 1024), (2048, 8, 1024), (4096, 8, 512),
                                 (1024, 2, 1024)):
            variants[f"det t{tile}w{warps}lb{win}"] = run(x, 0, "pairs", det=True,
                                                          over=(b, {"TILE_ITEMS": tile, "num_warps": warps,
                                                                    "LOOKBACK_WINDOW": win}))
        errs = {}
        for name, (f, over) in variants.items():
            with held(over):
                out = f()
                again = f()
            errs[name] = (out.double() - ref).abs().max().item()
            if name.startswith("det"):
                assert torch.equal(out, again), f"{name}: not reproducible"
        print(tuple(shape), dtype, "max abs error:", " ".join(f"{k} {v:.2e}" for k, v in errs.items()), flush=True)
        for rnd in range(2):
            t = {}
            for name, (f, over) in variants.items():
                with held(over):
                    t[name] = us(f)
            t["torch"] = us(lambda: torch.logcumsumexp(x, 0))
            print(tuple(shape), dtype, f"round {rnd} us:", " ".join(f"{k} {v:.1f}" for k, v in t.items()), flush=True)
    sys.exit(0)

CASES = [((1 << 24,), 0, torch.float32), ((1 << 20,), 0, torch.float32), ((1 << 26,), 0, torch.float32),
         ((1 << 24,), 0, torch.bfloat16), ((4096, 1024), 1, torch.float32), ((65536, 128), 1, torch.float32),
         ((1024, 4096), 0, torch.float32), ((16, 1 << 20), 1, torch.float32), ((1 << 24,), 0, torch.float64),
         ((1 << 20,), 0, torch.float64), ((4096, 1024), 1, torch.float64), ((65536, 128), 1, torch.float64)]
for shape, dim, dtype in CASES:
    torch.manual_seed(0)
    x = (torch.randn(shape, device="cuda", dtype=torch.float32) * 4).to(dtype)
    ref = torch.logcumsumexp(x.double(), dim)
    one_d = x.dim() == 1
    pb = "16B_costly" if dtype == torch.float64 else "8B_costly"
    variants = {"one": run(x, dim, "one"), "pairs": run(x, dim, "pairs")}
    if one_d:
        for tile, warps in ((1024, 4), (2048, 4), (2048, 8), (4096, 4), (4096, 8)):
            variants[f"pairs t{tile}w{warps}"] = run(x, dim, "pairs", over=(pb, {"TILE_ITEMS": tile, "num_warps": warps,
                                                                                   "LOOKBACK_WINDOW": 128}))
    elif dim == x.dim() - 1 and shape[-1] <= 2048:
        for rt, rw in ((2048, 4), (2048, 8), (4096, 4), (4096, 8), (8192, 8)):
            variants[f"pairs r{rt}w{rw}"] = run(x, dim, "pairs", over=(pb, {"ROWS_TILE": rt, "ROWS_WARPS": rw}))
    if one_d and dtype == torch.float32 and shape[0] == 1 << 24:
        variants["one det"] = run(x, dim, "one", det=True)
        variants["pairs det"] = run(x, dim, "pairs", det=True)
    errs = {}
    for name, (f, over) in variants.items():
        with held(over):
            out = f()
        assert out.dtype == x.dtype and out.shape == x.shape, name
        errs[name] = (out.double() - ref).abs().max().item()
    errs["torch"] = (torch.logcumsumexp(x, dim).double() - ref).abs().max().item()
    print(tuple(shape), f"dim={dim}", dtype, "max abs error vs float64:",
          " ".join(f"{k} {v:.2e}" for k, v in errs.items()), flush=True)
    for rnd in range(2):
        t = {}
        for name, (f, over) in variants.items():
            with held(over):
                t[name] = us(f)
        t["torch"] = us(lambda: torch.logcumsumexp(x, dim))
        print(tuple(shape), f"dim={dim}", dtype, f"round {rnd} us:", " ".join(f"{k} {v:.1f}" for k, v in t.items()),
              flush=True)
