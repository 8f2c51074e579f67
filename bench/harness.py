"""The benchmark harness: cases, timing, rotation of inputs, results files.

A family module ``bench/bench_<family>.py`` defines ``cases(ctx) -> Iterable[Case]``. Each case is
one (op, impl, dtype, size) with a no-argument callable that runs the work once. The runner times
it with ``triton.testing.do_bench`` (median of repeated runs after warm-up; inputs rotated through
enough copies to exceed the L2 cache), and computes GB/s from the case's ``bytes_moved`` (the
fewest bytes the op must read and write) and keys/s from ``items``.

Results go to ``bench/results/<device-slug>.json`` (rows keyed by op, impl, dtype, n, shape and
``variant``; a new run replaces matching rows and keeps the others) and a markdown table beside it.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import torch

RESULTS_DIR = Path(__file__).parent / "results"
L2_BYTES_DEFAULT = 64 << 20


@dataclass
class Case:
    op: str                     # e.g. "sum", "cumsum", "sort_keys"
    impl: str                   # "tritoncub" | "torch" | "cub" | "torch.compile" | ...
    dtype: str                  # item dtype, e.g. "float32"
    n: int                      # items processed
    fn: Callable[[], object]    # runs the work once
    bytes_moved: int            # minimal bytes read + written
    shape: tuple | None = None  # for batched/row ops
    variant: str = ""           # e.g. "uniform", "sorted", "end_bit=16", "k=8"
    check: Callable[[], None] | None = None   # optional correctness check run once before timing
    extra: dict = field(default_factory=dict)
    # work the timed call does that the op being measured does not (e.g. the input copy cupy.sort makes
    # before sorting in place): timed alone in the same run and subtracted; the row keeps both times
    subtract: Callable[[], object] | None = None


@dataclass
class Context:
    device: torch.device
    quick: bool = False         # smaller sizes (smoke run)
    l2_bytes: int = L2_BYTES_DEFAULT

    def copies_for(self, nbytes: int) -> int:
        """How many input copies to rotate through so that one pass exceeds 2x the L2 cache."""
        return max(1, math.ceil(2 * self.l2_bytes / max(nbytes, 1)))


def rotating(inputs: list, body: Callable) -> Callable[[], object]:
    """A no-argument callable that applies ``body`` to the next input of ``inputs`` each call."""
    state = {"i": 0}

    def run():
        i = state["i"]
        state["i"] = (i + 1) % len(inputs)
        return body(inputs[i])
    return run


def cupy_module():
    """CuPy with its CUB accelerators switched on, or None if CuPy is not importable."""
    try:
        import cupy  # type: ignore
        from cupy._core import _accelerator  # type: ignore
        _accelerator.set_routine_accelerators(["cub"])
        _accelerator.set_reduction_accelerators(["cub"])
        return cupy
    except Exception:
        return None


def to_cupy(t: torch.Tensor):
    import cupy  # type: ignore
    return cupy.from_dlpack(t)


def time_case(case: Case, warmup_ms: int = 25, rep_ms: int = 100) -> float:
    import triton.testing
    return float(triton.testing.do_bench(case.fn, warmup=warmup_ms, rep=rep_ms, return_mode="median"))


def gpu_time_ms(fn: Callable[[], object], reps: int = 20) -> float | None:
    """GPU time per call: the device time of every kernel, memset and copy ``reps`` calls of ``fn``
    ran, summed and divided by ``reps`` (torch.profiler; None off CUDA). Beside ``do_bench``'s time,
    which also counts the GPU waiting for the host to queue the work, it tells a host-bound call from
    a GPU-bound one."""
    if not torch.cuda.is_available():
        return None
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(reps):
                fn()
            torch.cuda.synchronize()
        events = prof.key_averages()
    except Exception:   # (the profiler unavailable here: no GPU time, the do_bench time still stands)
        return None
    return sum(e.device_time_total for e in events) / reps / 1e3


def measure_copy_gbs(device: torch.device, n: int = 1 << 27) -> float:
    import triton.testing
    x = torch.randn(n, device=device)
    y = torch.empty_like(x)
    ms = triton.testing.do_bench(lambda: y.copy_(x), return_mode="median")
    return 2 * x.numel() * 4 / ms / 1e6


def environment(device: torch.device) -> dict:
    import triton
    env = {"torch": torch.__version__, "triton": triton.__version__, "python": platform.python_version(),
           "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env.update(device=props.name, sm_count=props.multi_processor_count,
                   capability=f"{props.major}.{props.minor}", cuda=torch.version.cuda,
                   l2_bytes=getattr(props, "L2_cache_size", None))
    else:
        env.update(device="cpu (Triton interpreter)")
    cp = cupy_module()
    if cp is not None:
        env["cupy"] = cp.__version__
    return env


def run_cases(cases: Iterable[Case], *, verbose: bool = True, gpu_time: bool = True) -> list[dict]:
    """Time every case (``do_bench``), and with ``gpu_time`` also its GPU time per call
    (:func:`gpu_time_ms`, the row's ``gpu_ms``)."""
    rows = []
    for c in cases:
        try:
            if c.check is not None:
                c.check()
            ms = time_case(c)
            gpu_ms = gpu_time_ms(c.fn) if gpu_time else None
            extra = dict(c.extra)
            if c.subtract is not None:
                sub_ms = time_case(Case(c.op, c.impl, c.dtype, c.n, c.subtract, c.bytes_moved))
                extra.update(timed_ms=ms, subtracted_ms=sub_ms)
                if sub_ms >= ms:
                    raise RuntimeError(f"the subtracted work ({sub_ms:.4f} ms) took as long as the whole call "
                                       f"({ms:.4f} ms): no time left to report")
                ms = ms - sub_ms
                sub_gpu = gpu_time_ms(c.subtract) if gpu_ms is not None else None
                gpu_ms = gpu_ms - sub_gpu if sub_gpu is not None and sub_gpu < gpu_ms else None
            if gpu_ms is not None:
                extra["gpu_ms"] = gpu_ms
        except Exception as e:  # a failing case is reported, not hidden
            rows.append(dict(op=c.op, impl=c.impl, dtype=c.dtype, n=c.n, shape=list(c.shape) if c.shape else None,
                             variant=c.variant, ms=None, error=f"{type(e).__name__}: {e}"[:300]))
            if verbose:
                print(f"  {c.op:<22} {c.impl:<14} {c.dtype:<9} {c.n:>11} {c.variant:<14} ERROR {e}", flush=True)
            continue
        gbs = c.bytes_moved / ms / 1e6
        gkeys = c.n / ms / 1e6
        row = dict(op=c.op, impl=c.impl, dtype=c.dtype, n=c.n, shape=list(c.shape) if c.shape else None,
                   variant=c.variant, ms=ms, gbs=gbs, gkeys=gkeys, bytes_moved=c.bytes_moved, **extra)
        rows.append(row)
        if verbose:
            shape = "x".join(map(str, c.shape)) if c.shape else ""
            gpu = f"  (GPU {extra['gpu_ms']:.4f} ms)" if "gpu_ms" in extra else ""
            print(f"  {c.op:<22} {c.impl:<14} {c.dtype:<9} {c.n:>11} {shape:<12} {c.variant:<14} "
                  f"{ms:9.4f} ms {gbs:8.1f} GB/s {gkeys:8.2f} Gkeys/s{gpu}", flush=True)
    return rows


def results_path(device_name: str, suffix: str = ".json") -> Path:
    from tritoncub.policy import device_slug
    return RESULTS_DIR / (device_slug(device_name) + suffix)


def save(rows: list[dict], env: dict, copy_gbs: float | None) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = results_path(env["device"])
    old = json.loads(path.read_text()) if path.exists() else {"rows": []}
    # a run replaces every old row of the ops it measured (rows of cases it no longer has, or of an
    # implementation it could not time this time, must not stand next to the new ones)
    new_ops = {r["op"] for r in rows}
    kept = [r for r in old.get("rows", []) if r["op"] not in new_ops]
    for r in rows:
        r["date"] = env["date"]
    data = {**{k: v for k, v in old.items() if k != "rows"}, **env,
            "copy_gbs": copy_gbs if copy_gbs is not None else old.get("copy_gbs"),
            "rows": kept + rows}
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    results_path(env["device"], ".md").write_text(markdown_table(data))
    return path


def markdown_table(data: dict) -> str:
    """The results as one markdown table per op, tritoncub beside torch and CUB."""
    lines = [f"# Benchmark results: {data.get('device')}", "",
             f"torch {data.get('torch')}, triton {data.get('triton')}, CuPy {data.get('cupy', 'n/a')}, "
             f"CUDA {data.get('cuda')}; copy bandwidth {data.get('copy_gbs') or 0:.0f} GB/s "
             f"(read+write); medians of `triton.testing.do_bench`. GPU ms: the kernels' device time per call "
             f"(torch.profiler), where recorded: a time well above it is the GPU waiting on the host.", ""]
    rows = [r for r in data["rows"] if r.get("ms") is not None]
    groups: dict = {}
    for r in rows:
        key = (r["op"], r["dtype"], r["n"], str(r.get("shape")), r.get("variant", ""))
        groups.setdefault(r["op"], {}).setdefault(key, {})[r["impl"]] = r
    for op in sorted(groups):
        impls = sorted({i for g in groups[op].values() for i in g}, key=lambda s: (s != "tritoncub", s))
        lines += [f"## {op}", "", "| dtype | n | shape | variant | " + " | ".join(f"{i} ms" for i in impls)
                  + " | tritoncub GB/s | speed-up vs " + " / ".join(i for i in impls if i != "tritoncub")
                  + " | GPU ms " + " / ".join(impls) + " |",
                  "|" + "---|" * (5 + len(impls) + 2)]
        for key in sorted(groups[op], key=lambda k: (k[1], k[0], k[3], k[4])):
            g = groups[op][key]
            cells = [f"{g[i]['ms']:.4f}" if i in g else "" for i in impls]
            t = g.get("tritoncub")
            gbs = f"{t['gbs']:.0f}" if t else ""
            speed = " / ".join(f"{g[i]['ms'] / t['ms']:.2f}x" if (t and i in g) else ""
                               for i in impls if i != "tritoncub")
            shape = "x".join(map(str, key[3].strip("[]").split(", "))) if key[3] != "None" else ""
            gpu_cells = [f"{g[i]['gpu_ms']:.4f}" if i in g and g[i].get("gpu_ms") is not None else "" for i in impls]
            gpu = " / ".join(gpu_cells) if any(gpu_cells) else ""
            lines.append(f"| {key[1]} | {key[2]} | {shape} | {key[4]} | " + " | ".join(cells)
                         + f" | {gbs} | {speed} | {gpu} |")
        lines.append("")
    errors = [r for r in data["rows"] if r.get("ms") is None]
    if errors:
        lines += ["## Failed cases", ""] + [f"- {r['op']} {r['impl']} {r['dtype']} {r['n']}: {r.get('error')}"
                                            for r in errors]
    return "\n".join(lines) + "\n"
