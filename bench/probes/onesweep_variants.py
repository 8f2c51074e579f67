"""Check and time onesweep policy variants on the GPU, each in its own process (a hang or a fault
cannot poison the others), torch.sort and CUB (CuPy) timed in the same run.

python3 bench/probes/onesweep_variants.py '[{"EARLY_COUNTS": 1}, {"EARLY_COUNTS": 1, "_PROBE": 1}]'
Each variant is merged over the shipped policy (the sm_90 file's default bucket: policy.override alone
would merge it over the built-in fallback); "_PROBE" (1: no look-back, 2: no look-back and no
scatter) are timing-only switches with wrong output. Prints one row per variant: ok, ms for 2^28
uint32 keys (keys only), Gkeys/s.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import torch
import triton

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    cfgs = json.loads(sys.argv[1])
    import cupy
    from tritoncub import policy
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__, "cupy",
          cupy.__version__, flush=True)
    shipped = policy.select("radix_sort", torch.device("cuda"), "default").as_dict()
    print("shipped policy:", shipped, flush=True)
    N = 1 << 28
    x = torch.randint(0, 2**32, (N,), device="cuda", dtype=torch.int64).to(torch.uint32)
    cx = cupy.from_dlpack(x)
    t_cub = triton.testing.do_bench(lambda: cupy.sort(cx), warmup=10, rep=100, return_mode="median")
    del cx, x
    torch.cuda.empty_cache()
    print(f"CUB (cupy.sort) 2^28 uint32: {t_cub:.3f} ms = {N / t_cub / 1e6:.1f} Gkeys/s", flush=True)
    rows = []
    for cfg in cfgs:
        name = " ".join(f"{k}={v}" for k, v in cfg.items())
        full = {**shipped, **cfg}
        try:
            r = subprocess.run([sys.executable, os.path.join(HERE, "onesweep_probe.py"), "--one-variant",
                                json.dumps(full)], capture_output=True, text=True, timeout=90)
            line = [l for l in r.stdout.splitlines() if l.startswith("VARIANT ")]
            ok, t = (line[0].split()[1] == "True", float(line[0].split()[2])) if line else (False, float("nan"))
            if not line:
                print("variant failed:", name, (r.stdout + r.stderr)[-800:], flush=True)
        except subprocess.TimeoutExpired:
            ok, t = False, float("nan")
            print("variant timed out:", name, flush=True)
        rows.append((name, ok, t))
        print(f"{name:<70} ok={ok!s:5} {t:8.3f} ms {N / t / 1e6:7.1f} Gkeys/s  (CUB {t_cub:.3f})", flush=True)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "onesweep_variants.json"), "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "triton": triton.__version__, "cub_ms": t_cub, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
