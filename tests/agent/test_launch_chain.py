"""Launch chains (tritoncub.agent.launch_chain): where chaining is on, what a chained launch passes,
and that a chained kernel sees everything the kernel before it wrote (a second kernel launched early
that read too soon would see the poison, -1)."""
import pytest
import torch
import triton
import triton.language as tl

import tritoncub._utils as U
from helpers import DEVICE
from tritoncub._utils import interpreter_active
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
    monkeypatch.setattr(launch_chain, "EARLY", early)
    dev = torch.device(DEVICE)
    x = torch.full((n,), -1, dtype=torch.int64, device=dev)
    out = torch.full((n,), -1, dtype=torch.int64, device=dev)
    block = 1024
    grid = (triton.cdiv(n, block),)
    launch(_write_kernel, grid, x, n, ROUNDS=4 if DEVICE == "cpu" else 4096, BLOCK=block, **chain_kwargs(dev, False))
    launch(_read_kernel, grid, x, out, n, BLOCK=block, **chain_kwargs(dev, True))
    ref = torch.arange(n, dtype=torch.int64)
    for _ in range(4 if DEVICE == "cpu" else 4096):
        ref = (ref * 1103515245 + 12345) & 0x7FFFFFFF
    assert torch.equal(out.cpu(), 2 * ref)


def test_off_under_the_interpreter_and_when_disabled(monkeypatch):
    if interpreter_active():
        assert chain_kwargs(torch.device("cpu"), True) == {"PDL": 0}
    monkeypatch.setattr(launch_chain, "ENABLED", False)
    assert chain_kwargs(torch.device(DEVICE), True) == {"PDL": 0}
    assert chain_kwargs(torch.device(DEVICE), False) == {"PDL": 0}


@pytest.mark.parametrize("target,expected", [("cuda:90", True), ("cuda:90a", True), ("cuda:100", True),
                                             ("cuda:89", False), ("cuda:80", False), ("hip:gfx942", False)])
def test_levels_by_compile_target(target, expected, monkeypatch):
    # (what the compile-check mode builds: chains only for NVIDIA targets of sm_90 and newer)
    monkeypatch.setattr(U, "_INTERPRETER", False)
    monkeypatch.setattr(U, "compile_only", lambda: True)
    monkeypatch.setenv("TRITONCUB_COMPILE_TARGET", target)
    cpu = torch.device("cpu")
    assert chain_ok(cpu) is expected
    off = {"PDL": 0}
    assert chain_kwargs(cpu, True) == ({"PDL": 1, "launch_pdl": True} if expected else off)
    assert chain_kwargs(cpu, False) == off   # (a first kernel that does not trigger: nothing)
    monkeypatch.setattr(launch_chain, "EARLY", True)
    assert chain_kwargs(cpu, True) == ({"PDL": 2, "launch_pdl": True} if expected else off)
    assert chain_kwargs(cpu, False) == ({"PDL": 2} if expected else off)


def _kernel_name(kernel) -> str:
    fn = getattr(kernel, "fn", kernel)
    return getattr(fn, "__name__", str(fn))


@pytest.fixture
def launches(monkeypatch):
    """Every kernel the library launches (or binds) in the test: ``(name, PDL, launch_pdl)``; the
    remembered launch sequences are emptied first, so every launch goes through launch/bind."""
    import tritoncub._launch as L
    from tritoncub.device import radix_sort as RS
    from tritoncub.device import reduce_by_key as RBK
    from tritoncub.device import select as SEL
    seen, depth = [], [0]

    def spy(orig):
        def call(kernel, grid, *args, **kwargs):
            if depth[0] == 0:   # (bind launches through launch: only the outer call is recorded)
                seen.append((_kernel_name(kernel), kwargs.get("PDL", 0), kwargs.get("launch_pdl", False)))
            depth[0] += 1
            try:
                return orig(kernel, grid, *args, **kwargs)
            finally:
                depth[0] -= 1
        return call

    launch_spy, bind_spy = spy(L.launch), spy(L.bind)
    for mod in (L, RS, RBK, SEL):
        if hasattr(mod, "launch"):
            monkeypatch.setattr(mod, "launch", launch_spy)
        if hasattr(mod, "bind"):
            monkeypatch.setattr(mod, "bind", bind_spy)
    monkeypatch.setattr(SEL, "_BITS_PLANS", {})
    monkeypatch.setattr(RS, "_QUEUED_PLANS", {})
    return seen


