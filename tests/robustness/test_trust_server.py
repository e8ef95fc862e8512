"""The server trusts only its person: `--tcp` on the loopback address with a token, over real sockets."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import make_workspace

from repodoc_lsp.output.manifest import MANIFEST

TOKEN = "a-test-token-of-enough-length-0123456789"


class Peer:
    """A JSON-RPC peer on one TCP connection (answers the server's own requests)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def receive(self) -> dict[str, Any] | None:
        """The next message; None when the server closed the connection."""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
        header, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = int(re.search(rb"Content-Length: (\d+)", header).group(1))  # type: ignore[union-attr]
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            assert chunk, "closed in the middle of a message"
            rest += chunk
        self.buffer = rest[length:]
        return json.loads(rest[:length])

    def response(self, msg_id: int) -> dict[str, Any] | None:
        while (msg := self.receive()) is not None:
            if "method" in msg and "id" in msg:
                result: Any = [{}] * len(msg["params"]["items"]) \
                    if msg["method"] == "workspace/configuration" else None
                self.send({"id": msg["id"], "result": result})
            elif msg.get("id") == msg_id:
                return msg
        return None

    def initialize(self, root: Path, options: dict[str, Any]) -> dict[str, Any] | None:
        self.send({"id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": root.as_uri(), "capabilities": {}, "initializationOptions": options}})
        return self.response(1)

    def closed(self) -> bool:
        """True when the server closed the connection (after what it had sent)."""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                return True
            if not chunk:
                return True
            self.buffer += chunk


def _serve(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, "-m", "repodoc_lsp", "serve", "--tcp", "127.0.0.1:0", *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache"), **(env or {})})
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if found := re.search(r"listening on 127\.0\.0\.1:(\d+)", line):
            return proc, int(found.group(1))
        assert line, "the server ended before listening"
    raise AssertionError("the server did not listen in 30 s")


def test_tcp_needs_the_token_before_initialize(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"pyproject.toml": "", "mod.py": "def tcp_symbol():\n    pass\n"})
    proc, port = _serve(tmp_path, env={"REPODOC_TCP_TOKEN": TOKEN})
    try:
        for options, why in (({}, "no token"), ({"token": "x" * 40}, "wrong token"),
                             ({"token": 12}, "no token")):
            peer = Peer(port)
            reply = peer.initialize(root, options)
            assert reply is not None and why in reply["error"]["message"], reply
            assert "result" not in reply
            assert peer.closed()
        peer = Peer(port)  # a request other than initialize first: refused too
        peer.send({"id": 7, "method": "workspace/symbol", "params": {"query": "tcp"}})
        assert "initialize" in peer.response(7)["error"]["message"]  # type: ignore[index]
        assert peer.closed()
        assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir()), "a root was made"
        peer = Peer(port)  # the person's client, with the token: a normal session
        reply = peer.initialize(root, {"token": TOKEN, "maxWorkspaceSymbols": 5})
        assert reply is not None and "capabilities" in reply["result"], reply
        peer.send({"method": "initialized", "params": {}})
        other = Peer(port)  # while the session runs, nobody else gets in, token or not
        assert "another client" in other.initialize(root, {"token": TOKEN})["error"]["message"]  # type: ignore[index]
        found: list = []
        for n in range(200):
            peer.send({"id": 100 + n, "method": "workspace/symbol", "params": {"query": "tcp_symbol"}})
            if found := peer.response(100 + n)["result"]:  # type: ignore[index]
                break
            time.sleep(0.05)
        assert found[0]["name"] == "tcp_symbol"
        peer.send({"id": 2, "method": "shutdown"})
        assert peer.response(2) is not None
        peer.send({"method": "exit"})
        assert proc.wait(10) == 0
        assert not [m for m in proc.stderr.read().splitlines() if "unknown key" in m]  # type: ignore[union-attr]
    finally:
        proc.kill()
        proc.wait(10)


