"""`repodoc serve --tcp`: the loopback address only, and a token before `initialize` is answered.

Any local process can connect to a port, so the first message of a connection is read here,
before pygls sees anything: it must be `initialize` with `initializationOptions.token` equal to
the server's token. Otherwise the peer gets one error response and the connection is closed;
the server keeps listening for the right client. One authenticated session at a time; when it
ends, the server ends (as on stdio).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import logging
import os
import secrets
import stat
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.io_ import run_async

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

TOKEN_ENV = "REPODOC_TCP_TOKEN"
TOKEN_OPTION = "token"  # initializationOptions.token
MIN_TOKEN_CHARS = 16
FIRST_MESSAGE_SECONDS = 10.0  # an idle connection is closed after this long
FIRST_MESSAGE_MAX_BYTES = 1 << 20
NOT_AUTHORISED = -32600  # JSON-RPC "invalid request": LSP has no code for this
log = logging.getLogger(__name__)


class TcpError(Exception):
    """A bad --tcp address or token source; the message says which and what to do."""


def parse_address(value: str) -> tuple[str, int]:
    """(host, port) of `HOST:PORT`; the host must be a loopback address (`localhost` is 127.0.0.1)."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise TcpError(f"--tcp expects HOST:PORT, got {value!r}")
    host = host.strip("[]") or "127.0.0.1"
    if host.lower() == "localhost":
        host = "127.0.0.1"
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise TcpError(f"--tcp: {host} is not a loopback address: the server listens only on this machine "
                       "(use 127.0.0.1, ::1 or localhost)")
    return host, int(port)


def load_token(token_file: str | None) -> tuple[str, bool]:
    """The token and whether it was generated: from --token-file, else $REPODOC_TCP_TOKEN, else new."""
    if token_file:
        token = _read_token_file(Path(token_file))
        where = f"--token-file {token_file}"
    else:
        token = os.environ.pop(TOKEN_ENV, "").strip()  # not inherited by the server's own processes
        where = f"${TOKEN_ENV}"
        if not token:
            return secrets.token_urlsafe(32), True
    if len(token) < MIN_TOKEN_CHARS:
        raise TcpError(f"{where}: the token must be at least {MIN_TOKEN_CHARS} characters")
    return token, False


def _read_token_file(path: Path) -> str:
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise TcpError(f"--token-file {path}: not a regular file")
        if st.st_mode & 0o077:
            raise TcpError(f"--token-file {path}: others can read it (mode {stat.S_IMODE(st.st_mode):o}); "
                           f"run chmod 600 {path}")
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise TcpError(f"--token-file {path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any]:
    """One LSP message (headers, then a JSON object body); ValueError when it is not one."""
    length = None
    for _ in range(16):
        line = await reader.readline()
        if not line:
            raise ValueError("the connection closed")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            length = int(value.strip())
    else:
        raise ValueError("too many header lines")
    if length is None or length > FIRST_MESSAGE_MAX_BYTES:
        raise ValueError("no Content-Length, or a body too large")
    try:
        message = json.loads(await reader.readexactly(length))
    except RecursionError:  # nested past the parser's limit: not ValueError
        raise ValueError("the message is nested too deep") from None
    if not isinstance(message, dict):
        raise ValueError("the message is not a JSON object")
    return message


def check_first(message: dict[str, Any], token: str) -> str:
    """Why the first message is refused ("" when it is a well-formed initialize with the token).
    The token is taken out of the message: it is not a setting."""
    if message.get("method") != "initialize" or "id" not in message:
        return "the first message must be the initialize request, with initializationOptions.token"
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    given = options.pop(TOKEN_OPTION, None) if isinstance(options, dict) else None
    if not isinstance(given, str) or not given:
        return "no token: pass the server's token as initializationOptions.token"
    if not hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8")):
        return "wrong token in initializationOptions.token"
    return ""


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class _Prefixed:
    """A reader that yields `prefix` (the first message, token removed), then the connection."""

    def __init__(self, prefix: bytes, reader: asyncio.StreamReader) -> None:
        self.buffer = prefix
        self.reader = reader

    async def readline(self) -> bytes:
        if self.buffer:
            end = self.buffer.find(b"\n") + 1 or len(self.buffer)
            line, self.buffer = self.buffer[:end], self.buffer[end:]
            return line
        return await self.reader.readline()

    async def readexactly(self, n: int) -> bytes:
        head, self.buffer = self.buffer[:n], self.buffer[n:]
        return head + (await self.reader.readexactly(n - len(head)) if n > len(head) else b"")


class TcpServe:
    """Accepts connections on the loopback address; hands the first authenticated one to pygls."""

    def __init__(self, server: LanguageServer, token: str) -> None:
        self.server = server
        self.token = token
        self.session = False
        self.listener: asyncio.Server | None = None

    async def serve(self, host: str, port: int) -> None:
        self.listener = await asyncio.start_server(self.connection, host, port)
        bound = self.listener.sockets[0].getsockname()
        print(f"repodoc: listening on {host}:{bound[1]}; clients pass the token as "
              f"initializationOptions.{TOKEN_OPTION}", file=sys.stderr, flush=True)
        with contextlib.suppress(asyncio.CancelledError):  # the session ended: close() stops serving
            await self.listener.serve_forever()

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            first = await asyncio.wait_for(read_message(reader), FIRST_MESSAGE_SECONDS)
        except (TimeoutError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            writer.close()
            return
        problem = check_first(first, self.token) or ("another client is connected" if self.session else "")
        if problem:
            log.warning("refused a TCP connection: %s", problem)
            await self._refuse(writer, first.get("id"), problem)
            return
        self.session = True
        self.server.protocol.set_writer(writer)
        stop = self.server._stop_event = threading.Event()
        try:
            await run_async(stop_event=stop, reader=_Prefixed(encode(first), reader),
                            protocol=self.server.protocol, logger=log,
                            error_handler=self.server.report_server_error)
        except SystemExit:  # the LSP `exit` notification
            pass
        finally:
            writer.close()
            if self.listener is not None:
                self.listener.close()

    async def _refuse(self, writer: asyncio.StreamWriter, msg_id: Any, problem: str) -> None:
        if isinstance(msg_id, int | str):
            writer.write(encode({"jsonrpc": "2.0", "id": msg_id, "error": {
                "code": NOT_AUTHORISED, "message": f"repodoc: {problem}"}}))
            with contextlib.suppress(TimeoutError, OSError):
                await asyncio.wait_for(writer.drain(), 5)
        writer.close()


def serve_tcp(server: LanguageServer, address: str, token_file: str | None) -> int:
    """Listen on `address` until the authenticated session ends; 2 for a bad address or token."""
    try:
        host, port = parse_address(address)
        token, generated = load_token(token_file)
    except TcpError as exc:
        print(f"repodoc: error: {exc}", file=sys.stderr)
        return 2
    if generated:
        print(f"repodoc: token: {token}", file=sys.stderr, flush=True)
    try:
        asyncio.run(TcpServe(server, token).serve(host, port))
    except OSError as exc:
        print(f"repodoc: error: --tcp {address}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0
