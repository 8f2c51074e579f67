"""Module constants switched for A/B probes (run as scripts: this directory is on ``sys.path``)."""
from tritoncub.device import segmented_sort as SS
from tritoncub.device import topk as TK


def _with_value(module, name: str, value, fn):
    """``fn()`` with ``module.<name>`` set to ``value`` (restored after). The remembered launches of the row
    sorts, segmented sorts and top-k are cleared first: a repeated call would replay launches planned under
    the other value."""
    for memo in (SS._ROWS_REPLAYS, SS._SHORT_REPLAYS, TK._TILE_REPLAYS, TK._LONG_REPLAYS):
        memo.clear()
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        return fn()
    finally:
        setattr(module, name, saved)


def with_segmented_sort_value(name: str, value, fn):
    """``fn()`` with ``segmented_sort.<name>`` set to ``value``, as :func:`_with_value`."""
    return _with_value(SS, name, value, fn)


def with_topk_value(name: str, value, fn):
    """``fn()`` with ``topk.<name>`` set to ``value``, as :func:`_with_value`."""
    return _with_value(TK, name, value, fn)
