"""Which dtypes each torch.ops.tritoncub operator takes against its torch counterpart on the same GPU:
prints every (op, dtype) where the two differ -- one refuses and the other not, or both run and
disagree (dtype, shape or values; float values within 1e-2, ties of topk compared by value).

    PYTHONPATH=. python bench/probes/torch_parity_probe.py
"""
import torch, tritoncub, traceback
ops = torch.ops.tritoncub
d = "cuda"
DT = [torch.complex128, torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint16, torch.uint32,
      torch.uint64, torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64]
g = torch.Generator(device=d).manual_seed(0)
def make(dt, shape=(3, 37)):
    if dt == torch.bool:
        return torch.rand(shape, device=d, generator=g) < 0.5
    if dt.is_complex:
        return torch.randn(shape, device=d, dtype=dt, generator=g)
    if dt.is_floating_point:
        return torch.randn(shape, device=d, generator=g).to(dt)
    return torch.randint(0, 50, shape, device=d, generator=g).to(dt)
lens = torch.tensor([10, 0, 27], device=d)
CASES = {
 "sum": (lambda x: torch.sum(x), lambda x: ops.sum(x)),
 "sum_dim": (lambda x: torch.sum(x, -1), lambda x: ops.sum(x, [-1])),
 "amax": (lambda x: torch.amax(x, -1), lambda x: ops.amax(x, [-1])),
 "amin": (lambda x: torch.amin(x), lambda x: ops.amin(x)),
 "argmax": (lambda x: torch.argmax(x, -1), lambda x: ops.argmax(x, -1)),
 "argmin": (lambda x: torch.argmin(x), lambda x: ops.argmin(x)),
 "cumsum": (lambda x: torch.cumsum(x, -1), lambda x: ops.cumsum(x, -1)),
 "cumprod": (lambda x: torch.cumprod(x, -1), lambda x: ops.cumprod(x, -1)),
 "cummax": (lambda x: tuple(torch.cummax(x, -1)), lambda x: ops.cummax(x, -1)),
 "cummin": (lambda x: tuple(torch.cummin(x, -1)), lambda x: ops.cummin(x, -1)),
 "logcumsumexp": (lambda x: torch.logcumsumexp(x, -1), lambda x: ops.logcumsumexp(x, -1)),
 "sort": (lambda x: tuple(torch.sort(x, dim=-1, stable=True)), lambda x: ops.sort(x, -1)),
 "argsort": (lambda x: torch.argsort(x, dim=-1, stable=True), lambda x: ops.argsort(x, -1)),
 "topk": (lambda x: torch.topk(x, 3)[0], lambda x: ops.topk(x, 3)[0]),
 "topk_idx": (lambda x: torch.topk(x, 3)[0], lambda x: x.gather(-1, ops.topk(x, 3)[1])),
 "histc": (lambda x: torch.histc(x, 10, 0, 40), lambda x: ops.histc(x, 10, 0, 40)),
 "bincount": (lambda x: torch.bincount(x.flatten()), lambda x: ops.bincount(x.flatten())),
 "masked_select": (lambda x: torch.masked_select(x, x != 0), lambda x: ops.masked_select(x, x != 0)),
 "nonzero": (lambda x: torch.nonzero(x), lambda x: ops.nonzero(x)),
 "unique": (lambda x: tuple(torch.unique(x, return_inverse=True, return_counts=True)),
            lambda x: ops.unique(x, return_inverse=True, return_counts=True)),
 "unique_consecutive": (lambda x: tuple(torch.unique_consecutive(x, return_counts=True)),
                        lambda x: (lambda r: (r[0], r[2]))(ops.unique_consecutive(x, return_counts=True))),
 "diff": (lambda x: torch.diff(x, dim=-1), lambda x: ops.diff(x, dim=-1)),
 "segment_reduce": (lambda x: torch.segment_reduce(x.flatten()[:37], "sum", lengths=lens),
                    lambda x: ops.segment_reduce(x.flatten()[:37], torch.cat([lens.new_zeros(1), lens.cumsum(0)]), "sum")),
}
def same(a, b):
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor): return "type"
        if a.dtype != b.dtype: return f"dtype {a.dtype} vs {b.dtype}"
        if a.shape != b.shape: return f"shape {tuple(a.shape)} vs {tuple(b.shape)}"
        if a.is_floating_point() or a.is_complex():
            ok = torch.allclose(a.double() if not a.is_complex() else a.to(torch.complex128),
                                b.double() if not b.is_complex() else b.to(torch.complex128), rtol=1e-2, atol=1e-2, equal_nan=True)
        else:
            ok = torch.equal(a.cpu(), b.cpu()) if a.dtype not in (torch.uint16, torch.uint32, torch.uint64) else torch.equal(a.cpu().to(torch.int64) if a.dtype != torch.uint64 else a.cpu().view(torch.int64), b.cpu().to(torch.int64) if b.dtype != torch.uint64 else b.cpu().view(torch.int64))
        return "" if ok else "values"
    a, b = tuple(a), tuple(b)
    if len(a) != len(b): return "arity"
    return ";".join(s for s in (same(p, q) for p, q in zip(a, b)) if s)
for name, (tf, of) in CASES.items():
    for dt in DT:
        x = make(dt)
        try:
            r = tf(x); te = None
        except Exception as e:
            te = f"{type(e).__name__}: {str(e)[:70]}"
        try:
            o = of(x); oe = None
        except Exception as e:
            oe = f"{type(e).__name__}: {str(e)[:90]}"
        if te and oe: status = "both refuse"
        elif te: status = f"TORCH REFUSES, ours ok ({te})"
        elif oe: status = f"GAP torch ok, ours: {oe}"
        else:
            s = same(r, o)
            status = "ok" if not s else f"DIFFER {s}"
        if status not in ("ok", "both refuse"):
            print(f"{name:18s} {str(dt)[6:]:10s} {status}", flush=True)
print("done")
