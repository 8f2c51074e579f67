"""reduce_by_key pass 2 writing its keys and run values item by item against word by word
(``_SPARSE_ROUNDS``), at 2^26 int32 keys in 2^20 sorted runs with fp32 values: correctness against
torch, do_bench medians and the kernels' GPU time.

    PYTHONPATH=. python bench/probes/rbk_store_probe.py
"""
import tritoncub.device.reduce_by_key as R
from bench.harness import rotating
from _inputs import rbk_inputs, rbk_matches
from _timing import timing_line

n = 1 << 26
kv, uk, ref = rbk_inputs(n)
keys, vals = [p[0] for p in kv], [p[1] for p in kv]
for rounds in (0, 4, 8, 32):
    R._SPARSE_ROUNDS = rounds
    ok = rbk_matches(R.reduce_by_key(keys[0], vals[0], "sum"), uk, ref)
    line = timing_line(rotating(kv, lambda p: R.reduce_by_key(p[0], p[1], "sum")))
    print(f"_SPARSE_ROUNDS={rounds:2d} {'ok' if ok else 'WRONG'} {line}", flush=True)
