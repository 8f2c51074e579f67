"""Does logcumsumexp's time depend on the data? float32 2^26 (and float64 2^24) normal items scaled by
``s`` (differences past ~87 underflow ``exp`` in float32, past ~104 to zero), monotone data, and the
one-value form beside the pairs; torch and a plain cumsum (the memory floor's stand-in) in the same run.
Each case is checked against float64 (largest absolute error printed) before it is timed (do_bench
median, L2 flushed, as ``python -m bench``). ``--one CASE``: only run that case once (for a profiler)."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import torch  # noqa: E402
import triton  # noqa: E402
from _timing import bench_ms  # noqa: E402
from tritoncub.device import scan as S  # noqa: E402

print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)


def data(kind, n, dtype):
    g = torch.Generator(device="cuda").manual_seed(0)
    if kind.startswith("x"):
        return (torch.randn(n, device="cuda", generator=g, dtype=torch.float64) * float(kind[1:])).to(dtype)
    if kind == "ascending":   # a new maximum every item: t stays below 1/(e - 1)
        return torch.arange(n, device="cuda", dtype=torch.float64).to(dtype) * 0.5
    if kind == "descending":   # the first item stays the maximum: t grows to ~n * exp(-gap)
        return -torch.arange(n, device="cuda", dtype=torch.float64).to(dtype) * 1e-6
    if kind == "zeros":   # equal maxima everywhere: t counts the items
        return torch.zeros(n, device="cuda", dtype=dtype)
    raise ValueError(kind)


def one_form(x):
    S._LSE_PAIRS_ACC = ()
    try:
        return S.logcumsumexp(x, 0)
    finally:
        S._LSE_PAIRS_ACC = (torch.float32, torch.float64)


CASES = [(k, 1 << 26, torch.float32) for k in ("x4", "x40", "x80", "x100", "x150", "x300", "x3000", "ascending",
                                                "descending", "zeros")]
CASES += [(k, 1 << 24, torch.float64) for k in ("x4", "x800", "x3000")]
if "--one" in sys.argv:
    k = sys.argv[sys.argv.index("--one") + 1]
    x = data(k, 1 << 26, torch.float32)
    for _ in range(2):
        S.logcumsumexp(x, 0)
    torch.cuda.synchronize()
    sys.exit(0)
for kind, n, dtype in CASES:
    x = data(kind, n, dtype)
    ref = torch.logcumsumexp(x.double(), 0)
    got = S.logcumsumexp(x, 0)
    err = (got.double() - ref).abs().nan_to_num().max().item()
    terr = (torch.logcumsumexp(x, 0).double() - ref).abs().nan_to_num().max().item()
    row = {"pairs": bench_ms(lambda: S.logcumsumexp(x, 0))}
    if kind in ("x4", "x3000") and dtype == torch.float32:
        row["one"] = bench_ms(lambda: one_form(x))
    row["torch"] = bench_ms(lambda: torch.logcumsumexp(x, 0))
    row["cumsum"] = bench_ms(lambda: torch.cumsum(x, 0))
    print(f"{kind:>10} {n} {str(dtype):>13} err {err:.1e} (torch {terr:.1e}) us:",
          " ".join(f"{k} {v * 1e3:.1f}" for k, v in row.items()), flush=True)
