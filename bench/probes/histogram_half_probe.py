"""The shared-memory histogram of many bins: 16-bit counters (policy SMEM_HALF_MIN_BINS) against 32-bit
ones, and against the global-atomic path (PRIVATE_ALGO 0, which takes more bins than MAX_PRIVATE_BINS with
one atomic per sample): histc of 2^26 uniform fp32 samples (and fewer: the samples per bin that 16-bit
counters need), bincount of 2^26 int32 values, torch in the same run. Every result is checked against
torch first. GPU time per call (profiler) and do_bench with the inputs rotated as ``python -m bench``
does, two interleaved rounds.

    PYTHONPATH=. python bench/probes/histogram_half_probe.py [--baseline]

``--baseline``: the device's policy alone (no variants: a tree without these policy values can run it,
for an A/B in separate processes).
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
from _timing import bench_ms, gpu_us  # noqa: E402
from bench.harness import rotating  # noqa: E402
from tritoncub import policy  # noqa: E402
from tritoncub.device import histogram as H  # noqa: E402

ops = torch.ops.tritoncub
N = 1 << 26
BINS = (256, 4096, 32768, 65536, 131072, 262144, 524288)
VARIANTS = {"32-bit": {"SMEM_HALF_MIN_BINS": 0}, "16-bit": {"SMEM_HALF_MIN_BINS": 1},
            "global atomics": {"PRIVATE_ALGO": 0}}


def line_for(label, inputs, fn_of, torch_fn):
    line = [label]
    for name, cfg in VARIANTS.items():
        with policy.override("histogram", cfg):
            fn = rotating(inputs, fn_of)
            line.append(f"{name} {gpu_us(fn):7.1f} us ({bench_ms(fn) * 1e3:7.1f})")
    fn = rotating(inputs, torch_fn)
    line.append(f"torch {gpu_us(fn):7.1f} ({bench_ms(fn) * 1e3:7.1f})")
    print(" | ".join(line), flush=True)


def main():
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    base = policy.select("histogram", torch.device("cuda")).as_dict()   # (the device's policy, then each variant)
    print("device policy", base, flush=True)
    if "--baseline" in sys.argv:
        VARIANTS.clear()
        VARIANTS["device policy"] = {}
    else:
        H._HALF_MIN_ITEMS_PER_BIN = 0   # (16-bit counters for any number of samples, to find where they pay)
    for name in VARIANTS:
        VARIANTS[name] = {**base, **VARIANTS[name]}
    g = torch.Generator(device="cuda").manual_seed(0)
    xs = [torch.rand(N, device="cuda", generator=g) for _ in range(2)]
    parts = {k: [x[:1 << k].clone() for x in xs] for k in (20, 22, 24)}
    vs = {m: [torch.randint(0, m, (N,), device="cuda", generator=g, dtype=torch.int32) for _ in range(2)]
          for m in (65536, 131072, 262144)}
    for bins in BINS:
        ref = torch.histc(xs[0], bins, 0.0, 1.0)
        for name, cfg in VARIANTS.items():
            with policy.override("histogram", cfg):
                assert torch.equal(ops.histc(xs[0], bins, 0.0, 1.0), ref), (bins, name)
    for m, v in vs.items():
        ref = torch.bincount(v[0])
        for name, cfg in VARIANTS.items():
            with policy.override("histogram", cfg):
                assert torch.equal(ops.bincount(v[0], None, 0), ref), (m, name)
    print("checked against torch", flush=True)
    for rnd in range(2):
        for bins in BINS:
            line_for(f"round {rnd} histc 2^26 bins={bins:6d}", xs, lambda x: ops.histc(x, bins, 0.0, 1.0),
                     lambda x: torch.histc(x, bins, 0.0, 1.0))
        for k, part in parts.items():
            for bins in (4096, 65536, 262144):
                line_for(f"round {rnd} histc 2^{k} bins={bins:6d}", part, lambda x: ops.histc(x, bins, 0.0, 1.0),
                         lambda x: torch.histc(x, bins, 0.0, 1.0))
        for m, v in vs.items():
            line_for(f"round {rnd} bincount 2^26 <{m:6d}", v, lambda x: ops.bincount(x, None, 0),
                     lambda x: torch.bincount(x))


if __name__ == "__main__":
    main()
