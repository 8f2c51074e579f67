"""Inputs shared by the select probes (run as scripts: this directory is on ``sys.path``)."""
import torch


def select_inputs(n: int, densities, copies: int = 1, seed: int = 0, device: str = "cuda"):
    """``(generator, xs, masks, runs)``: ``copies`` fp32 normal tensors of ``n`` items, as many bool masks
    per density (``masks[d]``), and as many sorted int32 tensors of 2^20 distinct values (about 2^20
    runs), drawn in that order from one generator seeded ``seed`` (returned, for further draws)."""
    g = torch.Generator(device=device).manual_seed(seed)
    xs = [torch.randn(n, device=device, generator=g) for _ in range(copies)]
    masks = {d: [torch.rand(n, device=device, generator=g) < d for _ in range(copies)] for d in densities}
    runs = [torch.sort(torch.randint(0, 1 << 20, (n,), device=device, generator=g, dtype=torch.int32)).values
            for _ in range(copies)]
    return g, xs, masks, runs
