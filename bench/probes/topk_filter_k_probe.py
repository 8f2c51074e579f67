"""The running k-best's filter round (``_topk_filter_kernel``) at the k of LLM sampling (k = 50, so
``K2 = 64``) on batches of vocabulary logits, with its shape varied: items per warp (so warps per
program), register cap, ``FILTER_CHUNK``, groups and candidate slots per ``K2``, the key threshold.
Per variant the filter kernel's GPU time and the whole op's (torch.profiler), torch.topk in the same
run; every result is checked against torch.topk (values; indices point at them) first.

    PYTHONPATH=. python bench/probes/topk_filter_k_probe.py          # every variant, five cases
    PYTHONPATH=. python bench/probes/topk_filter_k_probe.py chunk    # FILTER_CHUNK 4096 and the register cap, more cases
    PYTHONPATH=. python bench/probes/topk_filter_k_probe.py around   # around FILTER_CHUNK 4096 with a cap of 80
    PYTHONPATH=. python bench/probes/topk_filter_k_probe.py kmax     # k of 65-256: running k-best or radix select
    PYTHONPATH=. python bench/probes/topk_filter_k_probe.py shipped  # the shipped policy alone (indices also
                                                                     # checked against a stable sort's)
"""
import sys

import torch

sys.path.insert(0, "bench/probes")
import tritoncub  # noqa: F401,E402
from tritoncub import policy  # noqa: E402
from tritoncub.device import topk as T  # noqa: E402
from _timing import gpu_us  # noqa: E402

ops = torch.ops.tritoncub
torch.manual_seed(0)
shipped = policy.select("topk", torch.device("cuda"), "long")
base = {**shipped.values, "num_warps": shipped.num_warps, "num_stages": shipped.num_stages}
CONSTS = ("_FILTER_GROUPS_PER_K", "_FILTER_CAP_PER_K", "_FILTER_ITEMS_PER_WARP", "_FILTER_MAX_WARPS",
          "_FILTER_KEY_THRESHOLD", "_FILTER_MIN_GROUP_ITEMS")
shipped_consts = {c: getattr(T, c) for c in CONSTS}
variants = [("shipped", {}, {})]
variants += [(f"items/warp {w}", {}, {"_FILTER_ITEMS_PER_WARP": w}) for w in (1024, 2048)]
variants += [(f"maxnreg {r}", {"FILTER_MAXNREG": r}, {}) for r in (0, 80, 96)]
variants += [(f"chunk {c}", {"FILTER_CHUNK": c}, {}) for c in (4096, 16384)]
variants += [(f"groups/K2 {g} cap/K2 {c}", {}, {"_FILTER_GROUPS_PER_K": g, "_FILTER_CAP_PER_K": c})
             for g, c in ((2, 2), (2, 4), (8, 2), (1, 8))]
variants += [("packed-word threshold", {}, {"_FILTER_KEY_THRESHOLD": False})]
if sys.argv[1:] == ["chunk"]:
    variants = [("shipped", {}, {}), ("chunk 4096", {"FILTER_CHUNK": 4096}, {}), ("maxnreg 0", {"FILTER_MAXNREG": 0}, {}),
                ("chunk 4096 maxnreg 0", {"FILTER_CHUNK": 4096, "FILTER_MAXNREG": 0}, {}),
                ("chunk 4096 maxnreg 80", {"FILTER_CHUNK": 4096, "FILTER_MAXNREG": 80}, {})]
    cases = [((16, 1 << 20), torch.float32, 8), ((16, 1 << 20), torch.float32, 64), ((16, 1 << 20), torch.float32, 16),
             ((64, 128256), torch.float32, 50), ((64, 128256), torch.bfloat16, 50), ((128, 151936), torch.bfloat16, 50),
             ((8, 128256), torch.bfloat16, 50), ((32, 32000), torch.float32, 50), ((1, 128256), torch.float32, 50),
             ((1, 1 << 22), torch.float32, 32)]
