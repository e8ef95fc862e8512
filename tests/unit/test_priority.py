"""Background work steps aside while requests are in flight, but never waits forever."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from repodoc_lsp.server import app
from repodoc_lsp.server.priority import Requests
from repodoc_lsp.server.protocol import RepodocProtocol


def test_background_waits_for_requests_in_flight() -> None:
    requests = Requests(max_wait=30)
    resumed = threading.Event()

    def background() -> None:
        requests.step_aside()
        resumed.set()

    with requests:
        with requests:  # two requests at once
            worker = threading.Thread(target=background)
            worker.start()
            assert not resumed.wait(0.2)
        assert not resumed.wait(0.2)  # one is still in flight
    assert resumed.wait(5)
    worker.join()


def test_a_stream_of_requests_cannot_starve_background_work() -> None:
    requests = Requests(max_wait=0.05)
    resumed = threading.Event()

    def background() -> None:
        requests.step_aside()
        resumed.set()

    with requests:  # a request that stays in flight
        worker = threading.Thread(target=background)
        worker.start()
        assert resumed.wait(5), "background work waited past max_wait"
    worker.join()
    resumed.clear()
    background()  # nothing in flight: returns at once
    assert resumed.is_set()


def test_called_between_every_two_files_it_looks_again_once_a_quantum_has_passed() -> None:
    """An indexing pass steps aside between every two files; a request that comes meanwhile waits
    for at most a quantum of that work, and a stream of requests one after another still leaves
    the background a quantum between two of them."""
    requests = Requests(max_wait=30, quantum=0.5)
    requests.step_aside()  # nothing in flight: let go now
    resumed = threading.Event()

    def background() -> None:
        requests.step_aside()
        resumed.set()

    with requests:  # within the quantum the thread goes on at once
        background()
        assert resumed.is_set()
    resumed.clear()
    threading.Event().wait(0.6)  # the quantum has passed: it waits for the request
    with requests:
        worker = threading.Thread(target=background)  # another thread's quantum is its own
        worker.start()
        assert not resumed.wait(0.2)
    assert resumed.wait(5)
    worker.join()
    with requests:
        worker = threading.Thread(target=background)
        resumed.clear()
        worker.start()
        assert not resumed.wait(0.2)  # a thread's first call looks at once
    assert resumed.wait(5)
    worker.join()


def test_a_request_read_holds_background_work_until_it_is_answered_or_its_deadline() -> None:
    requests = Requests(max_wait=30)
    resumed = threading.Event()

    def background() -> None:
        requests.step_aside()
        resumed.set()

    requests.hold(7)
    worker = threading.Thread(target=background)
    worker.start()
    assert not resumed.wait(0.2)
    requests.release(8)  # another request's answer
    assert not resumed.wait(0.2)
    requests.release(7)
    assert resumed.wait(5)
    worker.join()
    requests.hold("lost", seconds=0.3)  # read, never answered: it holds no longer than its deadline
    resumed.clear()
    worker = threading.Thread(target=background)
    worker.start()
    assert resumed.wait(5)
    worker.join()
    assert not requests.holds("lost")


class _Stdout:
    """The server's stdout as a client's pipe; once `hold_id` is set, the flush of the answer with
    that id waits for `go` (the client has not read it yet)."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.lock = threading.Lock()
        self.hold_id: int | None = None
        self.holding = False
        self.reached, self.go = threading.Event(), threading.Event()

    def write(self, piece: bytes) -> int:
        with self.lock:
            self.data += piece
            if self.hold_id is not None and f'"id":{self.hold_id},'.encode() in piece.replace(b" ", b""):
                self.holding = True
        return len(piece)

    def flush(self) -> None:
        if self.holding:
            self.holding = False
            self.reached.set()
            self.go.wait(30)

    def close(self) -> None:
        pass

    def answer(self, msg_id: int, seconds: float = 60) -> dict:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                data = bytes(self.data)
            while data:
                head, _, rest = data.partition(b"\r\n\r\n")
                length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                message, data = json.loads(rest[:length]), rest[length:]
                if message.get("id") == msg_id and "method" not in message:
                    return message
            time.sleep(0.02)
        raise AssertionError(f"no answer to request {msg_id}")


