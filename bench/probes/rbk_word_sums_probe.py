"""reduce_by_key pass 2: sparse tiles summing their runs word by word (``WORD_SUMS``) against the
item-wide segmented scan, over a few tiles and warps, at 2^26 int32 keys in 2^20 sorted runs with
fp32 values: correctness against torch, do_bench medians and the kernels' GPU time.

    PYTHONPATH=. python bench/probes/rbk_word_sums_probe.py
"""
import contextlib

import torch

import tritoncub.device.reduce_by_key as R
from bench.harness import rotating
from tritoncub import policy
from _inputs import rbk_inputs, rbk_matches
from _timing import timing_line

n = 1 << 26
kv, uk, ref = rbk_inputs(n)
keys, vals = [p[0] for p in kv], [p[1] for p in kv]
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
CONFIGS = [(False, None), (True, None)] + [
    (True, {"TILE": t, "num_warps": w, "COUNT_TILES": c})
    for t, w, c in ((1024, 4, 4), (512, 2, 4), (512, 2, 8), (512, 1, 8), (256, 1, 16), (256, 1, 8), (1024, 2, 4),
                    (1024, 1, 4), (2048, 2, 4), (2048, 4, 4))]
for word_sums, cfg in CONFIGS:
    R.WORD_SUMS = word_sums
    # (None: the tuned policy; a dict: merged over the fallback, COUNT_TILES included)
    with policy.override("reduce_by_key", cfg) if cfg else contextlib.nullcontext():
        ok = rbk_matches(R.reduce_by_key(keys[0], vals[0], "sum"), uk, ref)
        line = timing_line(rotating(kv, lambda p: R.reduce_by_key(p[0], p[1], "sum")))
    print(f"WORD_SUMS={int(word_sums)} cfg={cfg or 'tuned'} {'ok' if ok else 'WRONG'} {line}", flush=True)
