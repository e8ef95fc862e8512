"""Requests first: background work (regeneration on save, indexing) steps aside while a
hover or symbol request is being answered.

Both run in one interpreter, so a busy worker thread would otherwise take half the
interpreter lock from jedi and the event loop. The worker calls `step_aside()` between
files and pages; it waits there while requests are in flight, at most `max_wait` at a
time, so a stream of requests cannot starve regeneration. Called between every two files
of an indexing pass, it looks again only once `quantum` has passed since it last let its
thread go: a request waits for at most that much of the background's work (the interpreter
lock is shared about evenly meanwhile), and a stream of requests one after another still
leaves the background a quantum between two of them.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType


class Requests:
    def __init__(self, max_wait: float = 0.25, quantum: float = 0.002) -> None:
        self._in_flight = 0
        self._quiet = threading.Condition()
        self.max_wait = max_wait
        self.quantum = quantum
        self._let_go = threading.local()  # when `step_aside` last returned, per background thread

    def __enter__(self) -> None:
        with self._quiet:
            self._in_flight += 1

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        with self._quiet:
            self._in_flight -= 1
            if not self._in_flight:
                self._quiet.notify_all()

    def step_aside(self) -> None:
        """Wait until no request is in flight (at most `max_wait`); at once if this thread was let
        go less than `quantum` ago."""
        if time.monotonic() - getattr(self._let_go, "at", -self.quantum) < self.quantum:
            return
        with self._quiet:
            self._quiet.wait_for(lambda: not self._in_flight, timeout=self.max_wait)
        self._let_go.at = time.monotonic()
