"""Row sums of a 4096x1024 fp32 matrix through the Hopper tensor-memory accelerator (host-side
tensor descriptors): does a bulk copy engine reading whole [ROWS, 256] boxes get the 16 MB in
faster than per-thread vector loads (``rows_floor_probe``: best 11.2 us, torch 14.6 us)? One-shot
programs and persistent programs whose loop Triton pipelines (``num_stages`` boxes in flight),
against torch.sum(dim=-1) and the shipped op, do_bench medians with L2 flushed, repeated.

    PYTHONPATH=. python bench/probes/rows_tma_probe.py
"""
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

import tritoncub  # noqa: F401
from _timing import bench_ms


@triton.jit
def _rows_tma_kernel(desc, out_ptr, n_rows, K: tl.constexpr, ROWS: tl.constexpr, BOX: tl.constexpr):
    r0 = tl.program_id(0) * ROWS
    acc = tl.zeros([ROWS], dtype=tl.float32)
    for c in tl.static_range(K // BOX):
        acc += tl.sum(desc.load([r0, c * BOX]), 1)
    r = r0 + tl.arange(0, ROWS)
    tl.store(out_ptr + r, acc, mask=r < n_rows)


@triton.jit
def _rows_tma_persistent_kernel(desc, out_ptr, n_rows, K: tl.constexpr, ROWS: tl.constexpr, BOX: tl.constexpr,
                                STAGES: tl.constexpr):
    blocks = tl.cdiv(n_rows, ROWS)
    for b in tl.range(tl.program_id(0), blocks, tl.num_programs(0), num_stages=STAGES):
        acc = tl.zeros([ROWS], dtype=tl.float32)
        for c in tl.static_range(K // BOX):
            acc += tl.sum(desc.load([b * ROWS, c * BOX]), 1)
        r = b * ROWS + tl.arange(0, ROWS)
        tl.store(out_ptr + r, acc, mask=r < n_rows)


def ms_us(f):
    return " ".join(f"{bench_ms(f, rep=200) * 1e3:6.2f}" for _ in range(3))


m, k = 4096, 1024
xs = [torch.randn(m, k, device="cuda") for _ in range(2)]
x = xs[0]
out = torch.empty(m, device="cuda")
ref = x.sum(-1)
sms = torch.cuda.get_device_properties(0).multi_processor_count
print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
print(f"torch x.sum(-1)            {ms_us(lambda: x.sum(-1))} us")
print(f"op sum(x, [-1])            {ms_us(lambda: torch.ops.tritoncub.sum(x, [-1]))} us")
for rows, box in ((1, 256), (2, 256), (4, 256), (8, 256), (8, 128), (16, 64), (32, 64)):
    desc = TensorDescriptor.from_tensor(x, [rows, box])
    for w in (1, 2, 4):
        f = lambda: _rows_tma_kernel[(triton.cdiv(m, rows),)](desc, out, m, K=k, ROWS=rows, BOX=box, num_warps=w)
        try:
            f()
            assert torch.allclose(out, ref, rtol=1e-4, atol=1e-3)
            print(f"tma rows={rows:<3} box={box:<4} warps={w}  {ms_us(f)} us", flush=True)
        except Exception as e:   # (a probe: report what does not compile or run, go on)
            print(f"tma rows={rows:<3} box={box:<4} warps={w}  failed: {type(e).__name__}: {str(e)[:120]}")
for rows, box in ((4, 256), (8, 256), (16, 128)):
    desc = TensorDescriptor.from_tensor(x, [rows, box])
    for per_sm, stages, w in ((1, 3, 4), (2, 3, 4), (1, 4, 8), (2, 2, 4), (4, 2, 4)):
        f = lambda: _rows_tma_persistent_kernel[(sms * per_sm,)](desc, out, m, K=k, ROWS=rows, BOX=box,
                                                                 STAGES=stages, num_warps=w)
        try:
            f()
            assert torch.allclose(out, ref, rtol=1e-4, atol=1e-3)
            print(f"tma persistent {per_sm}/SM rows={rows} box={box} stages={stages} warps={w}  {ms_us(f)} us",
                  flush=True)
        except Exception as e:
            print(f"tma persistent {per_sm}/SM rows={rows} box={box} stages={stages} warps={w}  failed: "
                  f"{type(e).__name__}: {str(e)[:120]}")
