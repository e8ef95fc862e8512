"""pygls's protocol with two answers the specification asks for and pygls does not give:
a request whose params cannot be decoded gets an InvalidParams response (pygls drops it,
so the client would wait forever), and a request before `initialize` gets ServerNotInitialized."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcServerNotInitialized
from pygls.protocol import LanguageServerProtocol


class RepodocProtocol(LanguageServerProtocol):
    initialize_received = False

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
