"""Instruction mix of the kernels one sort launches, compiled for sm_90 on a machine without a GPU
(the test suite's compile-check mode: ``tests/compile_check.py``) and disassembled with the
``nvdisasm`` that ships with Triton. Static counts (one pass of the code, not executions), grouped by
the pipe that usually runs them on sm_90 (approximate: ncu's ``sm__inst_executed_pipe_*`` metrics are
the measurement; this is for comparing two versions of a kernel before spending GPU time. For the
block radix sort of 4096 x 1024 fp32 rows, a straight-line kernel, the static counts matched ncu's
executed instructions per warp on an H200: ALU 964 / 966, FMA 431 / 431, XU 32 / 32)::

    python bench/probes/sass_mix.py rows 4096 1024 [float32] [--maxnreg 64] [--save PREFIX] [--set KEY=VALUE]
    python bench/probes/sass_mix.py sort_keys 1048576 [uint32]

``--maxnreg``: the register cap to compile the radix kernels with (the CPU has no device policy, so
the launcher's fallback applies: no cap); ``--save``: write each kernel's SASS to PREFIX_<kernel>.sass;
``--set``: a ``segmented_sort`` policy value (an int) for ``rows``, over the rows' bucket, e.g.
``--set RADIX_BITS=7``.
"""
from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile

# opcode (before the first dot) -> pipe, for the opcodes these kernels use
PIPES = {
    "alu": ("LOP3", "LOP", "ISETP", "SEL", "SHF", "LEA", "IADD3", "PRMT", "R2P", "P2R", "SGXT", "VOTE", "IABS",
            "IMNMX", "FSEL", "FSETP", "PLOP3", "BMSK", "VIMNMX"),
    "fma": ("IMAD", "FFMA", "FADD", "FMUL", "IDP", "VIADD"),
    "xu": ("POPC", "FLO", "BREV", "MUFU", "I2F", "F2I"),
    "lsu/mem": ("LDS", "STS", "LDG", "STG", "LDSM", "STSM", "SHFL", "ATOMS", "ATOMG", "RED", "LDC", "MATCH"),
}


def main(argv: list[str]) -> None:
    os.environ["TRITONCUB_COMPILE_ONLY"] = "1"
    os.environ.pop("TRITON_INTERPRET", None)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path[:0] = [root, os.path.join(root, "tests")]
    import compile_check
    compile_check.install()
    import torch
    import triton
    from triton.runtime.jit import JITFunction

    maxnreg = int(argv[argv.index("--maxnreg") + 1]) if "--maxnreg" in argv else 0
    save = argv[argv.index("--save") + 1] if "--save" in argv else None
    sets = {a.split("=")[0]: int(a.split("=")[1]) for i, a in enumerate(argv) if i and argv[i - 1] == "--set"}
    args = [a for i, a in enumerate(argv) if not a.startswith("--") and (i == 0 or argv[i - 1] not in
                                                                          ("--maxnreg", "--save", "--set"))]
    caught = []
    run = JITFunction.run

    def recording_run(self, *a, **k):
        if maxnreg and "radix" in self.__name__:
            k["maxnreg"] = maxnreg
        kernel = run(self, *a, **k)
        caught.append((self.__name__, kernel))
        return kernel

    JITFunction.run = recording_run
    from tritoncub.device import radix_sort as rs
    from tritoncub.device.segmented_sort import sort_rows
    what = args[0]
    if what == "rows":
        dtype = getattr(torch, args[3] if len(args) > 3 else "float32")
        call = (lambda: sort_rows(torch.zeros(int(args[1]), int(args[2]), dtype=dtype)))
    else:
        rs._use_fast_path = lambda device: True    # (the Gluon passes, which a CPU device never takes)
        dtype = getattr(torch, args[2] if len(args) > 2 else "uint32")
        call = (lambda: getattr(rs, what)(torch.zeros(int(args[1]), dtype=dtype)))
    from tritoncub import policy
    config = contextlib.nullcontext()
    if sets:
        from tritoncub.device.segmented_sort import MIN_BLOCK, _bucket
        block = max(MIN_BLOCK, 1 << (int(args[2]) - 1).bit_length())
        config = policy.override("segmented_sort", sets, _bucket(block))
    with config:
        try:
            call()
        except Exception as e:     # (outputs are never computed: a later host step may fail; the kernels built)
            print(f"(the call stopped after compiling: {type(e).__name__})")
    tools = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    seen = set()
    for name, kernel in caught:
        if id(kernel) in seen:
            continue
        seen.add(id(kernel))
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(kernel.asm["cubin"])
            f.flush()
            sass = subprocess.run([os.path.join(tools, "nvdisasm"), "-c", f.name], capture_output=True, text=True,
                                  check=True).stdout
            usage = subprocess.run([os.path.join(tools, "cuobjdump"), "-res-usage", f.name], capture_output=True,
                                   text=True).stdout
        regs = re.search(r"REG:(\d+)", usage)
        ops: dict[str, int] = {}
        for line in sass.splitlines():
            m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
            if m:
                ops[m.group(1)] = ops.get(m.group(1), 0) + 1
        total = sum(ops.values())
        by_pipe = {p: sum(ops.get(o, 0) for o in names) for p, names in PIPES.items()}
        by_pipe["other"] = total - sum(by_pipe.values())
        print(f"{name}: {total} instructions, registers {regs.group(1) if regs else '?'}, "
              f"shared {kernel.metadata.shared} B | " + ", ".join(f"{p} {n}" for p, n in by_pipe.items()))
        print("   " + ", ".join(f"{o} {n}" for o, n in sorted(ops.items(), key=lambda t: -t[1])))
        if save:
            with open(f"{save}_{name}.sass", "w") as out:
                out.write(sass)


if __name__ == "__main__":
    main(sys.argv[1:])
