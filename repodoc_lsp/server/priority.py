"""Requests first: background work (regeneration on save, indexing) steps aside while a
hover or symbol request is being answered.

Both run in one interpreter, so a busy worker thread would otherwise take half the
interpreter lock from jedi and the event loop. The worker calls `step_aside()` between
files and pages; it waits there while requests are in flight, at most `max_wait` at a
time, so a stream of requests cannot starve regeneration.
"""

from __future__ import annotations

import threading
from types import TracebackType


class Requests:
    def __init__(self, max_wait: float = 0.25) -> None:
        self._in_flight = 0
        self._quiet = threading.Condition()
        self.max_wait = max_wait

    def __enter__(self) -> None:
        with self._quiet:
            self._in_flight += 1

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        with self._quiet:
            self._in_flight -= 1
            if not self._in_flight:
                self._quiet.notify_all()

    def step_aside(self) -> None:
        """Wait until no request is in flight (at most `max_wait`)."""
        with self._quiet:
            self._quiet.wait_for(lambda: not self._in_flight, timeout=self.max_wait)
