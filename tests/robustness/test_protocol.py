"""The server survives malformed and misplaced traffic, and exits as the specification says."""

from __future__ import annotations

import os
import time
from pathlib import Path

from rpc import RawServer


def _workspace(tmp_path: Path) -> tuple[str, dict[str, str]]:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text('def known():\n    """A known function."""\n')
    return root.as_uri(), {**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache")}


def _alive(server: RawServer, msg_id: int) -> None:
    server.send({"id": msg_id, "method": "workspace/symbol", "params": {"query": "known"}})
    assert "result" in server.response(msg_id)


def test_request_before_initialize_and_unknown_method(tmp_path: Path) -> None:
    uri, env = _workspace(tmp_path)
    server = RawServer(env)
    server.send({"id": 7, "method": "workspace/symbol", "params": {"query": "x"}})
    assert server.response(7)["error"]["code"] == -32002  # ServerNotInitialized
    server.initialize(uri, {"cacheDir": str(tmp_path / "cache")})
    server.send({"id": 8, "method": "repodoc/noSuchMethod", "params": {}})
    assert server.response(8)["error"]["code"] == -32601  # MethodNotFound
    _alive(server, 9)
    server.send({"id": 10, "method": "shutdown"})
    server.response(10)
    server.send({"method": "exit"})
    assert server.exit_code() == 0


def test_malformed_messages_and_invalid_params(tmp_path: Path) -> None:
    uri, env = _workspace(tmp_path)
    server = RawServer(env)
    server.initialize(uri, {"cacheDir": str(tmp_path / "cache")})
    server.raw(b"{this is not json}")
    server.raw(b"[1, 2, 3]")
    server.raw(b'{"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {"textDocument": 3}}')
    server.send({"id": 20, "method": "textDocument/hover", "params": {"textDocument": {"uri": 5}}})
    reply = server.response(20)
    assert "error" in reply
    server.send({"id": 21, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": uri + "/pkg/mod.py"}, "position": {"line": 10_000, "character": 99}}})
    assert server.response(21)["result"] is None  # past the end of the file
    server.send({"method": "textDocument/didSave", "params": {"textDocument": {"uri": "file:///elsewhere/x.py"}}})
    _alive(server, 22)
    server.send({"id": 23, "method": "workspace/executeCommand", "params": {"command": "repodoc.pagesFor",
                                                                              "arguments": [42]}})
    assert server.response(23)["error"]["code"] == -32602  # InvalidParams
    _alive(server, 24)
    server.send({"method": "exit"})  # no shutdown first: exit code 1
    assert server.exit_code() == 1


def test_cancelled_request_and_prompt_exit(tmp_path: Path) -> None:
    uri, env = _workspace(tmp_path)
    server = RawServer(env)
    server.initialize(uri, {"cacheDir": str(tmp_path / "cache")})
    server.send({"id": 30, "method": "workspace/executeCommand", "params": {"command": "repodoc.generate"}})
    server.send({"method": "$/cancelRequest", "params": {"id": 30}})
    reply = server.response(30, timeout=30)
    assert "result" in reply or reply["error"]["code"] == -32800  # RequestCancelled
    _alive(server, 31)
    server.send({"id": 32, "method": "shutdown"})
    server.response(32)
    started = time.monotonic()
    server.send({"method": "exit"})
    assert server.exit_code() == 0
    assert time.monotonic() - started < 1.0


def test_bad_content_length(tmp_path: Path) -> None:
    """A Content-Length that is not a number is skipped and the next message is answered; a body shorter
    than announced swallows what follows (JSON-RPC over stdio cannot resynchronise), but the process does not
    crash and leaves at the end of its input (exit 1: no shutdown was asked)."""
    uri, env = _workspace(tmp_path)
    server = RawServer(env)
    server.initialize(uri, {"cacheDir": str(tmp_path / "cache")})
    assert server.proc.stdin is not None
    server.proc.stdin.write(b"Content-Length: abc\r\n\r\n")
    server.proc.stdin.flush()
    _alive(server, 40)
    server.raw(b'{"jsonrpc": "2.0", "method": "x"}', length=10)  # announced 10 bytes: a truncated body
    time.sleep(0.5)
    assert server.proc.poll() is None  # not crashed
    server.proc.stdin.close()
    assert server.exit_code() == 1


def test_a_message_nested_too_deep_is_a_parse_error(tmp_path: Path) -> None:
    """Arrays nested past the parser's recursion limit (1,000 and 100,000 deep: `json.loads` raises
    RecursionError, which ended the reader and the server) get JSON-RPC's Parse error with a null id,
    as a body that is not JSON does, and the next request is answered."""
    uri, env = _workspace(tmp_path)
    server = RawServer(env)
    server.initialize(uri, {"cacheDir": str(tmp_path / "cache")})
    for depth in (1_000, 100_000):
        server.raw(b'{"jsonrpc": "2.0", "id": 50, "method": "workspace/symbol", "params": {"query": '
                   + b"[" * depth + b"]" * depth + b"}}")
    server.raw(b"{this is not json}")
    seen: list[dict] = []
    server.send({"id": 51, "method": "workspace/symbol", "params": {"query": "known"}})
    assert server.response(51, seen=seen)["result"]
    errors = [msg for msg in seen if "error" in msg]
    assert [(msg["id"], msg["error"]["code"]) for msg in errors] == [(None, -32700)] * 3
    assert [msg["error"]["message"] for msg in errors[:2]] == ["nested too deep"] * 2
    assert server.proc.poll() is None
    server.send({"id": 52, "method": "shutdown"})
    server.response(52)
    server.send({"method": "exit"})
    assert server.exit_code() == 0
