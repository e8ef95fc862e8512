"""workspace/executeCommand: repodoc.generate, repodoc.generateFile, repodoc.pagesFor, repodoc.status."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from repodoc_lsp.server import failures
from repodoc_lsp.server.convert import path_of, uri_of
from repodoc_lsp.server.server import RepodocServer  # at run time: pygls resolves a command's annotations
from repodoc_lsp.words import plural

if TYPE_CHECKING:
    from repodoc_lsp.server.state import Root

GENERATE, GENERATE_FILE, PAGES_FOR = "repodoc.generate", "repodoc.generateFile", "repodoc.pagesFor"
STATUS = "repodoc.status"


def _file_argument(ls: RepodocServer, args: tuple[Any, ...]) -> tuple[Root, Path]:
    uri = args[0] if args else None
    if isinstance(uri, dict):
        uri = uri.get("uri")
    path = path_of(uri) if isinstance(uri, str) else None
    if path is None:
        raise JsonRpcInvalidParams("expected one argument: the URI of a file")
    root = ls.root_for(path)
    if root is None:
        raise JsonRpcInvalidParams(f"{path} is not in a workspace folder")
    return root, path


def _merge(summaries: list[dict]) -> dict:
    if len(summaries) == 1:
        return summaries[0]
    merged: dict[str, Any] = {"roots": summaries}
    for key in ("files", "analysed", "cached", "written", "unchanged", "removed"):
        merged[key] = sum(s[key] for s in summaries)
    for key in ("skipped", "conflicts", "errors", "stale", "writtenPages", "removedPages"):
        merged[key] = [x for s in summaries for x in s[key]]
    merged["seconds"] = round(sum(s["seconds"] for s in summaries), 3)
    merged["cancelled"] = any(s["cancelled"] for s in summaries)
    return merged


def register(server: RepodocServer) -> None:
    @server.command(GENERATE)
    async def generate(ls: RepodocServer, *args: Any) -> dict:
        """Write the whole tree of every root (or of `[{"root": uri}]`), with cancellable progress;
        `[{"force": true}]` overwrites pages a person edited, after copying each to PAGE.orig."""
        roots = list(ls.roots.values())
        options = args[0] if args and isinstance(args[0], dict) else {}
        force = options.get("force", False)
        if not isinstance(force, bool):
            raise JsonRpcInvalidParams(f'"force" must be true or false, not {force!r:.40}')
        if options.get("root"):
            path = path_of(options["root"])
            root = ls.roots.get(path.resolve()) if path else None
            if root is None:
                raise JsonRpcInvalidParams(f"not a workspace folder: {options['root']}")
            roots = [root]
        if not roots:
            raise JsonRpcInvalidParams("no workspace folder is open")
        token = await ls.begin_progress("RepoDoc: generating", cancellable=True)
        cancel = threading.Event()
        progress = ls.thread_progress(token, cancel=cancel) if token else None
        summaries = []
        try:
            for root in roots:
                summary = await asyncio.wrap_future(root.submit(root.generate, progress, cancel, force=force))
                failures.report(ls, "generate", summary, always=True)
                summaries.append(summary.as_dict())
                if summary.cancelled:
                    break
        except asyncio.CancelledError:  # $/cancelRequest: stop the worker between pages too
            cancel.set()
            raise
        finally:
            if token:
                done = _merge(summaries) if summaries else None
                message = "cancelled" if cancel.is_set() or not done else \
                    f"{plural(done['written'], 'page')} written, {done['unchanged']} unchanged, " \
                    f"{done['removed']} removed"
                ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        return _merge(summaries)

    @server.command(GENERATE_FILE)
    async def generate_file(ls: RepodocServer, *args: Any) -> dict:
        root, path = _file_argument(ls, args)
        rel = root.rel(path)
        if rel not in root.ws.facts and not root.ws.filter.is_input(path):
            raise JsonRpcInvalidParams(f"{rel} is not an input (excluded, ignored or in the output folder)")
        summary = await asyncio.wrap_future(root.submit(root.regenerate, [rel]))
        written = [str(root.ws.out / p) for p in summary.written] if summary else []
        return {"written": written, "unchanged": summary.unchanged if summary else 0}

    @server.command(PAGES_FOR)
    def pages_for(ls: RepodocServer, *args: Any) -> dict:
        root, path = _file_argument(ls, args)
        docs, kw = root.pages_for(root.rel(path))
        return {"docs": str(docs), "kw": str(kw), "docsUri": uri_of(docs), "kwUri": uri_of(kw),
                "exists": docs.exists() and kw.exists()}

    @server.command(STATUS)
    async def status(ls: RepodocServer, *args: Any) -> dict:
        """Each root: its folder and output folder, files indexed (and skipped), pages in its tree,
        the last run that wrote pages (kind, when, counts, failure), errors, and whether hovers are
        warm (`hover.warm`)."""
        roots = list(ls.roots.values())
        return {"roots": [await asyncio.to_thread(root.status) for root in roots]}  # reads the manifest
