"""pygls's protocol with what the specification asks for and pygls does not give: a request
whose params cannot be decoded gets an InvalidParams response (pygls drops it, so the client
would wait forever), a request before `initialize` gets ServerNotInitialized, and
`$/cancelRequest` of a command reaches the command (pygls runs `workspace/executeCommand` as a
generator whose step, the command's coroutine, is a task of its own: it answered
RequestCancelled and let the command run on, so a cancelled `repodoc.generate` wrote the tree).

Stdio is read by a thread of its own, a whole message at a time (`run_stdio`): pygls's reader
made three trips through a thread pool and back to the event loop for each message, each a
hand-over of the interpreter lock, which the indexing thread shared (about half of what a hover
cost more during indexing was spent outside its handler: bench/README.md). A hover,
references or code lens resolve request is in flight (`priority.Requests.hold`) from its reading
until its answer is written, not only while its handler runs."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import logging
import queue
import re
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol, lsp_method

from repodoc_lsp.server.convert import EditorWorkspace
from repodoc_lsp.server.priority import Requests

log = logging.getLogger(__name__)
# Requests that background work steps aside for from their reading to their answer's writing: those
# whose handlers step it aside (`with ls.requests`) from their start. Not workspace/symbol, whose
# first query waits up to 2 s for indexing to end (`until_indexed`): indexing held meanwhile stalled.
FIRST = frozenset({types.TEXT_DOCUMENT_HOVER, types.TEXT_DOCUMENT_REFERENCES, types.CODE_LENS_RESOLVE})
_CONTENT_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$")


class Encoded(str):
    """A request's result already encoded as JSON (ASCII, as `json.dumps` writes it): sent as
    it is. pygls would unstructure the result with cattrs first, which costs more than
    building it (200 workspace symbols: 6-11 ms against 0.7 ms for `json.dumps` of dicts).
    Its bytes are made once (`data`): a references answer kept is sent again as they are."""

    _data: bytes | None = None

    @property
    def data(self) -> bytes:
        if self._data is None:
            self._data = self.encode("utf-8")
        return self._data


def encode(result: Any) -> Encoded:
    return Encoded(json.dumps(result, separators=(",", ":")))


WRITER_DRAIN_SECONDS = 5.0  # the longest `close` waits for the client to read what is queued
WRITER_QUEUE_BYTES = 32 << 20  # what may wait for the client; a message is taken whole when nothing waits
WRITER_STALL_SECONDS = 20.0  # past this long with the queue full and no message read, the client is gone


_Item = bytes | tuple[bytes, ...] | Callable[[], None]  # a message, or what to call once those before it are out


class QueuedWriter:
    """pygls's stdout writer with its writes made on a thread of its own, in the order they
    were given: the event loop no longer waits while a large answer (a heavy class's
    references: over a megabyte) goes through the pipe as fast as the client reads it. A message is
    bytes or a tuple of bytes written one after the other (a kept answer is not copied into
    a new message). After a broken pipe the rest is dropped (the reader sees the end too).

    What waits is bounded (`limit` bytes, or one message larger than that): a write that would
    pass it waits for the client to read, as a write to the pipe itself would; when no message
    is read for `stall` seconds the client is taken as gone: what waits is dropped, the log
    says so, and nothing more is written (the server's memory does not grow with answers
    nobody reads)."""

    limit = WRITER_QUEUE_BYTES
    stall = WRITER_STALL_SECONDS

    def __init__(self, out: StdoutWriter) -> None:
        self._out = out._stdout
        self._queue: queue.SimpleQueue[tuple[_Item, int] | None] = queue.SimpleQueue()
        self._idle = threading.Event()
        self._idle.set()
        self._pending = 0
        self._queued = 0  # bytes given and not yet written
        self._done = 0  # messages written (or dropped) so far
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)
        self.broken = False
        self._thread = threading.Thread(target=self._run, name="repodoc-writer", daemon=True)
        self._thread.start()

    def write(self, data: bytes | tuple[bytes, ...]) -> None:
        if self.broken:
            return
        size = len(data) if isinstance(data, bytes) else sum(map(len, data))
        with self._room:
            done, deadline = -1, 0.0
            while self._queued and self._queued + size > self.limit and not self.broken:
                if done != self._done:  # a message was read: the client is there
                    done, deadline = self._done, time.monotonic() + self.stall
                left = deadline - time.monotonic()
                if left <= 0:
                    self._give_up()
                    return
                self._room.wait(left)
            if self.broken:
                return
            self._pending += 1
            self._queued += size
            self._idle.clear()
        self._queue.put((data, size))

    def _give_up(self) -> None:
        """With the lock held: the client read nothing for `stall` seconds; drop what waits."""
        self.broken = True
        log.warning("the client read no message for %.0f s with %d bytes waiting for it; they are dropped "
                    "and nothing more is written", self.stall, self._queued)
        with contextlib.suppress(queue.Empty):
            while True:
                item = self._queue.get_nowait()
                if item is None:  # `close` asked the thread to stop: it still must
                    self._queue.put(None)
                    break
                self._pending -= 1
                self._queued -= item[1]
                if callable(item[0]):  # what waited for the writes before it
                    item[0]()
        if not self._pending:
            self._idle.set()

    def then(self, fn: Callable[[], None]) -> None:
        """Call `fn` on the writer's thread once what was given before is written (or dropped)."""
        with self._lock:
            if not self.broken:
                self._pending += 1
                self._idle.clear()
                self._queue.put((fn, 0))
                return
        fn()  # nothing more is written

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            data, size = item
            message = not callable(data)
            try:
                if callable(data):
                    data()
                elif not self.broken:
                    for piece in (data,) if isinstance(data, bytes) else data:
                        self._out.write(piece)
                    self._out.flush()
            except (OSError, ValueError) as exc:  # the client went away (or stdout was closed)
                self.broken = True
                log.warning("writing to the client failed: %s; nothing more is written", exc)
            finally:
                del data, item
                with self._room:
                    self._pending -= 1
                    self._queued -= size
                    self._done += message
                    self._room.notify_all()
                    if not self._pending:
                        self._idle.set()

    def drain(self, timeout: float = WRITER_DRAIN_SECONDS) -> bool:
        """Wait (at most `timeout` seconds) until what was given is written; whether it was."""
        return self._idle.wait(timeout)

    def close(self) -> None:
        deadline = time.monotonic() + WRITER_DRAIN_SECONDS
        self.drain(WRITER_DRAIN_SECONDS)
        self._queue.put(None)
        self._thread.join(max(0.0, deadline - time.monotonic()))
        if self._thread.is_alive():  # still blocked in a write (its lock held): the process ends anyway
            return
        with contextlib.suppress(OSError, ValueError):
            self._out.close()


