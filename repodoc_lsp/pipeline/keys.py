"""Page keys: what every page of a run is made with (`run_stamp`), a page's key (a digest of that
stamp and of the inputs its view reads: `keyed`), and the inputs stamp of a whole tree (`inputs_stamp`:
a run whose inputs are the last complete run's plans nothing)."""

from __future__ import annotations

import hashlib
import marshal
import os

from repodoc_lsp import __version__
from repodoc_lsp.config import page_settings
from repodoc_lsp.render.pages import Page
from repodoc_lsp.render.stamp import render_stamp
from repodoc_lsp.store.workspace import Workspace


def _h(*parts: object) -> str:
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(repr(p).encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def _templates_stamp(folder: str) -> str:
    if not folder:
        return ""
    try:
        return _h(sorted((e.name, e.stat().st_mtime_ns, e.stat().st_size) for e in os.scandir(folder)))
    except OSError:
        return "missing"


def inputs_stamp(ws: Workspace) -> str:
    """A digest of everything the whole tree is made of: each file's content, the folders (one holding
    only skipped files has pages too), the settings pages read, the project, the paths, the templates and this
    version. When it equals the one a complete run recorded in the manifest, every planned page would
    have the key it has there."""
    return _h(run_stamp(ws), page_settings(ws.settings), sorted(ws.digests.items()), sorted(ws.folders))


def run_stamp(ws: Workspace) -> str:
    """What every page of a run is made with besides its view: this version, the renderer, the
    project, the embedding limit, the paths and the person's templates."""
    return _h(__version__, render_stamp(), ws.project, ws.settings.embed_source_max_bytes, ws.root.as_posix(),
              ws.out.as_posix(), _templates_stamp(ws.settings.templates))


def keyed(page: Page, base: str, inputs: object) -> Page:
    """`page` with its key: the one it was planned with, else the digest of the run's stamp
    (`base`) and the inputs its view reads (the plan, the render in this process and the parts
    sent to render workers key a page by this one rule)."""
    return page if page.key else Page(page.kind, page.subject, inputs_key(base, page.kind, page.subject, inputs))


def inputs_key(*parts: object) -> str:
    """A digest of plain data (str, int, None, tuples, lists and dicts of them: a page's inputs) as
    `marshal` writes it in version 2, which refers back to nothing: the same bytes for equal data,
    whatever of it is shared or interned (the parent's gathered inputs, a worker's unpickled ones).
    Anything else is a ValueError."""
    return hashlib.blake2b(marshal.dumps(parts, 2), digest_size=16).hexdigest()  # type: ignore[arg-type]
