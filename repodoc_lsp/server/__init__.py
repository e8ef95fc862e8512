"""The repodoc language server (pygls 2): one module per feature.

`run()` is what `repodoc serve` and `repodoc-lsp` call.
"""

from __future__ import annotations

import logging
import signal
import sys


def run(*, tcp: str | None = None, log_file: str | None = None, verbose: bool = False,
        token_file: str | None = None) -> int:
    """Serve on stdio (default) or on a loopback `HOST:PORT` with a token (see `tcp`); returns
    the exit code of the LSP `exit`, 2 for a bad address or token."""
    from repodoc_lsp.exits import end_now
    from repodoc_lsp.pipeline.runtime import enter_server
    from repodoc_lsp.server.app import create_server

    level = logging.DEBUG if verbose else logging.WARNING
    if log_file:
        logging.basicConfig(filename=log_file, level=level, format="%(asctime)s %(name)s %(message)s")
    else:
        logging.basicConfig(stream=sys.stderr, level=level, format="repodoc-lsp: %(message)s")
    server = create_server(enter_server())
    code = 1

    def interrupted(*_: object) -> None:
        # asyncio's own handler would cancel the main task while pygls' reader thread still
        # waits for input, so the first Ctrl-C in a terminal did nothing: end now instead.
        server.stop_background()
        end_now(130)

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
        drain = getattr(server.protocol.writer, "drain", None)
        if drain is not None:  # what is queued for the client (stdio's writer thread), with a deadline
            drain()
    # Worker threads (jedi, indexing) must not delay the exit the client waits for.
    end_now(code)
