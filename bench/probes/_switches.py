"""Module constants switched for A/B probes (run as scripts: this directory is on ``sys.path``)."""
from tritoncub.device import segmented_sort as SS
from tritoncub.device import topk as TK


def with_segmented_sort_value(name: str, value, fn):
    """``fn()`` with ``segmented_sort.<name>`` set to ``value`` (restored after). The remembered launches of
    the row sorts, segmented sorts and top-k are cleared first: a repeated call would replay launches
    planned under the other value."""
    for memo in (SS._ROWS_REPLAYS, SS._SHORT_REPLAYS, TK._TILE_REPLAYS, TK._LONG_REPLAYS):
        memo.clear()
    saved = getattr(SS, name)
    setattr(SS, name, value)
    try:
        return fn()
    finally:
        setattr(SS, name, saved)
