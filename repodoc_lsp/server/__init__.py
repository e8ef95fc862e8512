"""The repodoc language server (pygls 2): one module per feature.

`run()` is what `repodoc serve` and `repodoc-lsp` call.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys


def run(*, tcp: str | None = None, log_file: str | None = None, verbose: bool = False,
        token_file: str | None = None) -> int:
    """Serve on stdio (default) or on a loopback `HOST:PORT` with a token (see `tcp`); returns
    the exit code of the LSP `exit`, 2 for a bad address or token."""
    from repodoc_lsp.server.app import create_server

    level = logging.DEBUG if verbose else logging.WARNING
    if log_file:
        logging.basicConfig(filename=log_file, level=level, format="%(asctime)s %(name)s %(message)s")
    else:
        logging.basicConfig(stream=sys.stderr, level=level, format="repodoc-lsp: %(message)s")
    server = create_server()
    # A request's thread waits at most this long for the interpreter lock that a busy
    # background thread holds (default 5 ms, paid up to three times per hover).
    sys.setswitchinterval(0.001)
    # After indexing the heap is frozen (state.Root), so Python's rule of collecting the oldest
    # generation only when it grew by a quarter no longer holds it back: full collections of
    # jedi's caches (40-50 ms, each stalling a request) came every few seconds under load.
    # A tenth as often; cycles are still collected.
    gc.set_threshold(700, 10, 100)
    code = 1

    def interrupted(*_: object) -> None:
        # asyncio's own handler would cancel the main task while pygls' reader thread still
        # waits for input, so the first Ctrl-C in a terminal did nothing: end now instead.
        server.stop_background()
        os._exit(130)

    signal.signal(signal.SIGINT, interrupted)
    try:
        if tcp:
            from repodoc_lsp.server.tcp import serve_tcp

            if serve_tcp(server, tcp, token_file) == 2:
                return 2
        else:
            server.start_io()  # returns after the LSP `exit` notification (or the end of input)
        # The specification's exit code: 0 when `shutdown` came before `exit`, else 1.
        code = 0 if getattr(server.protocol, "_shutdown", False) else 1
    except KeyboardInterrupt:
        code = 130
    finally:
        server.stop_background()
    # Worker threads (jedi, indexing) must not delay the exit the client waits for.
    os._exit(code)