class Refused(JsonRpcInvalidParams):
    """A request refused for its params (a query too long): the client gets InvalidParams and
    the log one line, not a traceback."""


class RepodocProtocol(LanguageServerProtocol):
    initialize_received = False
    requests: Requests | None = None  # set by the server: what background work steps aside for

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._steps: dict[Any, Any] = {}  # a generator request's future -> the future of its running step
        self._writes: set[asyncio.Future] = set()  # writes under way (an asynchronous writer)
        self._stepping = threading.local()  # .owner: the generator request whose step is being started

    def _run_generator(self, future: Any, *, gen: Any, result_future: Any) -> None:
        self._stepping.owner = result_future
        try:
            super()._run_generator(future, gen=gen, result_future=result_future)
        finally:
            self._stepping.owner = None

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None,
                         kwargs: Any = None) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        owner = getattr(self._stepping, "owner", None)
        step = self._request_futures.get(msg_id)
        if owner is not None and step is not None and step is not owner:
            if owner not in self._steps:
                owner.add_done_callback(lambda done: self._steps.pop(done, None))
            self._steps[owner] = step

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        request = self._request_futures.get(msg_id)
        step = self._steps.pop(request, None) if request is not None else None
        super()._handle_cancel_notification(msg_id)
        if step is not None:  # a coroutine's task: CancelledError in it (a thread's: cancelled if not started)
            step.cancel()

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        if not future.cancelled() and isinstance(future.exception(), Refused):
            self._request_futures.pop(msg_id, None)
            log.warning("request %s refused: %s", msg_id, future.exception())
            self._send_response(msg_id, error=future.exception().to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def set_writer(self, writer: Any, include_headers: bool = True) -> None:
        """Stdio's writer writes on a thread of its own (`QueuedWriter`); TCP's is asyncio's."""
        super().set_writer(QueuedWriter(writer) if type(writer) is StdoutWriter else writer, include_headers)

    def received(self, message: Any) -> None:
        """A message was read (on the reader's thread, before the event loop sees it): a request
        of `FIRST` is in flight from now until its answer is written."""
        if self.requests is not None and isinstance(message, dict) and message.get("method") in FIRST:
            msg_id = message.get("id")
            if isinstance(msg_id, int | str):
                self.requests.hold(msg_id)

    def _send_data(self, data: Any) -> None:
        try:
            self._send(data)
        finally:
            msg_id = getattr(data, "id", None)
            if (self.requests is not None and getattr(data, "method", None) is None
                    and isinstance(msg_id, int | str) and self.requests.holds(msg_id)):
                release = functools.partial(self.requests.release, msg_id)
                if isinstance(self.writer, QueuedWriter):
                    self.writer.then(release)  # once it is written
                else:
                    release()

    def _send(self, data: Any) -> None:
        result = getattr(data, "result", None)
        if not isinstance(result, Encoded) or self.writer is None:
            super()._send_data(data)
            return
        head = f'{{"id":{json.dumps(data.id)},"jsonrpc":"2.0","result":'.encode()
        body = result.data  # made once for a kept answer
        if self._include_headers:
            head = (f"Content-Length: {len(head) + len(body) + 1}\r\n"
                    f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n").encode() + head
        try:
            pieces = (head, body, b"}")
            if isinstance(self.writer, QueuedWriter):
                self.writer.write(pieces)
                return
            written = self.writer.write(b"".join(pieces))
            if inspect.isawaitable(written):
                task = asyncio.ensure_future(written)
                self._writes.add(task)
                task.add_done_callback(self._writes.discard)
        except BrokenPipeError:
            log.exception("Error sending data. BrokenPipeError")
            raise
        except Exception as error:
            log.exception("Error sending data")
            self._server._report_server_error(error, JsonRpcInternalError)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                self._send_response(data["id"], None, exc.to_response_error())
            raise

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        """pygls's, with the notification's changes applied together (`EditorWorkspace`): an edit
        batch costs what its text does, not what its text does once per edit."""
        workspace = self.workspace
        if isinstance(workspace, EditorWorkspace):
            workspace.update_text_document_all(params.text_document, params.content_changes)
        else:
            for change in params.content_changes:
                workspace.update_text_document(params.text_document, change)
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    def unparsable(self, problem: Unparsable) -> None:
        """A message that is not JSON, or nested deeper than the parser goes: JSON-RPC's Parse error
        (its id cannot be known: null), one line in the log, and the next message is read."""
        log.warning("a message from the client could not be read: %s", problem.why)
        error = JsonRpcParseError(problem.why)  # a dict: pygls's own messages leave out a null id
        self._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": error.code, "message": error.message}})

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        if method_name == types.INITIALIZE:
            self.initialize_received = True
        elif not self.initialize_received:
            self._send_response(msg_id, None, JsonRpcServerNotInitialized().to_response_error())
            return
        super()._handle_request(msg_id, method_name, params)


class Unparsable:
    """A message body that `decode` could not read, and why."""

    def __init__(self, exc: Exception) -> None:
        self.why = ("nested too deep" if isinstance(exc, RecursionError)
                    else f"not JSON ({str(exc)[:200]})")


def decode(body: bytes) -> Any:
    """A message body as JSON, or `Unparsable`. `json.loads` raises RecursionError, not ValueError,
    for arrays or objects nested past the interpreter's recursion limit (1,000 `[`: the reader
    thread ended, and the server with it)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        return Unparsable(exc)


def read_message(stdin: BinaryIO) -> bytes | None:
    """The body of the next message on `stdin` (None: the input ended), as pygls reads it:
    header lines up to an empty one, the body as long as Content-Length says."""
    length = 0
    while True:
        header = stdin.readline()
        if not header:
            return None
        if not length and (match := _CONTENT_LENGTH.fullmatch(header)):
            length = int(match.group(1))
        elif length and not header.strip():
            body = stdin.read(length)
            return body if len(body) == length else None


async def run_stdio(stop: threading.Event, stdin: BinaryIO, protocol: RepodocProtocol,
                    error_handler: Callable[[Exception, type[JsonRpcException]], Any]) -> None:
    """pygls's `run_async` with stdin read by a thread of its own, a whole message at a time,
    decoded there and handed to the event loop at once (`protocol.received` first)."""
    loop = asyncio.get_running_loop()
    messages: asyncio.Queue[Any] = asyncio.Queue()
    ended = object()

    def read() -> None:
        try:
            while not stop.is_set():
                body = read_message(stdin)
                if body is None:
                    break
                message = decode(body)
                if not isinstance(message, Unparsable):
                    protocol.received(message)
                loop.call_soon_threadsafe(messages.put_nowait, message)
        except (OSError, ValueError) as exc:  # stdin closed under it
            log.warning("reading from the client failed: %s", exc)
        finally:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(messages.put_nowait, ended)

    # A daemon: the process ends (os._exit) while it waits for input that will not come.
    threading.Thread(target=read, name="repodoc-reader", daemon=True).start()
    while not stop.is_set():
        message = await messages.get()
        if message is ended:
            break
        try:
            if isinstance(message, Unparsable):
                protocol.unparsable(message)
                continue
            protocol.handle_message(protocol.structure_message(message) if isinstance(message, dict) else message)
        except Exception as exc:
            log.exception("Unable to handle message")
            error_handler(exc, JsonRpcException)
