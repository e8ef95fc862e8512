"""Failed writes reach the person: one window/showMessage per burst of saves or per generation
(not one per page), and a log line naming every page. The server's log (its own warnings and
what its regeneration processes write on stderr) reaches the client as window/logMessage; a
warning meant for a person (`repodoc: warning: ...`, as the CLI prints it: a damaged manifest)
is also shown, once per QUIET_SECONDS."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from repodoc_lsp.server.server import RepodocServer
from repodoc_lsp.words import plural

if TYPE_CHECKING:
    from repodoc_lsp.pipeline.generate import Summary

log = logging.getLogger(__name__)
PERSON = ("repodoc: warning:", "repodoc: error:")  # log lines a person must see
QUIET_SECONDS = 10.0  # after a message, failures of the same root are only logged for this long
_last: dict[str, float] = {}


def report(ls: RepodocServer, what: str, summary: Summary | None, *, always: bool = False) -> None:
    """Tell the person that pages of `summary` could not be written (`what`: "on save", "generate").
    A burst of failing saves shows one message per QUIET_SECONDS (`always`: shown regardless)."""
    if summary is None or not summary.errors:
        return
    out = Path(summary.out)
    log.warning("repodoc %s: %s not written: %s", what, plural(len(summary.errors), "page"),
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


class ToClient(logging.Handler):
    """Log records (WARNING and up) of the server's loggers sent to the client as
    window/logMessage, from any thread; those meant for a person also as window/showMessage
    (the same text shown at most once per QUIET_SECONDS). Nothing once the server stops."""

    def __init__(self, ls: RepodocServer, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(logging.WARNING)
        self.ls, self.loop = ls, loop

    def emit(self, record: logging.LogRecord) -> None:
        if self.ls.stopping:
            return
        try:
            text = self.format(record)  # the message, and a traceback if there is one
        except Exception:
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server is ending
            self.loop.call_soon_threadsafe(self._send, record.levelno, text)

    def _send(self, level: int, text: str) -> None:
        if self.ls.stopping:
            return
        kind = types.MessageType.Error if level >= logging.ERROR else types.MessageType.Warning
        self.ls.window_log_message(types.LogMessageParams(type=kind, message=text))
        if not text.startswith(PERSON):
            return
        key, now = text.split(" (", 1)[0], time.monotonic()  # the same warning, whatever its details
        if now - _last.get(key, -QUIET_SECONDS) >= QUIET_SECONDS:
            _last[key] = now
            self.ls.window_show_message(types.ShowMessageParams(type=kind, message=text))


def log_to_client(ls: RepodocServer) -> None:
    """Send the log of the package's loggers to the client (called on the event loop, once the
    session is initialised; a handler of an earlier session is replaced)."""
    package = logging.getLogger("repodoc_lsp")
    for handler in [h for h in package.handlers if isinstance(h, ToClient)]:
        package.removeHandler(handler)
    package.addHandler(ToClient(ls, asyncio.get_running_loop()))
