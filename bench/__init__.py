"""Benchmarks: ``python -m bench [families...]`` times tritoncub, torch and CUB (through CuPy) side by
side on the current GPU and writes ``bench/results/<gpu>.json`` and ``.md``."""
