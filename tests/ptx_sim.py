"""A small simulator of the warp-synchronous PTX that the Gluon kernels' inline assembly builders emit,
so the tests can check that PTX on the CPU (the kernels themselves run only on a GPU)."""


def run_warp_ptx(ptx: str, inputs: list[list[int]], outputs: int, smem: dict,
                 lane_order: list[int] | None = None) -> list[list[int]]:
    """Run ``ptx`` (one inline-assembly block, element-wise over a warp) on 32 simulated lanes in
    lockstep: the subset of PTX the builders emit (``mov``/``and``/``or``/``shl``/``add``/``sub`` on 32-bit words, ``setp``, ``vote.ballot``,
    ``mad.lo``, ``lop3``, ``popc``, ``shr``, ``neg``, shared loads/stores/``red.or``/``red.add``/``atom.add``,
    guards ``@p``/``@!p``). Operands
    ``$0 .. $(outputs-1)`` are outputs (junk until written), ``inputs[k][lane]`` is ``$(outputs+k)``;
    every other register must be declared by a ``.reg`` line before use. ``smem`` maps byte addresses
    (``global_smem`` is 0) to words. Warp barriers need no model: every instruction completes in all
    lanes before the next one starts (their presence is checked by ``test_mixed_rank_asm_slots``).
    ``lane_order``: the order in which the lanes of a warp take a shared-memory atomic (``atom``,
    ``red``; the hardware's order is unspecified: tests try several); lane order by default."""
    M = 0xFFFFFFFF
    regs = [{f"${outputs + k}": inputs[k][ln] & M for k in range(len(inputs))} for ln in range(32)]
    declared = set()
    special = {"%lanemask_lt": lambda ln: (1 << ln) - 1, "%lanemask_le": lambda ln: (2 << ln) - 1,
               "%lanemask_gt": lambda ln: M & ~((2 << ln) - 1), "%lanemask_ge": lambda ln: M & ~((1 << ln) - 1),
               "%lanemask_eq": lambda ln: 1 << ln, "global_smem": lambda ln: 0}

    def dest(tok):
        assert tok.startswith("$") and int(tok[1:]) < outputs or tok in declared, f"undeclared {tok}"
        return tok

    def val(r, ln, tok):
        if tok in special:
            return special[tok](ln)
        if tok.startswith("$") or tok in declared:
            assert tok in r, f"{tok} read before it is written"
            return r[tok]
        return int(tok, 0) & M

    for line in ptx.splitlines():
        line = line.strip().rstrip(";")
        if line.startswith(".reg"):
            for name in line.split(None, 2)[2].split(","):
                name = name.strip()
                if "<" in name:     # v<8>: v0 .. v7
                    stem, count = name[:-1].split("<")
                    declared.update(f"{stem}{i}" for i in range(int(count)))
                else:
                    declared.add(name)
            continue
        if not line or line in "{}" or line.startswith("bar.warp.sync"):
            continue
        guard = None
        if line.startswith("@"):
            guard, line = line.split(None, 1)
        op, args = line.split(None, 1)
        a = [t.strip() for t in args.replace("[", "").replace("]", "").split(",")]
        live = [guard is None or bool(regs[ln][guard.lstrip("@!")]) != guard.startswith("@!") for ln in range(32)]
        if op.startswith("vote.sync.ballot"):
            assert guard is None, "simulator: a guarded vote is not modelled"
            ballot = sum(1 << ln for ln in range(32) if regs[ln][a[1]])
        kind = op.split(".")[0]
        for ln in (lane_order if lane_order is not None and kind in ("atom", "red") else range(32)):
            if not live[ln]:
                continue
            r = regs[ln]
            if kind == "st":    # (st.shared.v2: two words at consecutive addresses; [reg+imm] addresses)
                addr = sum(val(r, ln, part) for part in a[0].split("+"))
                for j, t in enumerate(a[1:] if ".v2." in op else a[1:2]):
                    smem[addr + 4 * j] = val(r, ln, t.strip("{}"))
                continue
            if kind == "red":
                assert op in ("red.shared.or.b32", "red.shared.add.u32"), op
                addr = val(r, ln, a[0])
                old = smem.get(addr, 0)
                smem[addr] = (old | val(r, ln, a[1])) if ".or." in op else (old + val(r, ln, a[1])) & M
                continue
            if kind == "atom":
                assert op == "atom.shared.add.u32", op
                addr = val(r, ln, a[1])
                r[dest(a[0])] = smem.get(addr, 0)
                smem[addr] = (smem.get(addr, 0) + val(r, ln, a[2])) & M
                continue
            v = [val(r, ln, t) for t in a[1:]] if kind != "vote" else None
            if kind == "mov":
                res = v[0]
            elif kind == "and":
                res = v[0] & v[1]
            elif kind == "or":
                res = v[0] | v[1]
            elif kind == "shl":
                res = (v[0] << v[1]) & M
            elif kind == "shr":
                assert op == "shr.u32", op
                res = v[0] >> v[1]
            elif kind == "neg":
                res = -v[0] & M
            elif kind == "add":
                res = (v[0] + v[1]) & M
            elif kind == "sub":
                res = (v[0] - v[1]) & M
            elif kind == "mad":
                res = (v[0] * v[1] + v[2]) & M
            elif kind == "popc":
                res = bin(v[0]).count("1")
            elif kind == "setp":
                res = {"ne": v[0] != v[1], "eq": v[0] == v[1]}[op.split(".")[1]]
            elif kind == "vote":
                res = ballot
            elif kind == "lop3":
                x, y, z, lut = v
                res = sum(((lut >> ((((x >> b) & 1) << 2) | (((y >> b) & 1) << 1) | ((z >> b) & 1))) & 1) << b
                          for b in range(32))
            elif kind == "ld":
                res = smem.get(v[0], 0)
            else:
                raise AssertionError(f"simulator: no {op}")
            r[dest(a[0])] = res
    return [[regs[ln].get(f"${k}") for ln in range(32)] for k in range(outputs)]
