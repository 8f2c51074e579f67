"""PTX evidence for the load/store algorithms and cache modifiers: compile small copy kernels for
sm_90 (no GPU needed: Triton compiles to PTX on the CPU) and count the global memory instructions.

    python bench/ptx_check.py            # table + verdicts
    python bench/ptx_check.py --json     # machine-readable (used by the tests)

Pointers are compiled as 16-byte aligned (what Triton's JIT specialises for torch allocations) and
the item count ``n`` as *not* divisible by 16 (an arbitrary size), unless a row says otherwise:
with ``n % 16 == 0`` Triton proves the masked DIRECT load aligned too and vectorises it, which is why
VECTORIZE matters for arbitrary sizes. A VECTORIZE kernel holds both paths: the vector one for full
aligned tiles and the masked one-item-per-access one for the ragged last tile.
"""
from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "0"  # compile, even when run from an interpreter session

sys_path_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
import sys  # noqa: E402

if sys_path_root not in sys.path:  # run as a script from a checkout without installing
    sys.path.insert(0, sys_path_root)

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

from tritoncub.block.load import block_load  # noqa: E402
from tritoncub.block.store import block_store  # noqa: E402
from tritoncub.warp.load import warp_load  # noqa: E402
from tritoncub.warp.store import warp_store  # noqa: E402

ALGOS = ["direct", "striped", "vectorize", "transpose"]
TL_DTYPES = {"fp32": "*fp32", "fp16": "*fp16", "fp64": "*fp64", "i8": "*i8", "bf16": "*bf16"}


@triton.jit
def _block_copy(x_ptr, y_ptr, n, BT: tl.constexpr, IPT: tl.constexpr, LOAD: tl.constexpr, STORE: tl.constexpr,
                CM: tl.constexpr, EV: tl.constexpr, SCM: tl.constexpr):
    base = tl.program_id(0) * (BT * IPT)
    tile = block_load(x_ptr, base, n, BT, IPT, LOAD, CM, EV)
    block_store(y_ptr, base, n, tile, BT, IPT, STORE, SCM)


@triton.jit
def _warp_copy(x_ptr, y_ptr, n, WARPS: tl.constexpr, LWT: tl.constexpr, IPT: tl.constexpr, LOAD: tl.constexpr,
               STORE: tl.constexpr):
    base = tl.program_id(0) * (WARPS * LWT * IPT)
    tile = warp_load(x_ptr, base, n, WARPS, LWT, IPT, LOAD)
    warp_store(y_ptr, base, n, tile, WARPS, LWT, IPT, STORE)


def compile_ptx(kernel, dtype: str, constexprs: dict, n_div16: bool = False, num_warps: int = 4,
                arch: int = 90) -> str:
    sig = {"x_ptr": TL_DTYPES[dtype], "y_ptr": TL_DTYPES[dtype], "n": "i32"}
    sig.update({k: "constexpr" for k in constexprs})
    attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
    if n_div16:
        attrs[(2,)] = [["tt.divisibility", 16]]
    # strings travel as constexpr objects (as the JIT's binder passes them)
    constexprs = {k: tl.constexpr(v) if isinstance(v, str) else v for k, v in constexprs.items()}
    src = triton.compiler.ASTSource(fn=kernel, signature=sig, constexprs=constexprs, attrs=attrs)
    compiled = triton.compile(src, target=GPUTarget("cuda", arch, 32), options={"num_warps": num_warps})
    return compiled.asm["ptx"]


def global_ops(ptx: str) -> dict[str, int]:
    """Counts of each global load/store instruction form (``ld.global.v4.b32``, ``st.global.b32`` ...)."""
    return dict(collections.Counter(re.findall(r"\b((?:ld|st)\.global[\w.:]*)", ptx)))


