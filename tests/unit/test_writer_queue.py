"""The stdio writer's queue over a real pipe: what waits for the client is bounded, a client
that reads gets every message whole and in order, and one that stops reading is given up after
the stall deadline (the producer is not held longer, and nothing more is queued)."""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time

import pytest
from pygls.io_ import StdoutWriter

from repodoc_lsp.server.protocol import QueuedWriter


def _pipe(size: int = 4096) -> tuple[int, int]:
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, size)
    return r, w


def _read_all(fd: int, into: bytearray, pause: float = 0.0) -> None:
    while chunk := os.read(fd, 1 << 16):
        into += chunk
        time.sleep(pause)


def test_a_reading_client_gets_every_message_while_the_queue_stays_bounded() -> None:
    r, w = _pipe()
    writer = QueuedWriter(StdoutWriter(os.fdopen(w, "wb")))
    writer.limit, writer.stall = 200_000, 10.0
    got = bytearray()
    reader = threading.Thread(target=_read_all, args=(r, got, 0.001))
    reader.start()
    sent: list[bytes] = []
    given = most = 0
    for i in range(60):
        message = (b"%02d" % i) * 32_000  # 64 KB each: 3.8 MB in all, far more than the limit
        sent.append(message)
        writer.write((message[:10], message[10:]) if i % 2 else message)
        given += len(message)
        most = max(most, given - len(got))  # ahead of the client
    assert writer.drain(30)
    assert most <= writer.limit + 64_000 + 4096 + (1 << 16)  # + the message let in, the pipe, a read in flight
    assert not writer.broken
    writer.close()
    reader.join(30)
    os.close(r)
    assert bytes(got) == b"".join(sent)


def test_a_client_that_stops_reading_is_given_up_after_the_stall(caplog: pytest.LogCaptureFixture) -> None:
    r, w = _pipe()
    writer = QueuedWriter(StdoutWriter(os.fdopen(w, "wb")))
    writer.limit, writer.stall = 100_000, 1.0
    caplog.set_level(logging.WARNING, logger="repodoc_lsp.server.protocol")
    first = b"a" * 300_000  # taken though larger than the limit: nothing waited; blocks in the pipe
    writer.write(first)
    start = time.monotonic()
    writer.write(b"b" * 1000)  # would pass the limit: waits for the client, which never reads
    held = time.monotonic() - start
    assert writer.broken
    assert 0.9 <= held < 10, held
    assert "the client read no message for 1 s" in caplog.text
    start = time.monotonic()
    for _ in range(1000):  # given up: nothing waits, nothing more is kept
        writer.write(b"c" * 100_000)
    assert time.monotonic() - start < 1
    assert writer._queued <= len(first)
    got = bytearray()
    reader = threading.Thread(target=_read_all, args=(r, got))
    reader.start()
    writer.close()
    reader.join(30)
    os.close(r)
    assert bytes(got) == first  # the message being written ends whole; the dropped ones never come
