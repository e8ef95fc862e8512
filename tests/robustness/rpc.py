"""A raw JSON-RPC peer over the server's stdio: for the malformed traffic a real client never sends."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from queue import Empty, Queue
from typing import Any


class RawServer:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "repodoc_lsp", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.messages: Queue[dict[str, Any]] = Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = out.read(1)
                if not byte:
                    return
                header += byte
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            self.messages.put(json.loads(out.read(length)))

    def raw(self, body: bytes, length: int | None = None) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.raw(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def response(self, msg_id: int | str, timeout: float = 20,
                 seen: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The response to request `msg_id` (answering the server's own requests meanwhile); the
        other messages read meanwhile go to `seen`."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                msg = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
            except Empty as exc:
                raise TimeoutError(f"no response to {msg_id}") from exc
            if "method" in msg and "id" in msg:  # a request from the server
                result: Any = [{}] * len(msg["params"]["items"]) if msg["method"] == "workspace/configuration" else None
                self.send({"id": msg["id"], "result": result})
            elif msg.get("id") == msg_id:
                return msg
            elif seen is not None:
                seen.append(msg)

    def initialize(self, root_uri: str | None, options: dict | None = None) -> dict[str, Any]:
        self.send({"id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": root_uri, "capabilities": {},
            "initializationOptions": options or {}}})
        reply = self.response(1)
        self.send({"method": "initialized", "params": {}})
        return reply

    def exit_code(self, timeout: float = 5) -> int:
        return self.proc.wait(timeout)
