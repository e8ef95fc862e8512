"""`repodoc`: generate the docs tree (for CI and pre-commit) or serve the language server."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repodoc_lsp import __version__
from repodoc_lsp.config import ConfigError, Settings, load_settings, output_notice, output_problem
from repodoc_lsp.console import json_text, print_warnings, say
from repodoc_lsp.exits import (
    EXIT_BROKEN_PIPE,
    EXIT_BUSY,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_STALE,
    EXIT_USAGE,
    EXIT_WORKERS,
    end_now,
    interrupted_early,
)
from repodoc_lsp.words import plural

if TYPE_CHECKING:
    from repodoc_lsp.pipeline.generate import Summary
    from repodoc_lsp.store.workspace import ProgressFn, Workspace


EPILOG = """\
exit codes:
  0    success (conflicts with files repodoc did not write are reported, not fatal)
  1    --check: the tree on disk is not what generation would write
  2    bad command line, settings or workspace folder
  3    the output folder, or a page in it, cannot be written (disk full, permissions)
       or rendered; every other page is written
  4    worker processes were killed three times (out of memory?) or froze; pages written are whole
  5    another run kept writing the output folder longer than REPODOC_LOCK_TIMEOUT (300 s)
  130  interrupted
  141  the reader of the output went away (`repodoc generate --json | head`)

settings are read from [tool.repodoc] in ROOT/pyproject.toml; flags override them.
templates, cache-dir and python-path are never taken from the workspace (README "Trust"):
use the flags or REPODOC_TEMPLATES, REPODOC_CACHE_DIR, REPODOC_PYTHON_PATH.
the output folder must be inside ROOT unless --out names it.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="repodoc", description="Keep a repository's Markdown documentation alive.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"repodoc-lsp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    gen = sub.add_parser("generate", help="write the documentation tree",
                         formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
                         description="Write a _docs.md and a _kw.md per source file (and Markdown document "
                                     "with headings or prose) and an index.md and a doc.md per folder of ROOT "
                                     "into the output folder; other files are a line of their folder's index.md.")
    gen.add_argument("root", nargs="?", default=".", help="workspace folder (default: .)")
    gen.add_argument("--out", metavar="DIR", help="output folder (default: ROOT/docs, or "
                     "ROOT/repodoc-docs when docs/ is the project's own documentation)")
    gen.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes (default: cores)")
    gen.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 and list stale pages if the tree is out of date")
    gen.add_argument("--force", action="store_true",
                     help="overwrite (or delete) generated pages a person edited, after copying each to PAGE.orig")
    gen.add_argument("--include", action="append", metavar="PATTERN", help="only these files (repeatable)")
    gen.add_argument("--exclude", action="append", metavar="PATTERN", help="leave these out (repeatable)")
    gen.add_argument("--templates", metavar="DIR",
                     help="folder of template overrides, relative to ROOT (rendered in a sandbox)")
    gen.add_argument("--cache-dir", metavar="DIR", help="analysis cache folder (default: the user cache folder)")
    gen.add_argument("--embed-source-max-bytes", type=int, metavar="N",
                     help="embed sources up to N bytes (0: never)")
    gen.add_argument("--project-name", metavar="NAME", help="project name shown in pages")
    gen.add_argument("--no-cache", action="store_true", help="analyse every file again")
    gen.add_argument("--json", action="store_true", help="print the summary as JSON")
    gen.add_argument("--verbose", "-v", action="store_true", help="list every skipped file")
    gen.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    chk = sub.add_parser("check", help="stale references in hand-written docs, and stale pages",
                         description="Report references in Markdown, reST, text files and docstrings that no "
                                     "longer resolve (file:line:col: message), and pages that generation "
                                     "would change; exit 1 if there are any.")
    chk.add_argument("root", nargs="?", default=".", help="workspace folder (default: .)")
    chk.add_argument("--format", choices=("text", "github"), default="text",
                     help="github: GitHub Actions ::warning annotations")
    changes = chk.add_mutually_exclusive_group()
    changes.add_argument("--since", metavar="REF", help="only what changed since REF (git diff REF)")
    changes.add_argument("--staged", action="store_true", help="only what is staged (git diff --cached)")
    chk.add_argument("--no-pages", action="store_true", help="references only, not the generated pages")
    chk.add_argument("--out", metavar="DIR", help="output folder of the pages (default: as generate "
                     "chooses)")
    chk.add_argument("--cache-dir", metavar="DIR", help="analysis cache folder (default: the user cache folder)")
    chk.add_argument("--no-cache", action="store_true", help="analyse every file again")
    chk.set_defaults(jobs=None, include=None, exclude=None, templates=None, embed_source_max_bytes=None,
                     project_name=None)
    srv = sub.add_parser("serve", help="run the language server (stdio by default)")
    srv.add_argument("--stdio", action="store_true", help="use stdio (the default)")
    srv.add_argument("--tcp", metavar="HOST:PORT",
                     help="listen on a loopback address instead of stdio; clients must send the token "
                          "as initializationOptions.token")
    srv.add_argument("--token-file", metavar="FILE",
                     help="--tcp: read the token from FILE (mode 600); default: $REPODOC_TCP_TOKEN, "
                          "else a new token printed on stderr")
    srv.add_argument("--log-file", metavar="FILE", help="write the server log to FILE")
    srv.add_argument("--verbose", "-v", action="store_true", help="debug logging")
    mcp = sub.add_parser("mcp", help="serve the workspace's docs to coding agents (Model Context Protocol, stdio)",
                         description="An MCP server on stdio: search_symbols, used_by, get_page, outline and "
                                     "check_references over the language server's index of ROOT, and the "
                                     "pages as resources. Needs the mcp extra: pip install 'repodoc-lsp[mcp]'.")
    mcp.add_argument("root", nargs="?", default=".", help="workspace folder (default: .)")
    mcp.add_argument("--poll", type=float, default=1.0, metavar="SECONDS",
                     help="look for files changed on disk before a request at most this often (default: 1)")
    mcp.add_argument("--cache-dir", metavar="DIR", help="analysis cache folder (default: the user cache folder)")
    mcp.set_defaults(out=None, jobs=None, include=None, exclude=None, templates=None, embed_source_max_bytes=None,
                     project_name=None)
    _register_shards(sub, gen)
    return parser