def test_background_work_steps_aside_for_a_hover_from_its_reading_to_its_answer_written(tmp_path: Path) -> None:
    """Over the server's real stdio loop: while the hover's answer waits to be written, background
    work (indexing) still steps aside for it; it goes on once the answer is out. (Stepping aside
    only while the handler ran let indexing take the interpreter while the request was read and
    its answer written, 60% of a hover's extra time during PyTorch's indexing.)"""
    source = tmp_path / "a.py"
    source.write_text('def area(r):\n    """Area of a circle of radius r."""\n    return 3.14 * r * r\n\n\narea(2)\n')
    server = app.create_server()
    reading, writing = os.pipe()
    stdout = _Stdout()
    with os.fdopen(reading, "rb") as stdin, os.fdopen(writing, "wb") as client:
        loop = threading.Thread(target=server._start_io_async, args=(stdin, stdout), daemon=True)
        loop.start()

        def send(message: dict) -> None:
            body = json.dumps({"jsonrpc": "2.0", **message}).encode()
            client.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            client.flush()

        send({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        stdout.answer(1)
        send({"method": "initialized", "params": {}})
        uri = source.as_uri()
        send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": source.read_text()}}})
        stdout.hold_id = 2
        send({"id": 2, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": 5, "character": 1}}})
        assert stdout.reached.wait(60), "the hover's answer was not written"
        resumed = threading.Event()

        def background() -> None:
            server.requests.step_aside()
            resumed.set()

        worker = threading.Thread(target=background)
        worker.start()
        assert not resumed.wait(0.2), "background work went on before the hover's answer was written"
        stdout.go.set()
        assert resumed.wait(5)
        worker.join()
        assert "Area of a circle" in json.dumps(stdout.answer(2)["result"])
        send({"id": 3, "method": "shutdown"})
        stdout.answer(3)
        send({"method": "exit"})
        loop.join(10)
    assert not loop.is_alive()
    assert not server.requests.holds(2)


def test_requests_held_from_their_reading_are_those_whose_handlers_step_background_work_aside() -> None:
    """workspace/symbol's first query waits up to 2 s for indexing to end (`until_indexed`) before
    its handler steps indexing aside: held from its reading, it would stall indexing meanwhile."""
    server = app.create_server()
    protocol = server.protocol
    assert isinstance(protocol, RepodocProtocol)
    for msg_id, method in enumerate(["textDocument/hover", "textDocument/references", "codeLens/resolve"]):
        protocol.received({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {}})
        assert server.requests.holds(msg_id)
        server.requests.release(msg_id)
    protocol.received({"jsonrpc": "2.0", "id": 9, "method": "workspace/symbol", "params": {"query": "x"}})
    protocol.received({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {}})
    assert not server.requests.holds(9) and not server.requests._held


def test_the_cli_holds_what_it_scans_out_of_cycle_collections() -> None:
    """The CLI's parent holds every file's facts to its end: no cycle collection while they arrive,
    and frozen after (left out of later collections); other processes collect as they did."""
    import gc

    from repodoc_lsp.pipeline.runtime import CLI, LIBRARY, SERVER

    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        with SERVER.holding(), LIBRARY.holding():
            held = [[i] for i in range(1000)]
            assert gc.isenabled()
        assert gc.get_freeze_count() == frozen
        with CLI.holding():
            held += [[i] for i in range(1000)]
            assert not gc.isenabled()
        assert gc.isenabled() and gc.get_freeze_count() >= frozen + 2000
    finally:
        gc.unfreeze()
        gc.enable()
    assert held
