"""Launch chains (tritoncub.agent.launch_chain): where chaining is on, what a chained launch passes,
and that a chained kernel sees everything the kernel before it wrote (a second kernel launched early
that read too soon would see the poison, -1)."""
import pytest
import torch
import triton
import triton.language as tl

import tritoncub._utils as U
from helpers import DEVICE
from tritoncub.agent import launch_chain
from tritoncub.agent.launch_chain import chain_kwargs, chain_link, chain_ok
from tritoncub._launch import launch


@triton.jit
def _write_kernel(x_ptr, n, ROUNDS: tl.constexpr, BLOCK: tl.constexpr, PDL: tl.constexpr = 0):
    chain_link(PDL)
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = offs
    for _ in range(ROUNDS):   # (slow on purpose: the next kernel is launched long before this one ends)
        v = (v * 1103515245 + 12345) & 0x7FFFFFFF
    tl.store(x_ptr + offs, v, mask=m)


@triton.jit
def _read_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, PDL: tl.constexpr = 0):
    chain_link(PDL)
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


@pytest.mark.parametrize("early", [True, False])
@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("n", [1, 1000, 4097])
def test_chained_kernel_reads_what_the_first_wrote(n, enabled, early, monkeypatch):
    monkeypatch.setattr(launch_chain, "ENABLED", enabled)
    monkeypatch.setattr(launch_chain, "EARLY_OVERRIDE", early)
    dev = torch.device(DEVICE)
    x = torch.full((n,), -1, dtype=torch.int64, device=dev)
    out = torch.full((n,), -1, dtype=torch.int64, device=dev)
    block = 1024
    grid = (triton.cdiv(n, block),)
    launch(_write_kernel, grid, x, n, ROUNDS=4 if DEVICE == "cpu" else 256, BLOCK=block, **chain_kwargs(dev, False))
    launch(_read_kernel, grid, x, out, n, BLOCK=block, **chain_kwargs(dev, True))
    ref = torch.arange(n, dtype=torch.int64)
    for _ in range(4 if DEVICE == "cpu" else 256):
        ref = (ref * 1103515245 + 12345) & 0x7FFFFFFF
    assert torch.equal(out.cpu(), 2 * ref)


def test_off_on_the_cpu_and_when_disabled(monkeypatch):
    assert chain_kwargs(torch.device("cpu"), True) == {"PDL": False}
    if DEVICE == "cuda":
        monkeypatch.setattr(launch_chain, "ENABLED", False)
        assert chain_kwargs(torch.device("cuda"), True) == {"PDL": False}


@pytest.mark.parametrize("target,expected", [("cuda:90", True), ("cuda:100", True), ("cuda:80", False),
                                             ("hip:gfx942", False)])
def test_compile_check_targets(target, expected, monkeypatch):
    # (what the compile-check mode builds: chains only for NVIDIA targets of sm_90 and newer)
    monkeypatch.setattr(U, "_INTERPRETER", False)
    monkeypatch.setattr(U, "compile_only", lambda: True)
    monkeypatch.setenv("TRITONCUB_COMPILE_TARGET", target)
    assert chain_ok(torch.device("cpu")) is expected
    kw = chain_kwargs(torch.device("cpu"), True)
    assert kw == ({"PDL": 2, "launch_pdl": True} if expected else {"PDL": False})
    assert chain_kwargs(torch.device("cpu"), False) == ({"PDL": 2} if expected else {"PDL": False})
    assert chain_kwargs(torch.device("cpu"), True, early=False) == (
        {"PDL": 1, "launch_pdl": True} if expected else {"PDL": False})
    monkeypatch.setattr(launch_chain, "EARLY_OVERRIDE", False)
    assert chain_kwargs(torch.device("cpu"), False) == ({"PDL": 1} if expected else {"PDL": False})


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a GPU")
def test_on_for_sm90_gpus():
    major = torch.cuda.get_device_capability()[0]
    assert chain_ok(torch.device("cuda")) is (major >= 9 and torch.version.hip is None)


@pytest.mark.skipif(DEVICE != "cuda", reason="CUDA graphs need a GPU")
def test_chain_in_a_cuda_graph():
    # a chained launch captured in a graph keeps its dependency: every replay reads what the first
    # kernel of that replay wrote (the input changes between replays)
    from tritoncub.device import run_length_encode as RLE
    dev = torch.device("cuda")
    n, block = 4097, 1024
    grid = (triton.cdiv(n, block),)
    x = torch.full((n,), -1, dtype=torch.int64, device=dev)
    out = torch.full((n,), -1, dtype=torch.int64, device=dev)
    runs = torch.sort(torch.randint(0, 50, (5000,), device=dev, dtype=torch.int32)).values
    for _ in range(2):   # (compiled and remembered before the capture)
        launch(_write_kernel, grid, x, n, ROUNDS=64, BLOCK=block, **chain_kwargs(dev, False))
        launch(_read_kernel, grid, x, out, n, BLOCK=block, **chain_kwargs(dev, True))
        RLE.encode(runs)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        launch(_write_kernel, grid, x, n, ROUNDS=64, BLOCK=block, **chain_kwargs(dev, False))
        launch(_read_kernel, grid, x, out, n, BLOCK=block, **chain_kwargs(dev, True))
        u, lengths, nr = RLE.encode(runs)
    ref = torch.arange(n, dtype=torch.int64)
    for _ in range(64):
        ref = (ref * 1103515245 + 12345) & 0x7FFFFFFF
    for seed in range(3):
        x.fill_(-1)
        out.fill_(-1)
        runs.copy_(torch.sort(torch.randint(0, 50 + seed, (5000,), device=dev, dtype=torch.int32)).values)
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(out.cpu(), 2 * ref)
        rv, rc = torch.unique_consecutive(runs, return_counts=True)
        k = int(nr)
        assert k == rv.numel() and torch.equal(u[:k], rv) and torch.equal(lengths[:k].long(), rc)