def _register_shards(sub: Any, gen: argparse.ArgumentParser) -> None:
    """`repodoc analyze`, `repodoc merge`, `generate --facts/--pages` (shard/command.py)."""
    from repodoc_lsp.shard.command import register

    register(sub, gen)


# The workspace of the program's `repodoc generate`, held until the process ends (`main`).
_HELD: list[Workspace] = []


def _err(message: str) -> None:
    say(f"repodoc: error: {message}", sys.stderr)


def main(argv: list[str] | None = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()  # a closed pipe shows here, not in the flush at exit
    except BrokenPipeError:
        # The reader went away (`repodoc generate --json | head`): no traceback. Python's recipe
        # (the `signal` module's "Note on SIGPIPE"): stdout to /dev/null, so the flush at exit is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    if _HELD and argv is None:
        # `repodoc generate` has finished: its workspace (facts, symbol graph: hundreds of MB on a large
        # repository) is not freed object by object at the end, with every other process ended and
        # a core idle (bench/README.md has the figure). Output is flushed, pages are written whole, and the cache,
        # committed as it went, is closed here.
        for ws in _HELD:
            ws.cache.close()
        end_now(code)
    if code == EXIT_INTERRUPTED and argv is None:  # the program itself, not a call from Python
        # End at once: a worker killed while it sent a result can leave concurrent.futures'
        # manager thread blocked on the half-sent message, and Python joins that thread at exit
        # (the CLI hung after saying "interrupted while analysing", 1 interrupt in 10 or so).
        # Pages are written whole and the cache commits as it goes: nothing is lost.
        end_now(code)
    return code


def _main(argv: list[str] | None) -> int:
    # Ctrl-C while the modules load: a clear line, not a traceback (each command then sets its own)
    signal.signal(signal.SIGINT, interrupted_early)
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    if args.command in ("generate", "check"):
        print_warnings()
    if args.command == "generate":
        return _generate(args, program=argv is None)
    if args.command == "check":
        from repodoc_lsp.refs.command import run_check

        return run_check(args, _settings(Path(args.root), args, writes=not args.no_pages))
    if args.command == "mcp":
        return _mcp(args)
    if args.command in ("analyze", "merge", "graph"):
        from repodoc_lsp.shard.command import run_analyze, run_graph, run_merge

        if args.command == "graph":
            return run_graph(args, _settings(Path(args.root), args, writes=False))
        return run_analyze(args, _settings(Path(args.root), args, writes=False)) if args.command == "analyze" \
            else run_merge(args)
    _parser().print_help()
    return EXIT_USAGE


def serve_main() -> int:
    """Entry point of the `repodoc-lsp` command: `repodoc serve` with the same flags."""
    return main(["serve", *sys.argv[1:]])


def _serve(args: argparse.Namespace) -> int:
    from repodoc_lsp.server import run  # Ctrl-C meanwhile: interrupted_early

    return run(tcp=args.tcp, log_file=args.log_file, verbose=args.verbose, token_file=args.token_file)


def _mcp(args: argparse.Namespace) -> int:
    settings = _settings(Path(args.root), args, writes=False)
    if settings is None:
        return EXIT_USAGE
    import importlib.util

    if importlib.util.find_spec("mcp") is None:  # the SDK is an extra (imported once the scan started)
        _err("the MCP SDK is not installed; install it with: pip install 'repodoc-lsp[mcp]'")
        return EXIT_USAGE
    from repodoc_lsp.mcp.server import serve

    return serve(Path(args.root), settings, poll=args.poll)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "output": args.out, "jobs": args.jobs, "include": args.include, "exclude": args.exclude,
        "templates": args.templates, "embed_source_max_bytes": args.embed_source_max_bytes,
        "project_name": args.project_name,
        "cache_dir": str(Path(args.cache_dir).resolve()) if args.cache_dir else None,
    }


