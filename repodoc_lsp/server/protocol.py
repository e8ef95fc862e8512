"""pygls's protocol with what the specification asks for and pygls does not give: a request
whose params cannot be decoded gets an InvalidParams response (pygls drops it, so the client
would wait forever), a request before `initialize` gets ServerNotInitialized, and
`$/cancelRequest` of a command reaches the command (pygls runs `workspace/executeCommand` as a
generator whose step, the command's coroutine, is a task of its own: it answered
RequestCancelled and let the command run on, so a cancelled `repodoc.generate` wrote the tree)."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import threading
from typing import Any

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger(__name__)


class Encoded(str):
    """A request's result already encoded as JSON (ASCII, as `json.dumps` writes it): sent as
    it is. pygls would unstructure the result with cattrs first, which costs more than
    building it (200 workspace symbols: 6-11 ms against 0.7 ms for `json.dumps` of dicts)."""


def encode(result: Any) -> Encoded:
    return Encoded(json.dumps(result, separators=(",", ":")))


class Refused(JsonRpcInvalidParams):
    """A request refused for its params (a query too long): the client gets InvalidParams and
    the log one line, not a traceback."""


class RepodocProtocol(LanguageServerProtocol):
    initialize_received = False

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

    def _send_data(self, data: Any) -> None:
        result = getattr(data, "result", None)
        if not isinstance(result, Encoded) or self.writer is None:
            super()._send_data(data)
            return
        body = f'{{"id":{json.dumps(data.id)},"jsonrpc":"2.0","result":{result}}}'
        if self._include_headers:
            body = (f"Content-Length: {len(body)}\r\n"
                    f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n{body}")
        try:
            written = self.writer.write(body.encode(self.CHARSET))
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

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        if method_name == types.INITIALIZE:
            self.initialize_received = True
        elif not self.initialize_received:
            self._send_response(msg_id, None, JsonRpcServerNotInitialized().to_response_error())
            return
        super()._handle_request(msg_id, method_name, params)
