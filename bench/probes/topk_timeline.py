"""Where the wall time of a top-k call goes that its kernels' GPU time does not explain: 16 x 2^20
fp32, k=1000, normal keys against keys in [0, 1) (the same launches, replayed; the bench's wall time
differed by ~90 us where the kernels' sum differed by ~26 us). For each case:

* wall time per call by CUDA events, three ways: ``do_bench`` (L2 flushed before each call), calls
  back to back (median of per-call events), one call after a sync (GPU idle before it);
* the profiler's timeline of three calls, each after an L2 flush as ``do_bench`` does: every
  kernel's start (from the first kernel after the flush) and duration, so idle gaps show.

    PYTHONPATH=.:bench/probes python bench/probes/topk_timeline.py
"""

import torch

from _timing import bench_ms, event_ms, gpu_us, host_ms
import tritoncub  # noqa: F401  (registers torch.ops.tritoncub)

ops = torch.ops.tritoncub
flush_buf = torch.empty(256 << 20, dtype=torch.int8, device="cuda")   # as triton.testing.do_bench


def timeline(fn, calls=3):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            flush_buf.zero_()
            fn()
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    evs.sort(key=lambda e: e.time_range.start)
    out, t0, prev_end = [], None, None
    for e in evs:
        if "FillFunctor<signed char>" in e.name or "FillFunctor<char>" in e.name:   # the flush
            out.append("   -- flush %.1f us" % (e.time_range.end - e.time_range.start))
            t0 = prev_end = e.time_range.end
            continue
        if t0 is None:
            continue
        gap = e.time_range.start - prev_end
        out.append(f"   {e.time_range.start - t0:8.1f} +{e.time_range.end - e.time_range.start:7.1f} us"
                   f"  gap {gap:6.1f}  {e.name[:70]}")
        prev_end = max(prev_end, e.time_range.end)
    return out


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    g = torch.Generator(device="cuda").manual_seed(0)
    for name, make in (("normal", torch.randn), ("keys in [0,1)", torch.rand)):
        x = make(16, 1 << 20, device="cuda", generator=g)
        f = lambda: ops.topk(x, 1000, -1, True, True)  # noqa: E731
        v, i = f()
        assert torch.equal(v, torch.topk(x, 1000).values) and torch.equal(x.gather(-1, i), v)
        print(f"## {name}: do_bench {bench_ms(f):.4f} ms, back to back {event_ms(f):.4f}, "
              f"after a sync {event_ms(f, sync_each=True):.4f}, GPU {gpu_us(f) / 1000:.4f}, "
              f"host {host_ms(f):.4f}", flush=True)
        for line in timeline(f):
            print(line, flush=True)
