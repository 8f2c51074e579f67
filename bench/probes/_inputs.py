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


def rbk_inputs(n: int, runs: int = 1 << 20, copies: int = 2, seed: int = 0, device: str = "cuda"):
    """``(pairs, unique_keys, sums)`` for reduce_by_key: ``copies`` (sorted int32 keys drawn from
    ``runs`` values, fp32 normal values) pairs, and torch's unique keys and run sums of the first."""
    g = torch.Generator(device=device).manual_seed(seed)
    keys = [torch.sort(torch.randint(0, runs, (n,), device=device, generator=g, dtype=torch.int32)).values
            for _ in range(copies)]
    vals = [torch.randn(n, device=device, generator=g) for _ in range(copies)]
    uk, cnt = torch.unique_consecutive(keys[0], return_counts=True)
    return list(zip(keys, vals)), uk, torch.segment_reduce(vals[0], "sum", lengths=cnt)


def rbk_matches(out, unique_keys, sums) -> bool:
    """Whether reduce_by_key's ``(keys, sums, num_runs)`` match torch's (sums to fp32 tolerance)."""
    k, v, nr = out
    r = unique_keys.numel()
    return int(nr) == r and torch.equal(k[:r], unique_keys) and torch.allclose(v[:r], sums, rtol=1e-4, atol=1e-3)
