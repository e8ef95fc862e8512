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

A request is in flight from the moment its message is read (`hold`, on stdio's reader thread)
until its answer is written (`release`, on the writer's thread), not only while its handler
runs: its decoding, dispatch and the writing of its answer take the interpreter lock too, and
each hand-over between those threads waited for the indexing thread's share of it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable
from types import TracebackType

HOLD_SECONDS = 10.0  # a request read and never answered stops holding background work after this


class Requests:
    def __init__(self, max_wait: float = 0.25, quantum: float = 0.002) -> None:
        self._in_flight = 0
        self._quiet = threading.Condition()
        self.max_wait = max_wait
        self.quantum = quantum
        self._let_go = threading.local()  # when `step_aside` last returned, per background thread
        self._held: dict[Hashable, float] = {}  # requests read, not answered yet -> until when they hold

    def hold(self, key: Hashable, seconds: float = HOLD_SECONDS) -> None:
        """Request `key` was read: background work waits for it as for one in flight, until
        `release(key)` or for at most `seconds`."""
        with self._quiet:
            self._held[key] = time.monotonic() + seconds

    def holds(self, key: Hashable) -> bool:
        return key in self._held

    def release(self, key: Hashable) -> None:
        """Request `key` was answered."""
        with self._quiet:
            if self._held.pop(key, None) is not None and not self._busy():
                self._quiet.notify_all()

    def _busy(self) -> bool:
        """A request is in flight (called with `_quiet` held)."""
        if self._in_flight:
            return True
        if self._held:
            now = time.monotonic()
            for key in [key for key, until in self._held.items() if until <= now]:
                del self._held[key]
        return bool(self._held)

    def __enter__(self) -> None:
        with self._quiet:
            self._in_flight += 1

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        with self._quiet:
            self._in_flight -= 1
            if not self._busy():
                self._quiet.notify_all()

    def step_aside(self) -> None:
        """Wait until no request is in flight (at most `max_wait`); at once if this thread was let
        go less than `quantum` ago."""
        if time.monotonic() - getattr(self._let_go, "at", -self.quantum) < self.quantum:
            return
        with self._quiet:
            end = time.monotonic() + self.max_wait
            while self._busy():  # until an answer, or `max_wait`, or the deadline of a request held
                now = time.monotonic()
                until = min([end, *self._held.values()])
                if until <= now:
                    break
                self._quiet.wait(until - now)
        self._let_go.at = time.monotonic()
