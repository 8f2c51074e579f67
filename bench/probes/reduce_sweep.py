"""Sweep a few DeviceReduce / DeviceSegmentedReduce policies on the current GPU (medians of do_bench).

    python bench/probes/reduce_sweep.py [out.json]

Stage A: tile size x warps x programs per SM for each reduce bucket; stage B: one-at-a-time changes
of grid mapping, load algorithm, cache modifier, eviction and num_stages around A's winner.
Segmented: (ROWS, BLOCK, warps) for the row shapes and random-length segments of the benchmark.
Prints one line per config and writes every number to the JSON file.
"""
import itertools
import json
import sys

import torch
import triton.testing

from tritoncub import policy
from tritoncub.device import reduce as R
from tritoncub.device import segmented_reduce as S


def bench(fn, inputs):
    state = {"i": 0}

    def run():
        state["i"] = (state["i"] + 1) % len(inputs)
        return fn(inputs[state["i"]])
    return float(triton.testing.do_bench(run, warmup=10, rep=40, return_mode="median"))


def pol(op, vals):
    vals = dict(vals)
    nw, ns = vals.pop("num_warps"), vals.pop("num_stages")
    return policy.Policy(op, vals, nw, ns, "sweep")


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "reduce_sweep.json"
    dev = torch.device("cuda")
    results = {"device": torch.cuda.get_device_name(), "reduce": [], "segmented": []}
    # segmented / rows
    sbase = dict(policy.op_policy("segmented_reduce").fallback)
    g = torch.Generator().manual_seed(0)
    lens = torch.randint(0, 2 * (1 << 26) // 100_000, (100_000,), generator=g)
    lens[-1] += (1 << 26) - int(lens.sum())
    lens = lens.clamp_min(0)
    offs = torch.zeros(100_001, dtype=torch.int64)
    offs[1:] = torch.cumsum(lens, 0)
    total = int(offs[-1])
    offs = offs.to(dev)
    scases = [("short", "rows", (65536, 128)), ("medium", "rows", (4096, 1024)), ("segments", "segments", total)]
    for bucket, kind, shape in scases:
        if kind == "rows":
            xs = [torch.randn(*shape, device=dev) for _ in range(4)]
            f = lambda x, p: S.reduce_rows(x, "sum", pol=p)
        else:
            xs = [torch.randn(shape, device=dev) for _ in range(2)]
            f = lambda x, p: S.segmented_reduce(x, offs, None, "sum", pol=p)
        if kind == "rows" and shape[1] <= 128:
            space = itertools.product([8, 16, 32, 64], [128], [4, 8])
        elif kind == "rows":
            space = itertools.product([1, 2], [512, 1024], [4, 8])
        else:
            space = itertools.product([1], [256, 512, 1024], [2, 4, 8])
        for rows, block, nw in space:
            cfg = {**sbase, "ROWS": rows, "BLOCK": block, "num_warps": nw}
            p = pol("segmented_reduce", cfg)
            try:
                ms = bench(lambda x: f(x, p), xs)
            except Exception as e:
                print(bucket, kind, cfg, "ERROR", str(e)[:200], flush=True)
                continue
            results["segmented"].append({"bucket": bucket, "kind": kind, "shape": shape, "cfg": cfg, "ms": ms})
            print(f"seg {kind:<9} {str(shape):<14} R{rows:<3} B{block:<5} w{nw} {ms * 1e3:9.2f} us", flush=True)
        with open(out_path, "w") as fh:
            json.dump(results, fh, indent=1)
    base = dict(policy.op_policy("reduce").fallback)
    cases = [
        ("sum_f4_small", "sum", torch.float32, 1 << 20), ("sum_f4", "sum", torch.float32, 1 << 28),
        ("sum_i4", "sum", torch.int32, 1 << 28), ("sum_f2", "sum", torch.bfloat16, 1 << 28),
        ("arg_f4", "argmax", torch.float32, 1 << 28),
    ]
    for bucket, op, dt, n in cases:
        copies = max(1, (256 << 20) // (n * dt.itemsize))
        xs = [(torch.randn(n, device=dev) * 100).to(dt) for _ in range(copies)]
        kind = "arg" if op.startswith("arg") else "sum"
        code = R.OP_CODES[op]
        outd = [R.acc_dtype(dt)] if kind == "sum" else [dt, torch.int64]
        ident = 0 if kind == "sum" else R.identity(op, dt)

        def run_cfg(cfg):
            p = pol("reduce", cfg)
            f = lambda x: R._launch(kind, code, [x], outd, ident=ident, pol=p)
            ref = f(xs[0])[0].item()
            return bench(f, xs), ref
        grid = []
        for bi, nw, pps in itertools.product([4096, 8192, 16384], [4, 8], [2, 4]):
            cfg = {**base, "BLOCK_ITEMS": bi, "num_warps": nw, "PROGRAMS_PER_SM": pps}
            if not R._valid(cfg) or (n <= (1 << 20) and bi > 8192):
                continue
            grid.append(cfg)
        best = None
        for cfg in grid:
            try:
                ms, val = run_cfg(cfg)
            except Exception as e:  # report, go on
                print(bucket, cfg, "ERROR", str(e)[:200], flush=True)
                continue
            results["reduce"].append({"bucket": bucket, "n": n, "cfg": cfg, "ms": ms, "stage": "A"})
            print(f"{bucket:<13} A {cfg['BLOCK_ITEMS']:>6} w{cfg['num_warps']:<2} pps{cfg['PROGRAMS_PER_SM']} "
                  f"{ms * 1e3:9.2f} us  {n * dt.itemsize / ms / 1e6:7.0f} GB/s", flush=True)
            if best is None or ms < best[0]:
                best = (ms, cfg)
        if best is None:
            continue
        for key, vals in [("num_stages", [1, 3]), ("CACHE_MODIFIER", [".cg"])]:
            for v in vals:
                cfg = {**best[1], key: v}
                try:
                    ms, _ = run_cfg(cfg)
                except Exception as e:
                    print(bucket, cfg, "ERROR", str(e)[:200], flush=True)
                    continue
                results["reduce"].append({"bucket": bucket, "n": n, "cfg": cfg, "ms": ms, "stage": "B"})
                print(f"{bucket:<13} B {key}={v!r:<14} {ms * 1e3:9.2f} us", flush=True)
        del xs
        torch.cuda.empty_cache()
        with open(out_path, "w") as fh:
            json.dump(results, fh, indent=1)

    with open(out_path, "w") as fh:
        json.dump(results, fh, indent=1)


def write_policies(sweep_json, out_dir):
    """Write policies/sm_90/{reduce,segmented_reduce}.json from a sweep's fastest configs."""
    import os
    with open(sweep_json) as fh:
        res = json.load(fh)
    os.makedirs(out_dir, exist_ok=True)
    tuned, log = {}, {}
    for bucket in sorted({r["bucket"] for r in res["reduce"]}):
        rows = [r for r in res["reduce"] if r["bucket"] == bucket]
        best = min(rows, key=lambda r: r["ms"])
        tuned[bucket] = best["cfg"]
        log[bucket] = {"best_ms": best["ms"], "n": best["n"], "configs_timed": len(rows),
                       "worst_ms": max(r["ms"] for r in rows)}
    # buckets not swept take the nearest measured one
    for src, dsts in {"sum_f4": ["default", "sum_f8", "minmax_f4", "minmax_f8", "minmax_i4", "minmax_i8",
                                 "sum_i8"],
                      "sum_f2": ["sum_i1", "sum_i2", "minmax_f2", "minmax_i1", "minmax_i2"],
                      "arg_f4": ["arg_f2", "arg_f8", "arg_i4", "arg_i8", "arg_i1", "arg_i2"],
                      "sum_f4_small": [f"{k}_{c}{b}_small" for k in ("sum", "minmax", "arg")
                                       for c in "fi" for b in (1, 2, 4, 8)]}.items():
        if src in tuned:
            for d in dsts:
                tuned.setdefault(d, dict(tuned[src]))
    with open(os.path.join(out_dir, "reduce.json"), "w") as fh:
        json.dump({"op": "reduce", "target": "sm_90", "device_name": res["device"], "tuned": tuned,
                   "log": {"source": "bench/probes/reduce_sweep.py", "best": log}}, fh, indent=1)
    stuned, slog = {}, {}
    for (bucket, kind), rows in _group(res["segmented"]).items():
        best = min(rows, key=lambda r: r["ms"])
        stuned[bucket] = best["cfg"]
        slog[f"{kind}-{bucket}-{best['shape']}"] = {"best_ms": best["ms"], "configs_timed": len(rows),
                                                    "worst_ms": max(r["ms"] for r in rows)}
    stuned.setdefault("default", stuned.get("medium", {}))
    with open(os.path.join(out_dir, "segmented_reduce.json"), "w") as fh:
        json.dump({"op": "segmented_reduce", "target": "sm_90", "device_name": res["device"], "tuned": stuned,
                   "log": {"source": "bench/probes/reduce_sweep.py", "best": slog}}, fh, indent=1)


def _group(rows):
    out = {}
    for r in rows:
        out.setdefault((r["bucket"], r["kind"]), []).append(r)
    return out


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--write-policies":
        write_policies(sys.argv[2], sys.argv[3])
    else:
        main()
