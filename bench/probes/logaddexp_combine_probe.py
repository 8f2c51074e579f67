"""logcumsumexp's cost: the combine and the first-item fix.

Variants of the log-add-exp combine (each checked against a float64 reference first, its largest
absolute and relative errors printed), timed (do_bench, GPU us per call) in the 1-D single-pass
scan and the rows scan against torch.logcumsumexp; and the library's ``+ 0.0`` first-item fix
against the -inf seed it replaced and the unfixed scan. Every variant runs on the tiles of the
costly operators' policy bucket, as the library's logcumsumexp does."""
import math
import sys
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
sys.path.insert(0, ".")   # run from the repository root: python bench/probes/logaddexp_combine_probe.py
import tritoncub  # noqa: F401
from tritoncub.device import scan as S


@triton.jit
def lae_fdiv(a, b):
    mx = tl.maximum(a, b)
    mn = tl.minimum(a, b)
    e = tl.exp(mn - mx)
    u = 1.0 + e
    one = u == 1.0
    r = mx + tl.where(one, e, tl.log(u) * tl.fdiv(e, tl.where(one, 1.0, u - 1.0), ieee_rounding=False))
    same_inf = (mn == mx) & (tl.abs(mn) == float("inf"))
    r = tl.where(same_inf, a, r)
    return tl.where((a != a) | (b != b), a + b, r)


@triton.jit
def lae_log1p(a, b):
    mx = tl.maximum(a, b)
    mn = tl.minimum(a, b)
    r = mx + libdevice.log1p(tl.exp(mn - mx))
    same_inf = (mn == mx) & (tl.abs(mn) == float("inf"))
    r = tl.where(same_inf, a, r)
    return tl.where((a != a) | (b != b), a + b, r)


@triton.jit
def lae_naive(a, b):
    mx = tl.maximum(a, b)
    mn = tl.minimum(a, b)
    r = mx + tl.log(1.0 + tl.exp(mn - mx))
    same_inf = (mn == mx) & (tl.abs(mn) == float("inf"))
    r = tl.where(same_inf, a, r)
    return tl.where((a != a) | (b != b), a + b, r)


def run(x, dim, combine, **kw):
    acc = S._widen(x.dtype)
    return S.scan_rows_launch((x,), combine, acc_dtypes=(acc,), out_dtypes=(x.dtype,), dim=dim, costly=True,
                              **kw)[0][0]


def err(got, ref):
    d = (got.double() - ref).abs()
    return d.max().item(), (d / ref.abs().clamp_min(1e-30)).max().item()


print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)
seed = torch.full((1,), -math.inf, device="cuda")
for shape, dim in (((1 << 24,), 0), ((1 << 20,), 0), ((4096, 1024), 1), ((65536, 128), 1), ((1024, 4096), 0)):
    x = torch.randn(shape, device="cuda") * 4
    ref = torch.logcumsumexp(x.double(), dim)
    fns = {"library": lambda: S.logcumsumexp(x, dim),
           "unfixed": lambda: run(x, dim, S.combine_logaddexp),
           "seeded": lambda: run(x, dim, S.combine_logaddexp, init=(seed,)),
           "fdiv": lambda: run(x, dim, lae_fdiv, plus_zero=True),
           "log1p": lambda: run(x, dim, lae_log1p, plus_zero=True),
           "naive": lambda: run(x, dim, lae_naive, plus_zero=True),
           "torch": lambda: torch.logcumsumexp(x, dim)}
    print(f"{str(shape):>14} dim={dim} errors (abs, rel) vs float64: " +
          "  ".join(f"{k} {err(f(), ref)[0]:.2e},{err(f(), ref)[1]:.2e}" for k, f in fns.items()), flush=True)
    for rnd in range(2):
        t = {k: triton.testing.do_bench(f, warmup=20, rep=200, return_mode="median") * 1e3 for k, f in fns.items()}
        print(f"{str(shape):>14} dim={dim} round {rnd} us: " + "  ".join(f"{k} {v:.1f}" for k, v in t.items()),
              flush=True)
