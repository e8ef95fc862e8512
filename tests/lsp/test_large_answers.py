"""A large answer over stdio (a heavy class's references) while the client does not read yet:
the server's event loop goes on (the answer is written on a thread of its own), and what the
client then reads is every message whole and in the order it was sent."""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


class _Client:
    """A raw JSON-RPC client that reads only when asked (so the server's writes can block)."""

    def __init__(self, cwd: Path, log: Path) -> None:
        env = {**os.environ, "REPODOC_CACHE_DIR": str(cwd / "cache")}
        self.proc = subprocess.Popen([sys.executable, "-m", "repodoc_lsp", "serve", "--log-file", str(log),
                                      "--verbose"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        assert self.proc.stdout is not None
        self.fd = self.proc.stdout.fileno()
        self.buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _more(self, deadline: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise TimeoutError("no message from the server")
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            raise EOFError("the server closed its output")
        self.buffer += chunk

    def message(self, timeout: float = 30) -> tuple[dict[str, Any], int]:
        """The next message and its Content-Length."""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buffer:
            self._more(deadline)
        header, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        while len(rest) < length:
            self._more(deadline)
            header, _, rest = self.buffer.partition(b"\r\n\r\n")
        self.buffer = rest[length:]
        return json.loads(rest[:length]), length

    def response(self, msg_id: int, timeout: float = 30) -> dict[str, Any]:
        while True:
            msg, _ = self.message(timeout)
            if "method" in msg and "id" in msg:  # the server asks: nothing to give
                self.send({"id": msg["id"], "result": None})
            elif msg.get("id") == msg_id:
                return msg


def test_a_large_answer_does_not_hold_the_event_loop_and_messages_keep_their_order(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "lib.py").write_text("class Thing:\n    pass\n")
    uses = 4000  # about 450 KB of Locations: more than the pipe holds
    (root / "use.py").write_text("from lib import Thing\n" + "Thing()\n" * uses)
    log = tmp_path / "server.log"
    client = _Client(tmp_path, log)
    try:
        client.send({"id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": root.as_uri(), "capabilities": {},
            "initializationOptions": {"outputDir": str(tmp_path / "out")}}})
        client.response(1)
        client.send({"method": "initialized", "params": {}})
        refs = {"textDocument": {"uri": (root / "lib.py").as_uri()}, "position": {"line": 0, "character": 6},
                "context": {"includeDeclaration": False}}
        deadline, msg_id, found = time.monotonic() + 60, 1, None
        while found is None:  # the graph is built after indexing
            assert time.monotonic() < deadline, "no references answer within 60 s"
            msg_id += 1
            client.send({"id": msg_id, "method": "textDocument/references", "params": refs})
            found = client.response(msg_id)["result"]
            time.sleep(0.2)
        assert len(found) == uses + 1
        pipe = fcntl.fcntl(client.fd, fcntl.F_GETPIPE_SZ)
        assert len(json.dumps(found)) > 2 * pipe  # the answer cannot sit in the pipe

        # Two large answers, then a small request, none of them read yet.
        client.send({"id": 100, "method": "textDocument/references", "params": refs})
        client.send({"id": 101, "method": "textDocument/references", "params": refs})
        time.sleep(1.0)  # the answers are being written: the pipe is full
        client.send({"id": 102, "method": "workspace/symbol", "params": {"query": "Thing"}})
        seen = time.monotonic() + 20
        while "Request 'workspace/symbol' received" not in log.read_text(errors="replace"):
            assert time.monotonic() < seen, "the server's event loop waited for the client to read"
            time.sleep(0.1)

        got = []
        while len(got) < 3:
            msg, length = client.message()
            if "id" in msg and "method" not in msg:
                got.append((msg["id"], msg.get("result"), length))
        assert [i for i, _, _ in got] == [100, 101, 102]  # in the order they were answered
        assert got[0][1] == found and got[1][1] == found  # whole
        assert got[0][2] == got[1][2]  # the same answer's bytes, under another id of the same length
        assert [s["name"] for s in got[2][1]] == ["Thing"]
        client.send({"id": 103, "method": "shutdown"})
        client.response(103)
        client.send({"method": "exit"})
        assert client.proc.wait(10) == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait(10)