def _settings(root: Path, args: argparse.Namespace, *, writes: bool = True) -> Settings | None:
    """The settings of ROOT with the flags over them; None (after one line saying why) when ROOT,
    a setting or (writes=True: pages are written or compared) the output folder is refused."""
    from repodoc_lsp.server.roots import refusal

    if not root.is_dir():
        _err(f"{root}: not a folder")
        return None
    if why := refusal(root):  # `/`, the home folder, a folder inside an output folder
        _err(f"{why}: not a workspace to document")
        return None
    try:
        settings, problems = load_settings(root, _overrides(args), strict=True)
    except ConfigError as exc:
        _err(str(exc))
        return None
    for problem in problems:  # settings refused (README "Trust"): their defaults apply
        say(f"repodoc: warning: {problem}; using the default", sys.stderr)
    if args.out:  # a flag is relative to the working folder, a setting to the root
        settings = settings.replace(output=str(Path(args.out).resolve()))
    key = "--out" if args.out else "output" if settings.output_chosen or settings.output == Settings().output \
        else f"{root / 'pyproject.toml'} [tool.repodoc] output"
    refused = output_problem(root, settings.output, key=key, may_leave=bool(args.out)) if writes else ""
    if refused:
        _err(refused)
        return None
    if writes and (notice := output_notice(root, settings)):  # `docs/` is the project's own docs
        say(notice, sys.stderr)
    if settings.templates and not Path(settings.templates).is_dir():
        _err(f"templates: {settings.templates}: not a folder")
        return None
    return settings


def _generate(args: argparse.Namespace, program: bool = False) -> int:
    from repodoc_lsp.config import cache_dir
    from repodoc_lsp.output.writer import OutputBusy, OutputError
    from repodoc_lsp.pipeline.generate import generate
    from repodoc_lsp.pipeline.lastrun import state_path
    from repodoc_lsp.pipeline.pool import WorkersLost
    from repodoc_lsp.pipeline.runtime import enter_cli
    from repodoc_lsp.render.environment import TemplateFailure
    from repodoc_lsp.render.pages import Renderer
    from repodoc_lsp.shard.facts_file import ShardError
    from repodoc_lsp.store.workspace import Workspace

    if args.pages and args.check:
        _err("--pages and --check: check the merged tree (repodoc generate --facts FILE... --check)")
        return EXIT_USAGE
    if args.graph and not (args.pages and args.facts):
        _err("--graph is the answers of page shares: give it with --facts FILE... --pages K/M")
        return EXIT_USAGE
    runtime = enter_cli()

    root = Path(args.root)
    settings = _settings(root, args)
    if settings is None:
        return EXIT_USAGE
    cancel = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.set())
    reached: dict[str, tuple[int, int]] = {}  # phase -> (done, total): what an interrupted run did

    def run(show: ProgressFn | None) -> Summary:
        def progress(phase: str, done: int, total: int, where: str) -> None:
            reached[phase] = (done, total)
            if show is not None:
                show(phase, done, total, where)

        if args.facts or args.pages:  # shard/pages.py
            from repodoc_lsp.shard.pages import generate_sharded

            return generate_sharded(ws, facts=args.facts or (), share=args.pages, check=args.check, force=args.force,
                                    jobs=args.jobs, progress=progress, cancel=cancel,
                                    answers=Path(args.graph) if args.graph else None, renderer=theirs)
        return generate(root, ws, check=args.check, force=args.force, jobs=args.jobs, progress=progress, cancel=cancel,
                        renderer=theirs,
                        state=None if args.no_cache else state_path(cache_dir(settings), ws.root, ws.out))

    try:
        ws = Workspace(root, settings, use_cache=not args.no_cache, runtime=runtime, incremental=False)
        if program:
            _HELD.append(ws)
        try:
            # a person's templates compiled before the scan: one that does not compile is said at once
            theirs = Renderer(settings.templates) if settings.templates else None
            bar = not args.quiet and not args.json and sys.stderr.isatty()
            summary = _with_progress(run) if bar else run(None)
        except OutputBusy as exc:
            _err(str(exc))
            return EXIT_BUSY
        except OutputError as exc:
            _err(str(exc))
            return EXIT_OUTPUT
        except WorkersLost as exc:
            _err(f"{exc}; run again (with fewer --jobs if memory is short)")
            return EXIT_WORKERS
        except TemplateFailure as exc:  # the person's templates: nothing more is written
            _err(f"{exc} (templates: {settings.templates})")
            return EXIT_USAGE
        except ShardError as exc:  # facts files of another version or tree, missing, damaged
            _err(f"{exc}; no page written")
            return EXIT_USAGE
    finally:
        signal.signal(signal.SIGINT, previous)
    if ws.cache.problem:  # known once the cache was first used (a locked one is skipped)
        say(f"repodoc: warning: {ws.cache.problem}", sys.stderr)
    if settings.site == "mkdocs" and not args.check and not summary.cancelled:
        from repodoc_lsp.output.site import write_site

        for warning in write_site(ws.root, ws.out, ws.project, ws.folders):
            say(f"repodoc: warning: {warning}", sys.stderr)
    return _report(summary, args, reached)


