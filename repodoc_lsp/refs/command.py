"""`repodoc check`: stale references (and stale pages) as `file:line:col: message` or GitHub annotations."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from repodoc_lsp.config import Settings
from repodoc_lsp.console import say
from repodoc_lsp.exits import EXIT_BUSY, EXIT_INTERRUPTED, EXIT_OK, EXIT_OUTPUT, EXIT_STALE, EXIT_USAGE, EXIT_WORKERS
from repodoc_lsp.words import plural

if TYPE_CHECKING:
    from repodoc_lsp.refs.scope import Kept
    from repodoc_lsp.store.workspace import Workspace


def _escape(value: str, *, prop: bool = False) -> str:
    """GitHub's workflow-command escaping (properties also escape `:` and `,`)."""
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return value.replace(":", "%3A").replace(",", "%2C") if prop else value


def _line(fmt: str, path: str, line: int, col: int, message: str) -> str:
    if fmt == "github":
        where = f"file={_escape(path, prop=True)}" + (f",line={line},col={col}" if line else "")
        return f"::warning {where}::{_escape(message)}"
    if path[:1].isspace() or path.startswith(":"):
        path = f"./{path}"  # a line of its own, not one the runner reads as a command
    return f"{path}:{line}:{col}: {message}" if line else f"{path}: {message}"


def _print(fmt: str, path: str, line: int, col: int, message: str) -> None:
    text = _line(fmt, path, line, col, message)
    if fmt == "github":
        print(text)  # repodoc's own annotation, its values escaped above
    else:
        say(text)


def run_check(args: argparse.Namespace, settings: Settings | None) -> int:
    if settings is None:
        return EXIT_USAGE
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return _run(args, settings)
    except KeyboardInterrupt:
        say("repodoc: interrupted", sys.stderr)
        return EXIT_INTERRUPTED


def _scanned(args: argparse.Namespace, root: Path, ws: Workspace, kept: Kept) -> list[tuple[str, str]] | int:
    """Scan the workspace and, unless `--no-pages`, check its pages: the stale ones, or the exit code of a
    failure (the pages' modules are imported only then)."""
    from repodoc_lsp.pipeline.pool import WorkersLost

    try:
        if args.no_pages:
            ws.scan(imports=kept.imports(), seen=kept.seen())
            return []
        return _stale_pages(root, ws)
    except WorkersLost as exc:
        say(f"repodoc: error: {exc}; run again", sys.stderr)
        return EXIT_WORKERS


def _stale_pages(root: Path, ws: Workspace) -> list[tuple[str, str]] | int:
    from repodoc_lsp.output.writer import OutputBusy, OutputError
    from repodoc_lsp.pipeline.generate import generate

    try:
        summary = generate(root, ws, check=True)
    except OutputBusy as exc:
        say(f"repodoc: error: {exc}", sys.stderr)
        return EXIT_BUSY
    except OutputError as exc:
        say(f"repodoc: error: {exc}", sys.stderr)
        return EXIT_OUTPUT
    stale = [(str(Path(summary.out, s.page)), f"stale page: {s.reason}") for s in summary.stale]
    return stale + [(str(Path(summary.out, c.page)), f"conflict: {c.reason}") for c in summary.conflicts]


def _run(args: argparse.Namespace, settings: Settings) -> int:
    from repodoc_lsp.config import cache_dir
    from repodoc_lsp.pipeline.runtime import enter_cli
    from repodoc_lsp.refs.check import check_workspace
    from repodoc_lsp.refs.git import GitError, changed_files, old_text
    from repodoc_lsp.refs.scope import Kept
    from repodoc_lsp.store.names import table_path
    from repodoc_lsp.store.workspace import Workspace

    runtime = enter_cli()
    started = time.perf_counter()
    root = Path(args.root)
    changed = None
    if args.since or args.staged:
        try:
            changed = changed_files(root, since=args.since, staged=args.staged)
        except GitError as exc:
            say(f"repodoc: error: {exc}", sys.stderr)
            return EXIT_USAGE
    ws = Workspace(root, settings, use_cache=not args.no_cache, runtime=runtime)
    if ws.cache.problem:
        say(f"repodoc: warning: {ws.cache.problem}", sys.stderr)
    kept = Kept(None if args.no_cache else table_path(cache_dir(settings), ws.root))  # what the last check read
    stale_pages = _scanned(args, root, ws, kept)
    if isinstance(stale_pages, int):
        return stale_pages
    old_sources = None
    if changed is not None:  # what the change removed is looked for in every doc, in every form
        base = "HEAD" if args.staged else args.since
        old_sources = {rel: text for rel in sorted(changed) if rel.endswith(".py")
                       and (text := old_text(root, base, rel)) is not None}
    report = check_workspace(ws, only=changed, old_sources=old_sources,
                             since="HEAD" if args.staged else args.since or "", kept=kept)
    shown = os.path.relpath(ws.root)
    shown = "" if shown == "." else shown
    for s in report.stale:
        path = os.path.join(shown, s.rel) if shown else s.rel
        _print(args.format, path, s.line, s.col + 1, s.describe())
    for page, reason in stale_pages:
        _print(args.format, os.path.relpath(page), 0, 0, reason)
    scope = f", {plural(len(changed), 'file')} changed" if changed is not None else ""
    pages = "" if args.no_pages else f", {plural(len(stale_pages), 'page')} stale"
    say(f"repodoc: {plural(report.references, 'reference')} in {plural(report.files, 'file')} checked{scope}, "
        f"{len(report.stale)} stale{pages}, {time.perf_counter() - started:.2f} s",
        sys.stderr if args.format == "github" else sys.stdout)
    return EXIT_STALE if report.stale or stale_pages else EXIT_OK
