"""Block layer: ``@triton.jit`` primitives on the tile one program (one CTA) holds, CUB's ``Block*``.

One module per primitive (import the functions from it): ``load``/``store`` (four algorithms, cache
modifiers), ``exchange`` (blocked <-> striped, scatter by rank), ``reduce``, ``scan``,
``discontinuity``, ``adjacent_difference``, ``shuffle``, ``histogram``, ``run_length_decode``,
``radix_rank``/``radix_sort``. Tiles are taken in item order (row-major); no ``TempStorage``.
"""