elif sys.argv[1:] == ["around"]:
    variants = [("chunk 4096 maxnreg 80", {"FILTER_CHUNK": 4096, "FILTER_MAXNREG": 80}, {})]
    variants += [(f"chunk 4096 maxnreg {r}", {"FILTER_CHUNK": 4096, "FILTER_MAXNREG": r}, {}) for r in (72, 96)]
    variants += [(f"chunk 2048 maxnreg {r}", {"FILTER_CHUNK": 2048, "FILTER_MAXNREG": r}, {}) for r in (64, 80)]
    cases = [((16, 1 << 20), torch.float32, 8), ((16, 1 << 20), torch.float32, 64),
             ((64, 128256), torch.bfloat16, 50), ((128, 151936), torch.float32, 50), ((8, 128256), torch.float32, 50),
             ((1, 1 << 22), torch.float32, 32)]
elif sys.argv[1:] == ["kmax"]:
    # (run first with CAND_K_MAX 64 shipped, which sent next_pow2(k) > 64 to the radix select, and filter
    # chunks not raised: _FILTER_MIN_GROUP_ITEMS 2 here reproduces that; "radix select" forces it now)
    old = {"_FILTER_MIN_GROUP_ITEMS": 2}
    variants = [("radix select", {"CAND_K_MAX": 64}, old)]
    variants += [(f"CAND_K_MAX {m}", {"CAND_K_MAX": m}, old) for m in (128, 256)]
    variants += [(f"CAND_K_MAX {m} FILTER_CHUNK 4096", {"CAND_K_MAX": m, "FILTER_CHUNK": 4096}, old) for m in (128, 256)]
    variants += [("CAND_K_MAX 256, 8 items per group", {"CAND_K_MAX": 256}, {})]
    cases = [((64, 128256), torch.float32, 100), ((64, 128256), torch.bfloat16, 100), ((64, 128256), torch.float32, 256),
             ((8, 128256), torch.float32, 100), ((16, 1 << 20), torch.float32, 100), ((16, 1 << 20), torch.float32, 256),
             ((1, 1 << 22), torch.float32, 200), ((256, 32000), torch.float32, 128)]
elif sys.argv[1:] == ["shipped"]:
    variants = [("shipped", {}, {})]
    cases = [((64, 128256), torch.float32, 100), ((64, 128256), torch.bfloat16, 100), ((8, 128256), torch.float32, 100),
             ((16, 1 << 20), torch.float32, 100), ((256, 32000), torch.float32, 128), ((64, 128256), torch.float32, 256),
             ((16, 1 << 20), torch.float32, 8), ((64, 128256), torch.bfloat16, 50)]
else:
    cases = [((64, 128256), torch.float32, 50), ((64, 128256), torch.bfloat16, 50), ((128, 151936), torch.float32, 50),
             ((64, 128256), torch.float32, 8), ((8, 128256), torch.float32, 50)]
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
for shape, dt, k in cases:
    x = (torch.randn(*shape, device="cuda") * 3).to(dt)
    ref = torch.topk(x, k).values
    line = [f"{shape[0]}x{shape[1]} {str(dt)[6:]} k={k}: torch {gpu_us(lambda: torch.topk(x, k)):.1f}"]
    for name, cfg, consts in variants:
        for c, v in {**shipped_consts, **consts}.items():
            setattr(T, c, v)
        try:
            with policy.override("topk", {**base, **cfg}, bucket="long"):
                f = lambda: ops.topk(x, k, -1, True, True)
                v, i = f()
                assert torch.equal(v, ref) and torch.equal(torch.gather(x, -1, i), v), (shape, k, name)
                if sys.argv[1:] == ["shipped"] and k <= policy.select("topk", x.device, "long")["CAND_K_MAX"]:
                    # (the running k-best: lowest indices first among equal values)
                    si = torch.sort(x, dim=-1, descending=True, stable=True)[1][:, :k]
                    assert torch.equal(i, si), (shape, k, name, "indices")
                line.append(f"{name} {gpu_us(f, match='filter'):.1f}/{gpu_us(f):.1f}")
        except Exception as e:   # (a variant that does not build or run is reported, not fatal)
            line.append(f"{name} failed: {type(e).__name__}: {str(e)[:80]}")
    for c, v in shipped_consts.items():
        setattr(T, c, v)
    print(" | ".join(line), flush=True)
