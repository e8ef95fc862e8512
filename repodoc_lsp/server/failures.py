"""Failed writes reach the person: one window/showMessage per burst of saves or per generation
(not one per page), and a log line naming every page."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from repodoc_lsp.server.server import RepodocServer

if TYPE_CHECKING:
    from repodoc_lsp.generate import Summary

log = logging.getLogger(__name__)
QUIET_SECONDS = 10.0  # after a message, failures of the same root are only logged for this long
_last: dict[str, float] = {}


def report(ls: RepodocServer, what: str, summary: Summary | None, *, always: bool = False) -> None:
    """Tell the person that pages of `summary` could not be written (`what`: "on save", "generate").
    A burst of failing saves shows one message per QUIET_SECONDS (`always`: shown regardless)."""
    if summary is None or not summary.errors:
        return
    out = Path(summary.out)
    log.warning("repodoc %s: %d pages not written: %s", what, len(summary.errors),
                "; ".join(f"{out / e.page}: {e.reason}" for e in summary.errors))
    now = time.monotonic()
    if not always and now - _last.get(summary.root, -QUIET_SECONDS) < QUIET_SECONDS:
        return
    _last[summary.root] = now
    first = summary.errors[0]
    more = f" and {len(summary.errors) - 1} more" if len(summary.errors) > 1 else ""
    ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=(
        f"repodoc {what}: {out / first.page}{more} could not be written ({first.reason}); "
        "the previous pages are kept")))


def report_exception(ls: RepodocServer, what: str, exc: BaseException) -> None:
    """A write that failed as a whole (the output folder unusable, another run holding it)."""
    log.warning("repodoc %s failed: %s", what, exc)
    ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error,
                                                   message=f"repodoc {what} failed: {exc}"))