def widest(ops: dict[str, int], kind: str) -> int:
    """Widest access in bytes among the ``kind`` ("ld"/"st") instructions."""
    best = 0
    for op in ops:
        if not op.startswith(kind):
            continue
        vec = re.search(r"\.v(\d)", op)
        bits = re.search(r"\.[bfsu](\d+)$", op)
        w = (int(vec.group(1)) if vec else 1) * (int(bits.group(1)) // 8 if bits else 0)
        best = max(best, w)
    return best


def rows(layers=("block", "warp")) -> list[dict]:
    out = []

    def add(layer, name, ptx, expect=None):
        ops = global_ops(ptx)
        out.append({"layer": layer, "case": name, "ops": ops, "ld_bytes": widest(ops, "ld"),
                    "st_bytes": widest(ops, "st"), "expect": expect})

    base = {"BT": 128, "CM": "", "EV": "", "SCM": ""}
    if "block" not in layers:
        dtypes_block = ()
    else:
        dtypes_block = (("fp32", 4, 16), ("fp64", 4, 16), ("fp16", 4, 8), ("fp16", 8, 16), ("i8", 4, 4),
                        ("i8", 16, 16))
    # (dtype, items per thread, widest vector expected from VECTORIZE: min(16, IPT * itemsize) bytes)
    for dtype, ipt, vec_bytes in dtypes_block:
        for a, algo in enumerate(ALGOS):
            if (dtype != "fp32" or ipt != 4) and algo not in ("direct", "vectorize"):
                continue
            ce = {**base, "IPT": ipt, "LOAD": a, "STORE": a}
            expect = vec_bytes if algo == "vectorize" else ("scalar" if algo == "direct" else None)
            add("block", f"{algo} {dtype} BT=128 IPT={ipt} n%16!=0", compile_ptx(_block_copy, dtype, ce), expect)
    if "block" in layers:
        add("block", "direct fp32 BT=128 IPT=4 n%16==0",
            compile_ptx(_block_copy, "fp32", {**base, "IPT": 4, "LOAD": 0, "STORE": 0}, n_div16=True))
    modifiers = ((".ca", "", ""), (".cg", "", ".cg"), (".cv", "", ".wt"), ("", "evict_first", ".cs"),
                 ("", "evict_last", ""))
    for cm, ev, scm in modifiers if "block" in layers else ():
        ce = {**base, "IPT": 4, "LOAD": 2, "STORE": 2, "CM": cm, "EV": ev, "SCM": scm}
        add("block", f"vectorize fp32 load{cm or ''}{'/' + ev if ev else ''} store{scm or ''}",
            compile_ptx(_block_copy, "fp32", ce), "modifier")
    # a program of WARPS logical warps runs on WARPS * LANES threads
    for lwt, warps, num_warps in ((32, 4, 4), (8, 4, 1), (24, 4, 4)) if "warp" in layers else ():
        for a, algo in enumerate(ALGOS):
            ce = {"WARPS": warps, "LWT": lwt, "IPT": 4, "LOAD": a, "STORE": a}
            expect = 16 if algo == "vectorize" else ("scalar" if algo == "direct" else None)
            add("warp", f"{algo} fp32 WARPS={warps} LWT={lwt} IPT=4 n%16!=0 num_warps={num_warps}",
                compile_ptx(_warp_copy, "fp32", ce, num_warps=num_warps), expect)
    return out


def verdicts(table: list[dict]) -> list[str]:
    """The claims the docs make, checked against the PTX; returns failures (empty = all hold)."""
    bad = []
    for r in table:
        e = r["expect"]
        if isinstance(e, int) and r["ld_bytes"] < e:
            bad.append(f"{r['layer']} {r['case']}: widest load {r['ld_bytes']} B, expected {e} B")
        if isinstance(e, int) and r["st_bytes"] < e:
            bad.append(f"{r['layer']} {r['case']}: widest store {r['st_bytes']} B, expected {e} B")
        if e == "scalar" and any(".v" in op for op in r["ops"]):
            bad.append(f"{r['layer']} {r['case']}: expected one item per access, got {sorted(r['ops'])}")
        if e == "modifier":
            case, ops = r["case"], " ".join(r["ops"])
            # (".cv" is not checked: Triton 3.6 emits a plain ld.global for it, see the block.load docs)
            for token, ptx in ((".ca", ".ca"), (".cg", ".cg"), ("evict_first", "evict_first"),
                               ("evict_last", "evict_last"), ("store.cs", "st.global.cs"), ("store.wt", "st.global.wt"),
                               ("store.cg", "st.global.cg")):
                if token in case and ptx not in ops:
                    bad.append(f"{r['layer']} {case}: {ptx} not in {ops}")
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--layer", choices=["block", "warp"], action="append",
                    help="only these layers (default both)")
    args = ap.parse_args(argv)
    table = rows(tuple(args.layer or ("block", "warp")))
    bad = verdicts(table)
    if args.json:
        print(json.dumps({"rows": table, "failures": bad, "triton": triton.__version__}))
        return 0
    print(f"triton {triton.__version__}, target sm_90 (PTX compiled on this machine, no GPU needed); "
          "num_warps=4 unless stated; pointers 16-byte aligned")
    print(f"{'layer':6} {'case':62} {'ld B':>4} {'st B':>4}  global memory instructions (count)")
    for r in table:
        ops = ", ".join(f"{k} x{v}" for k, v in sorted(r["ops"].items()))
        print(f"{r['layer']:6} {r['case']:62} {r['ld_bytes']:>4} {r['st_bytes']:>4}  {ops}")
    print("verdict:", "all documented claims hold" if not bad else "FAILED:\n  " + "\n  ".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
