"""Row sums of 4096x1024 fp32 (16 MiB) under three states of the L2 cache, to see what the bench's
L2 flush costs a 16 MiB read.

``python -m bench`` times with ``triton.testing.do_bench``, which flushes L2 before every call by
zeroing a 256 MB buffer: L2 is then full of *dirty* lines, and every line the op reads evicts one
that must be written back to DRAM first. So a 16 MiB read moves about 32 MiB over the DRAM bus. The
probe times one call after each of:

* ``zero``: the bench's flush (``buf.zero_()``: dirty lines);
* ``read``: a flush that reads the buffer instead (``buf.sum()``: clean lines, no write-backs);
* ``warm``: no flush (the input is already in L2 from the call before); the call is queued behind a
  ~50 us GPU sleep so that the host's launch time is not inside the events (without it, this row
  measured the host: 54-69 us ours, 29-32 us torch's, in the first run).

Same kernels, same data; CUDA events around the one call, medians of ``REPS``.

    PYTHONPATH=. python bench/probes/rows_l2_state_probe.py

Result (H100, ``bench/results/logs/rows_l2_state_probe-20261125b.log``): after the bench's flush ours
10.85 us and torch's 13.4 (1.24x); after a clean flush 9.3 and 11.3 (1.20-1.22x); warm 6.66 and 7.14
(1.07x). The write-backs cost both kernels ~1.6-2 us alike, so the bench's flush is not what keeps
the ratio below the issue's 1.3x: a 16 MiB read has ~2.5 us of launch and ramp that no tiling
removes (the floor probe's best plain kernels: 11.3 us under the bench's timing).
"""
import statistics

import torch

from tritoncub.device import segmented_reduce as S

REPS = 200


def timed(fn, flush):
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(REPS):
        flush()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) * 1e3)
    return statistics.median(out)


m, k = 4096, 1024
x = torch.randn(m, k, device="cuda")
assert torch.allclose(S.reduce_rows(x, "sum"), x.sum(-1), rtol=1e-4, atol=1e-3)
buf = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
flushes = {"zero": lambda: buf.zero_(), "read": lambda: buf.view(torch.int32).sum(),
           "warm": lambda: torch.cuda._sleep(100_000)}
print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}; row sums {m}x{k} fp32, us per call (median of {REPS})")
print(f"{'L2 before the call':20s} {'tritoncub':>10s} {'torch':>8s} {'torch/ours':>10s}")
for rnd in range(2):
    for name, fl in flushes.items():
        ours = timed(lambda: S.reduce_rows(x, "sum"), fl)
        ref = timed(lambda: x.sum(-1), fl)
        print(f"{name:20s} {ours:10.2f} {ref:8.2f} {ref / ours:10.2f}", flush=True)
