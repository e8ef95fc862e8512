"""The server with every feature registered: `FEATURES` lists the modules that register
handlers on `RepodocServer` (each imports the server type; nothing imports this module but
`server.run`)."""

from __future__ import annotations

from repodoc_lsp.pipeline.runtime import SERVER, Runtime
from repodoc_lsp.server import (
    codelens,
    commands,
    hover,
    lifecycle,
    links,
    on_save,
    ref_diagnostics,
    references,
    symbols,
)
from repodoc_lsp.server.server import RepodocServer

FEATURES = (lifecycle, hover, symbols, commands, on_save, references, codelens, links, ref_diagnostics)


def create_server(runtime: Runtime = SERVER) -> RepodocServer:
    """The server; `runtime`: the process policy its entry point chose (`runtime.enter_server`)."""
    server = RepodocServer(runtime)
    for module in FEATURES:
        module.register(server)
    return server