def _expected(chained: bool, level: int, follows: bool):
    return (level, follows) if chained else (0, False)


def test_library_chains_are_wired(launches):
    # the compaction (count -> scan -> scatter), reduce-by-key (its pass 2 and fix-ups) and the radix
    # sort (histogram -> offsets -> passes) chain in the late form: every kernel after the first waits
    # and is launched with the attribute; off a chain-capable GPU, every level is 0 and no launch
    # carries the attribute
    from tritoncub.device import radix_sort as RS
    from tritoncub.device import reduce_by_key as RBK
    from tritoncub.device import run_length_encode as RLE
    dev = torch.device(DEVICE)
    chained = chain_ok(dev)
    g = torch.Generator(device=dev).manual_seed(0)
    n = 3000 if DEVICE == "cpu" else 40000   # (several tiles: reduce-by-key runs its fix-ups)
    runs = torch.sort(torch.randint(0, 40, (n,), device=dev, generator=g, dtype=torch.int32)).values
    RLE.encode(runs)
    got = [(name, pdl, lp) for name, pdl, lp in launches]
    want = [("_count_bits_kernel", 0, False), ("_scan_counts_kernel",) + _expected(chained, 1, True),
            ("_scatter_bits_kernel",) + _expected(chained, 1, True)]
    assert [w for w in got if w[0] in ("_count_bits_kernel", "_scan_counts_kernel", "_scatter_bits_kernel")] == want
    launches.clear()
    vals = torch.randn(n, device=dev, generator=g)
    RBK.reduce_by_key(runs, vals, "sum")
    rbk = {name: (pdl, lp) for name, pdl, lp in launches if name.startswith("_rbk")}
    assert "_rbk_fixup_kernel" in rbk
    assert all(v == _expected(chained, 1, True) for v in rbk.values()), rbk
    if chained:   # (the fast path, a GPU of sm_80+: Gluon kernels)
        launches.clear()
        keys = torch.randint(0, 1 << 30, (1 << 15,), device=dev, generator=g, dtype=torch.int32)
        RS.sort_keys(keys)
        sort = [(name, pdl, lp) for name, pdl, lp in launches]
        assert sort[0] == ("_histogram_gluon_kernel", 0, False)
        assert sort[1] == ("_digit_offsets_kernel", 1, True)
        assert len(sort) >= 3 and sort[2:] == [("_onesweep_gluon_kernel", 1, True)] * (len(sort) - 2)


@pytest.mark.skipif(DEVICE != "cuda", reason="compiled kernels")
def test_chained_kernels_wait_before_any_memory_access(launches):
    # in the PTX of every compiled kernel that waits, griddepcontrol.wait precedes the first global
    # load, store or atomic
    import tritoncub._launch as L
    from tritoncub.device import radix_sort as RS
    from tritoncub.device import reduce_by_key as RBK
    from tritoncub.device import run_length_encode as RLE
    dev = torch.device(DEVICE)
    if not chain_ok(dev):
        pytest.skip("no launch chains on this GPU")
    g = torch.Generator(device=dev).manual_seed(1)
    runs = torch.sort(torch.randint(0, 40, (3000,), device=dev, generator=g, dtype=torch.int32)).values
    RLE.encode(runs)
    RBK.reduce_by_key(runs, torch.randn(3000, device=dev, generator=g), "sum")
    RS.sort_keys(torch.randint(0, 1 << 30, (1 << 15,), device=dev, generator=g, dtype=torch.int32))
    waiting = {name for name, pdl, _ in launches if pdl >= 1}
    assert waiting
    checked = set()
    for kernel, table in L._TABLES.items():
        if _kernel_name(kernel) not in waiting:
            continue
        for entry in table.values():
            ptx = entry.kernel.asm["ptx"]
            if "griddepcontrol.wait" not in ptx:
                continue
            wait = ptx.index("griddepcontrol.wait")
            first = min((i for i in (ptx.find(op) for op in ("ld.global", "st.global", "atom.", "red.global"))
                         if i >= 0), default=len(ptx))
            assert wait < first, _kernel_name(kernel)
            checked.add(_kernel_name(kernel))
    assert checked == waiting


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
