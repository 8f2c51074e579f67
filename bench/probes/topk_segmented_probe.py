"""segmented_topk over ragged segments (the segmented bench's 100k power-law segments, 2^26 fp32 keys):
the long segments (more than the ``rows`` policy's ROW_MAX_BLOCK items) in one group of launches or
grouped by length class (``tritoncub.device.topk.LONG_CLASS_BITS``: lengths within a factor
2 ** bits share a group), k = 8 and 100. Every setting's values must equal the first's and its
indices point at items holding them (or be -1 past a short segment's items; k = 100 takes the radix
select, whose choice among items equal to the k-th value is unspecified); do_bench medians (host
included) and GPU time per call (torch.profiler), interleaved, twice.

    PYTHONPATH=. python bench/probes/topk_segmented_probe.py
"""
import sys

import torch
import triton

sys.path.insert(0, "bench/probes")
sys.path.insert(0, "bench")
from _timing import bench_ms, gpu_us  # noqa: E402
from bench_segmented import _power_law_offsets  # noqa: E402
from tritoncub.device import topk as tk  # noqa: E402


def main():
    print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)
    total, nseg = 1 << 26, 100_000
    offs = torch.as_tensor(_power_law_offsets(nseg, total), device="cuda")
    x = torch.randn(total, device="cuda", generator=torch.Generator(device="cuda").manual_seed(1))
    shipped = tk.LONG_CLASS_BITS
    for k in (8, 100):
        ref = None
        for rep in range(2):
            line = [f"k={k}"]
            for bits in (0, 1, 2, 3):
                tk.LONG_CLASS_BITS = bits
                v, i = tk.segmented_topk(x, offs, k)
                ref = v if ref is None else ref
                got = i >= 0   # (segments shorter than k: index -1, value 0 in the other slots)
                ok = (torch.equal(v, ref) and torch.equal(x[i.clamp(min=0)][got], v[got])
                      and bool((v[~got] == 0).all()))
                f = lambda: tk.segmented_topk(x, offs, k)   # noqa: E731
                line.append(f"bits {bits} ok={ok} {bench_ms(f):.3f} ms gpu {gpu_us(f, reps=3) / 1e3:.3f} ms")
            print(" | ".join(line), flush=True)
    tk.LONG_CLASS_BITS = shipped


if __name__ == "__main__":
    main()
