"""pygls's protocol with what the specification asks for and pygls does not give: a request
whose params cannot be decoded gets an InvalidParams response (pygls drops it, so the client
would wait forever), a request before `initialize` gets ServerNotInitialized, and
`$/cancelRequest` of a command reaches the command (pygls runs `workspace/executeCommand` as a
generator whose step, the command's coroutine, is a task of its own: it answered
RequestCancelled and let the command run on, so a cancelled `repodoc.generate` wrote the tree)."""

from __future__ import annotations

import threading
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcServerNotInitialized
from pygls.protocol import LanguageServerProtocol


class RepodocProtocol(LanguageServerProtocol):
    initialize_received = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._steps: dict[Any, Any] = {}  # a generator request's future -> the future of its running step
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
