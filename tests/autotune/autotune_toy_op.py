"""A tiny op used to test the autotune tool: ``scale(x) = 2 * x`` over tiles of BLOCK items.

Its space holds a deliberately wrong setting (``BUG=1`` drops the first item of every tile), so a
test can check that verification rejects a config that is fast but wrong. It asks the policy chain
for its config on every call, as every tritoncub device op does.
"""
import torch
import triton
import triton.language as tl

from autotune.spec import Problem, TuneSpec
from tritoncub import policy

OP = "autotune_toy_scale"


@triton.jit
def _scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, BUG: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if BUG:
        mask = mask & (tl.arange(0, BLOCK) > 0)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * 2, mask=offs < n)


policy.register(OP, space={"BLOCK": [16, 32, 64], "BUG": [0, 1], "num_warps": [1, 2], "num_stages": [1]},
                fallback={"BLOCK": 16, "BUG": 0, "num_warps": 1, "num_stages": 1},
                valid=lambda c: not (c["BLOCK"] == 16 and c["num_warps"] == 2),
                buckets=("small", "big"))


def scale(x: torch.Tensor) -> torch.Tensor:
    bucket = "small" if x.numel() <= 64 else "big"
    pol = policy.select(OP, x.device, bucket)
    y = torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), pol["BLOCK"]),)
    _scale_kernel[grid](x, y, x.numel(), **pol.launch_kwargs())
    return y


def _make(n):
    def make(device, seed):
        g = torch.Generator().manual_seed(seed)
        return torch.randn(n, generator=g).to(device)
    return make


AUTOTUNE = [TuneSpec(
    op=OP,
    problems={"small": [Problem("float32 n=50", _make(50), bytes_moved=400)],
              "big": [Problem("float32 n=100", _make(100), bytes_moved=800),
                      Problem("float32 n=130", _make(130), bytes_moved=1040)]},
    call=scale,
    reference=lambda x: x * 2,
)]


def fake_time(cfg: dict) -> float:
    """Made-up time of a config: bigger tiles are faster, BUG=1 fastest of all (so it must be caught)."""
    t = 1.0 / cfg["BLOCK"] * (1.0 + 0.25 * (cfg["num_warps"] - 1))
    return t * (0.1 if cfg["BUG"] else 1.0)