def _with_progress(run: Any) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description:<9}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("{task.fields[where]}"), transient=True,
                  console=_stderr_console(), auto_refresh=False) as bar:  # no thread: workers fork
        tasks: dict[str, Any] = {}
        last = [0.0]

        def progress(phase: str, done: int, total: int, where: str) -> None:
            if phase not in tasks:
                label = "analysing" if phase == "analyse" else "writing"
                tasks[phase] = bar.add_task(label, total=total, where="")
            bar.update(tasks[phase], completed=done, total=total, where=where[-50:])
            now = time.monotonic()
            if now - last[0] > 0.1 or done == total:
                last[0] = now
                bar.refresh()

        return run(progress)


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


def _report(summary: Summary, args: argparse.Namespace, reached: dict[str, tuple[int, int]]) -> int:
    import json

    from repodoc_lsp.store.discover import capped

    out = sys.stdout
    if summary.cancelled and "write" not in reached and not args.json:
        done, total = reached.get("analyse", (0, 0))
        kept = "not cached: --no-cache" if args.no_cache else "kept in the cache, so the next run starts from there"
        say(f"repodoc: interrupted while analysing: {done} of {plural(total, 'file')} analysed ({kept}), "
            f"no page written, {summary.seconds:.2f} s", sys.stderr)
        return EXIT_INTERRUPTED
    if args.json:
        out.write(json_text(json.dumps(summary.as_dict(), indent=2)) + "\n")
    else:
        for e in summary.errors:
            say(f"repodoc: error: {Path(summary.out, e.page)}: {e.reason} (the previous page is kept)", sys.stderr)
        for a in summary.set_aside:
            say(f"repodoc: overwritten: {Path(summary.out, a.page)}: {a.reason}", sys.stderr)
        for c in summary.conflicts:
            say(f"repodoc: conflict: {Path(summary.out, c.page)}: {c.reason} (left as it is)", sys.stderr)
        if args.verbose:
            for skip in summary.skipped:
                say(f"repodoc: skipped: {skip.path}: {skip.reason}", sys.stderr)
        for s in summary.stale:
            say(f"stale: {Path(summary.out, s.page)}: {s.reason}", out)
        if (cap := capped(summary.skipped)) is not None:
            say(f"repodoc: warning: {summary.root} has {cap.reason}", sys.stderr)
        reasons = Counter(_reason_kind(s.reason) for s in summary.skipped)
        skipped = f"{len(summary.skipped)} skipped"
        if reasons:
            skipped += " (" + ", ".join(f"{n} {why}" for why, n in sorted(reasons.items())) + ")"
        if args.check:
            verdict = "up to date" if not summary.stale else f"{plural(len(summary.stale), 'page')} stale"
            if summary.conflicts:
                verdict += f", {plural(len(summary.conflicts), 'conflict')}"
            say(f"repodoc: {plural(summary.files, 'file')} analysed, {verdict}, {skipped}, "
                f"{summary.seconds:.2f} s", out)
        else:
            say(f"repodoc: {plural(summary.files, 'file')} analysed ({summary.analysed} parsed, "
                f"{summary.cached} from cache), {plural(len(summary.written), 'page')} written, "
                f"{summary.unchanged} unchanged, {len(summary.removed)} removed, {skipped}, "
                f"{plural(len(summary.conflicts), 'conflict')}, {plural(len(summary.errors), 'error')}, "
                f"{summary.seconds:.2f} s -> {summary.out}", out)
    if summary.cancelled:
        done, total = reached.get("write", (0, 0))
        say(f"repodoc: interrupted while writing: {done} of {plural(total, 'page')} done; pages written so far are "
            "complete", sys.stderr)
        return EXIT_INTERRUPTED
    if summary.errors:
        return EXIT_OUTPUT
    if args.check and (summary.stale or summary.conflicts):
        return EXIT_STALE
    return EXIT_OK


def _reason_kind(reason: str) -> str:
    return reason.split(" (", 1)[0].split(":", 1)[0]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
