"""torch.unique of wide-range int32 keys (2^26 items, 2^20 distinct values drawn from the whole int32
range): the hash path against the sort path and torch.unique in the same run, and the hash table's
size cap; with and without inverse and counts. Results checked against torch first.

    PYTHONPATH=. python bench/probes/unique_hash_probe.py
"""
import sys

import torch
import triton

sys.path.insert(0, "bench/probes")
from _timing import bench_ms, kernel_breakdown  # noqa: E402
from tritoncub.device import unique as U  # noqa: E402


def main():
    g = torch.Generator(device="cuda").manual_seed(0)
    n = 1 << 26
    for distinct in (1 << 20, 1 << 16):
        pool = torch.randint(-2**31, 2**31 - 1, (distinct,), device="cuda", dtype=torch.int64, generator=g)
        x = pool[torch.randint(0, distinct, (n,), device="cuda", generator=g)].to(torch.int32)
        for ri, rc in ((False, False), (True, True)):
            ref = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
            t_torch = bench_ms(lambda: torch.unique(x, sorted=True, return_inverse=ri, return_counts=rc))
            line = [f"torch {t_torch:.4f}"]
            real_hash = U._hash_path
            variants = [("hash 2^22 t1024w4", 1 << 22, 1024, 4), ("hash 2^22 t128w1", 1 << 22, 128, 1),
                        ("sort", 0, 1024, 4)]
            for name, slots, tile, warps in variants:
                U.HASH_SLOTS_MAX = slots or (1 << 22)
                U._HASH_TILE, U._HASH_WARPS = tile, warps
                U._hash_path = real_hash if slots else (lambda *a, **k: None)
                fn = lambda: torch.ops.tritoncub.unique(x, True, ri, rc)   # noqa: E731
                v, i, c = fn()
                ok = torch.equal(v, ref[0]) and (not ri or torch.equal(i, ref[1])) and (not rc or torch.equal(c, ref[2]))
                t = bench_ms(fn)
                line.append(f"{name} {t:.4f} ({t_torch / t:.2f}x){'' if ok else ' WRONG'}")
                if name == "hash 2^22 t1024w4":
                    ks = sorted(kernel_breakdown(fn), key=lambda r: -r[1])[:5]
                    line.append("[" + ", ".join(f"{k[:22]} {us:.0f}us" for k, us, _ in ks) + "]")
            U._hash_path, U.HASH_SLOTS_MAX, U._HASH_TILE, U._HASH_WARPS = real_hash, 1 << 22, 1024, 4
            print(f"unique 2^26 int32, {distinct} distinct, inverse={ri} counts={rc}: " + " | ".join(line), flush=True)


if __name__ == "__main__":
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
    main()
