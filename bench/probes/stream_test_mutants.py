"""Mutants of tests/test_launch.py::test_device_paths_run_on_the_current_stream_alone, which it must
catch: one op launched on the default stream, and one op that synchronises the device. Run on a GPU:

    PYTHONPATH=. python bench/probes/stream_test_mutants.py
"""
import sys; sys.path[:0] = ["tests", "."]
import torch, pytest
import test_launch as T
orig = T._device_path_cases
def mutated(kind):
    def cases(dev, seed=5):
        out = []
        for name, call, check in orig(dev, seed):
            if name == "cumsum" and kind == "default stream":
                def call(x_call=call):
                    with torch.cuda.stream(torch.cuda.default_stream()):
                        return x_call()
            if name == "histc" and kind == "waits":
                def call(x_call=call):
                    r = x_call(); torch.cuda.synchronize(); return r
            out.append((name, call, check))
        return out
    return cases
for kind in ("default stream", "waits"):
    T._device_path_cases = mutated(kind)
    try:
        T.test_device_paths_run_on_the_current_stream_alone()
        print(kind, ": NOT caught")
    except Exception as e:   # (an assertion of the test, or an error the misrouted launch raised)
        print(kind, ": caught:", (str(e) or "assertion in the result check").splitlines()[0][:120])