def test_tcp_prints_a_generated_token(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REPODOC_TCP_TOKEN"}
    proc = subprocess.Popen([sys.executable, "-m", "repodoc_lsp", "serve", "--tcp", "localhost:0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**env, "REPODOC_CACHE_DIR": str(tmp_path / "cache")})
    try:
        assert proc.stderr is not None
        token = re.fullmatch(r"repodoc: token: (\S+)\n", proc.stderr.readline())
        assert token and len(token.group(1)) >= 32
        port = int(re.search(r":(\d+);", proc.stderr.readline()).group(1))  # type: ignore[union-attr]
        root = make_workspace(tmp_path / "ws", {"a.py": "x = 1\n"})
        assert "wrong token" in Peer(port).initialize(root, {"token": TOKEN})["error"]["message"]  # type: ignore
        assert "result" in Peer(port).initialize(root, {"token": token.group(1)})  # type: ignore[operator]
    finally:
        proc.kill()
        proc.wait(10)


@pytest.mark.parametrize("address", ["0.0.0.0:0", "192.0.2.1:4000", "example.org:4000", "[::]:0", "nonsense"])
def test_tcp_refuses_a_non_loopback_address(address: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "repodoc_lsp", "serve", "--tcp", address],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.startswith("repodoc: error: --tcp") and proc.stderr.count("\n") == 1, proc.stderr


def test_tcp_token_file_must_be_private(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o644)
    proc = subprocess.run([sys.executable, "-m", "repodoc_lsp", "serve", "--tcp", "127.0.0.1:0",
                           "--token-file", str(token_file)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "chmod 600" in proc.stderr, proc.stderr
    token_file.chmod(0o600)
    server, port = _serve(tmp_path, "--token-file", str(token_file))
    try:
        root = make_workspace(tmp_path / "ws", {"a.py": "x = 1\n"})
        assert "result" in Peer(port).initialize(root, {"token": TOKEN})  # type: ignore[operator]
    finally:
        server.kill()
        server.wait(10)


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **(env or {})})


def test_cli_refuses_the_filesystem_root_the_home_folder_and_an_output_folder(tmp_path: Path) -> None:
    home = make_workspace(tmp_path / "home", {"stray.py": "x = 1\n"})
    ws = make_workspace(tmp_path / "ws", {"a.py": "x = 1\n"})
    env = {"HOME": str(home), "REPODOC_CACHE_DIR": str(tmp_path / "cache")}
    assert _cli(str(ws), "-q", env=env).returncode == 0
    for folder, why in (("/", "/ is the root of the file system"), (str(home), "is your home folder"),
                        (str(ws / "docs"), "is inside the repodoc output folder")):
        proc = _cli(folder, env=env)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("repodoc: error: ") and why in proc.stderr, proc.stderr
    assert sorted(p.name for p in home.iterdir()) == ["stray.py"]
    assert not (ws / "docs/docs").exists()


def test_cli_caps_a_workspace_with_one_warning(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", {"pyproject.toml": "[tool.repodoc]\nmax-workspace-files = 3\n",
                                          **{f"m{i}.py": "x = 1\n" for i in range(6)}})
    proc = _cli(str(ws), "-q", env={"REPODOC_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"repodoc: warning: {ws} has more than 3 files: the rest are left out (max-workspace-files)"]
    assert "3 files analysed" in proc.stdout


def test_fifos_in_the_output_folder_never_block(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", {"a.py": "def a():\n    pass\n", "docs/notes.md": "mine\n"})
    os.mkfifo(ws / "docs" / MANIFEST)
    os.mkfifo(ws / "docs/a.py_docs.md")
    proc = _cli(str(ws), "--json", "--out", str(ws / "docs"), env={"REPODOC_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    conflicts = {c["path"]: c["reason"] for c in json.loads(proc.stdout)["conflicts"]}
    assert conflicts == {"a.py_docs.md": "a file repodoc did not generate is in the way"}
    assert (ws / "docs/a.py_kw.md").is_file() and (ws / "docs/notes.md").read_text() == "mine\n"
