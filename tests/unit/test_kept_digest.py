"""When a scan takes a file's digest from the last run instead of reading the file (`store/scan.Seen`):
only when no write can have gone unseen, a write that leaves the stat as it was included (the same
size and inode, within the same tick of a coarse file clock)."""

from __future__ import annotations

from repodoc_lsp.store.scan import RACY_NS, Seen

BEGAN = 1_000 * 10**9  # when the last run's scan began (ns)


def _seen(stat: tuple[int, int, int, int]) -> Seen:
    return Seen({"a.py": "d1"}, {"a.py": stat}, BEGAN)


def test_a_stat_older_than_the_scan_by_the_racy_window_keeps_the_digest() -> None:
    old = BEGAN - RACY_NS
    assert _seen((12, old - 5, old, 7)).digest("a.py", (12, old - 5, old, 7)) == "d1"


def test_a_write_the_stat_cannot_show_is_read_again() -> None:
    """Written just before the scan read it, then again with the same size in the same clock tick: the
    stat is the one kept, but its times are too close to the scan's start to vouch for the contents."""
    tick = BEGAN - 1_000_000
    assert _seen((12, tick, tick, 7)).digest("a.py", (12, tick, tick, 7)) is None
    edge = BEGAN - RACY_NS + 1
    assert _seen((12, edge, edge, 7)).digest("a.py", (12, edge, edge, 7)) is None


def test_a_modification_time_put_back_is_read_again() -> None:
    """A tool that sets the modification time back (`touch -d`, `cp -p`, an archive) cannot set back the
    status change time."""
    old = BEGAN - 3 * RACY_NS
    kept = (12, old, old, 7)
    assert _seen(kept).digest("a.py", (12, old, BEGAN + 10**9, 7)) is None
    assert _seen(kept).digest("a.py", (12, old, old, 8)) is None  # replaced by another file
    assert _seen(kept).digest("a.py", (13, old, old, 7)) is None
    assert _seen(kept).digest("a.py", None) is None and _seen(kept).digest("b.py", kept) is None
